"""System checks of the webhook settings: what must never reach production."""

from django.conf import settings
from django.core.checks import Error, register


@register()
def private_networks_only_in_development(app_configs, **kwargs):
    if settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE and not settings.DEBUG:
        return [
            Error(
                "WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE is on with DEBUG off: webhooks could reach private, "
                "link-local and cloud metadata addresses.",
                hint="Turn it off; it exists for development on a private network only.",
                id="integrations.E001",
            )
        ]
    return []


@register()
def insecure_urls_only_in_development(app_configs, **kwargs):
    if settings.WEBHOOK_ALLOW_INSECURE_URLS and not settings.DEBUG:
        return [
            Error(
                "WEBHOOK_ALLOW_INSECURE_URLS is on with DEBUG off: webhooks could be sent over plain http "
                "and to this machine's own services.",
                hint="Turn it off in production. Test harnesses that need a receiver on this machine silence "
                "this check explicitly (SILENCED_SYSTEM_CHECKS=integrations.E002).",
                id="integrations.E002",
            )
        ]
    return []
