from django.apps import AppConfig
from django.db.backends.signals import connection_created


class HelpdeskConfig(AppConfig):
    name = "helpdesk"
    verbose_name = "Central de atendimento"

    def ready(self) -> None:
        from helpdesk.api import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from helpdesk.sqlite import install_unicode_like

        connection_created.connect(install_unicode_like, dispatch_uid="helpdesk.sqlite.unicode_like")
