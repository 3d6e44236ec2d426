"""Deployment checks: settings that work on one machine and break, or open a hole, in production.

Django runs them in every management command; config/startup.py runs them when the web server,
a worker or beat starts, so a misconfigured process refuses to start instead of serving.
"""

import ipaddress

from django.conf import settings
from django.core.checks import Error, Warning, register


@register(deploy=False)
def keys_from_the_environment_with_a_shared_database(app_configs, **kwargs):
    shared_database = settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3"
    if shared_database and not settings.DEBUG and not settings.KEYS_FROM_ENVIRONMENT:
        return [
            Error(
                "SECRET_KEY and JWT_SIGNING_KEY must come from the environment with a shared database.",
                hint="A key generated into DATA_DIR belongs to one machine: sessions, signed links and panel "
                "tokens made on one would fail on another. Set both, the same on every machine "
                "(docs/operations.md, 'Keys and secrets').",
                id="helpdesk.E001",
            )
        ]
    return []


@register(deploy=True)
def client_address_header_without_a_trusted_proxy(app_configs, **kwargs):
    """Upgrading with CLIENT_IP_META_KEY set and the proxy on another machine would count every client as the
    proxy's address (the header is believed from TRUSTED_PROXIES only): one login budget for everyone."""
    if settings.RATELIMIT_IP_META_KEY == "REMOTE_ADDR":
        return []
    networks = [ipaddress.ip_network(entry.strip(), strict=False) for entry in settings.TRUSTED_PROXIES]
    if any(not network.is_loopback for network in networks):
        return []
    return [
        Warning(
            "CLIENT_IP_META_KEY is set, but TRUSTED_PROXIES names no proxy beyond this machine.",
            hint="The header is believed only from TRUSTED_PROXIES; from a proxy on another machine every "
            "client would count as the proxy's address. Name the proxy's address in TRUSTED_PROXIES, or "
            "silence helpdesk.W001 when it runs on this machine (docs/operations.md, 'The client address').",
            id="helpdesk.W001",
        )
    ]
