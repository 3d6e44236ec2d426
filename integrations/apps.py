from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Integrações"

    def ready(self) -> None:
        from integrations import checks, receivers  # noqa: F401  (registers the checks, connects the receivers)
