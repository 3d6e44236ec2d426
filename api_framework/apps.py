from django.apps import AppConfig


class ApiFrameworkConfig(AppConfig):
    """Installed so that the OpenAPI extensions are registered before any schema is generated; no models."""

    name = "api_framework"
    verbose_name = "API"

    def ready(self) -> None:
        from api_framework import schema  # noqa: F401  (registers the OpenAPI extensions)
