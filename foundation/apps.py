from django.apps import AppConfig
from django.core.signals import request_finished
from django.db.backends.signals import connection_created


class FoundationConfig(AppConfig):
    """Installed for its deployment checks and its signal hooks; it has no models."""

    name = "foundation"
    verbose_name = "Fundação"

    def ready(self) -> None:
        from foundation import checks  # noqa: F401  (registers the deployment checks)
        from foundation.db.sqlite import install_unicode_like
        from foundation.request_log import forget_request

        connection_created.connect(install_unicode_like, dispatch_uid="foundation.db.sqlite.unicode_like")
        request_finished.connect(forget_request, dispatch_uid="foundation.request_log.forget_request")
