from django.apps import AppConfig


class TicketsConfig(AppConfig):
    name = "tickets"
    verbose_name = "Tickets"

    def ready(self) -> None:
        from tickets import signals  # noqa: F401  (connects the post_save receivers)
