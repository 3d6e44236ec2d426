"""The product's models without the product's apps' start-up hooks.

The reference reads the same tables through the same model classes, so it
registers the model modules under their own labels, but none of the product's
AppConfig.ready() side effects (schema extensions, signal receivers).
"""

from django.apps import AppConfig


class HelpdeskModels(AppConfig):
    name = "helpdesk"
    label = "helpdesk"
    default_auto_field = "django.db.models.BigAutoField"


class TicketsModels(AppConfig):
    name = "tickets"
    label = "tickets"
    default_auto_field = "django.db.models.BigAutoField"


class SlaModels(AppConfig):
    name = "sla"
    label = "sla"
    default_auto_field = "django.db.models.BigAutoField"
