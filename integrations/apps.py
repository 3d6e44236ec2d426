from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Integrações"

    def ready(self) -> None:
        from integrations import signals  # noqa: F401  (connects the post_save receivers)
