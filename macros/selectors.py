"""Reads of macros: always within one organization."""

from django.db.models import QuerySet

from helpdesk.selectors import object_by_id
from macros.exceptions import MacroNotFound
from macros.models import Macro


def macro_list(*, organization_id) -> QuerySet[Macro]:
    """The organization's macros by name (one statement: the list needs no other row)."""
    return Macro.objects.filter(organization_id=organization_id).order_by("name", "id")


def macro_get(*, organization_id, macro_id) -> Macro:
    """Another organization's macro (or a malformed id) answers exactly like a missing one."""
    return object_by_id(
        Macro.objects.filter(organization_id=organization_id).select_related("status", "assignee"),
        macro_id,
        missing=MacroNotFound,
    )
