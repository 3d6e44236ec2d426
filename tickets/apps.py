from django.apps import AppConfig


class TicketsConfig(AppConfig):
    name = "tickets"
    verbose_name = "Tickets"

    def ready(self) -> None:
        from tickets import audit, checks, lifecycle, receivers  # noqa: F401  (registers the checks, connects the receivers)
