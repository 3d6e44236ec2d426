"""Macros for the tests, made through the service."""

from integrations.models import WebhookEvent
from macros.models import Macro
from macros.services import MacroValues, macro_create


def make_macro(organization, **values) -> Macro:
    values.setdefault("name", f"Macro {Macro.objects.count() + 1}")
    return macro_create(organization_id=organization.pk, values=MacroValues(**values))


def event_kinds(ticket=None) -> list[str]:
    """The events written, in the order of the feed (a ticket's only, when given)."""
    events = WebhookEvent.objects.order_by("change_tx", "change_seq")
    if ticket is not None:
        events = events.filter(body__contains=str(ticket.pk))
    return list(events.values_list("kind", flat=True))
