from django.apps import AppConfig
from django.db.models.signals import post_migrate


class TicketsConfig(AppConfig):
    name = "tickets"
    verbose_name = "Tickets"

    def ready(self) -> None:
        from tickets import audit, checks, lifecycle, receivers  # noqa: F401  (registers the checks, connects the receivers)
        from tickets.counts import count_triggers_ensure

        post_migrate.connect(count_triggers_ensure, sender=self, dispatch_uid="tickets.counts.triggers")
