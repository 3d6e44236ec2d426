"""Reads of custom fields: an organization's definitions (cached, so a list asking for `campos` or filtering by
`campo.<chave>` runs the statements it runs without them) and the conditions of the list's filters."""

import logging
from dataclasses import dataclass

from django.core.cache import cache
from django.db import transaction
from django.db.models import Q, QuerySet

from helpdesk.selectors import object_by_id
from tickets.exceptions import CustomFieldNotFound
from tickets.fields.values import TEXT_INDEXED_LENGTH, FieldDefinition
from tickets.models import CustomField, CustomFieldType, TicketFieldValue

logger = logging.getLogger(__name__)

DEFINITIONS_CACHE_SECONDS = 300
_COLUMNS = (
    "id",
    "key",
    "name",
    "type",
    "options",
    "visible_to_partner",
    "editable_by_partner",
    "is_active",
)


def _cache_key(organization_id) -> str:
    return f"tickets:custom-fields:{organization_id}"


def _read(organization_id) -> tuple[FieldDefinition, ...]:
    rows = CustomField.objects.filter(organization_id=organization_id).order_by("created_at", "key")
    return tuple(
        FieldDefinition(
            id=str(row[0]),
            key=row[1],
            name=row[2],
            type=row[3],
            options=tuple(row[4] or ()),
            visible_to_partner=row[5],
            editable_by_partner=row[6],
            is_active=row[7],
        )
        for row in rows.values_list(*_COLUMNS)
    )


def field_definitions(organization_id, *, fresh: bool = False) -> tuple[FieldDefinition, ...]:
    """Every custom field of the organization, in creation order. Read API answers take them from the cache
    (forgotten by every write of a definition, field_definitions_forget); `fresh` reads the database (writes,
    and the blocks an event freezes)."""
    if fresh:
        return _read(organization_id)
    key = _cache_key(organization_id)
    try:
        cached = cache.get(key)
    except Exception:  # the cache is an accelerator; the database answers when it is down
        logger.warning("cache unavailable for %s", key, exc_info=True)
        cached = None
    if cached is not None:
        return cached
    definitions = _read(organization_id)
    try:
        cache.set(key, definitions, DEFINITIONS_CACHE_SECONDS)
    except Exception:
        logger.warning("cache unavailable for %s", key, exc_info=True)
    return definitions


def field_definitions_forget(organization_id) -> None:
    """Now, and again once the change commits. A read that loaded the old definitions before the commit and stores
    them after the second drop keeps them until they expire (DEFINITIONS_CACHE_SECONDS)."""

    def forget() -> None:
        try:
            cache.delete(_cache_key(organization_id))
        except Exception:
            logger.warning("could not drop the cached custom fields of %s", organization_id, exc_info=True)

    forget()
    transaction.on_commit(forget)


def fields_shown(organization_id, *, fresh: bool = False) -> tuple[FieldDefinition, ...]:
    """The fields a partner sees (visible and active), in order."""
    return tuple(d for d in field_definitions(organization_id, fresh=fresh) if d.shown_to_partner)


def fields_by_key(organization_id, *, partner: bool, fresh: bool = False) -> dict[str, FieldDefinition]:
    """The fields a door knows by key: the partner's are the visible ones (a hidden key is an unknown one);
    agents know every field."""
    return definitions_by_key(field_definitions(organization_id, fresh=fresh), partner=partner)


def definitions_by_key(definitions: tuple[FieldDefinition, ...], *, partner: bool) -> dict[str, FieldDefinition]:
    """fields_by_key of definitions already read."""
    return {d.key: d for d in definitions if d.visible_to_partner or not partner}


def custom_field_list(*, organization) -> QuerySet[CustomField]:
    return CustomField.objects.filter(organization=organization).order_by("created_at", "key")


def custom_field_get(*, organization, field_id) -> CustomField:
    """Another organization's field answers exactly like a missing one."""
    return object_by_id(CustomField.objects.filter(organization=organization), field_id, missing=CustomFieldNotFound)


def shown_values(definitions: tuple[FieldDefinition, ...], values: dict | None) -> dict:
    """A ticket's `campos`: the values of these fields it has, in the fields' order."""
    values = values or {}
    return {d.key: values[d.key] for d in definitions if d.key in values}


@dataclass(frozen=True)
class FieldFilter:
    """One `campo.<chave>` condition of the list: equal to `value` (`multilista`: containing it), or from
    `low` to `high` (`numero` and `data`), both ends included."""

    definition: FieldDefinition
    value: object = None
    low: object = None
    high: object = None


def field_filter_condition(field_filter: FieldFilter) -> Q:
    """The tickets a filter selects, as `id IN (<the field's value rows>)`: one range of an index that starts
    with the field (TicketFieldValue's), which belongs to one organization."""
    condition = Q(pk__in=_value_rows(field_filter).values("ticket_id"))
    if _needs_whole_text(field_filter):
        # The rows keep a text's first characters: a longer one is compared whole on the ticket too.
        condition &= Q(**{f"custom_fields__{field_filter.definition.key}": field_filter.value})
    return condition


def _needs_whole_text(field_filter: FieldFilter) -> bool:
    return field_filter.definition.type == CustomFieldType.TEXT and len(field_filter.value) > TEXT_INDEXED_LENGTH


def field_filters_count(filters: tuple[FieldFilter, ...]) -> int | None:
    """How many tickets the field filters select together, counted on the value rows' indexes alone (an
    index-only scan, no ticket read): each selects at most one row per ticket (one value per field; a
    `multilista` option once). None when a filter must read the tickets (a text longer than the index keeps)."""
    if not filters or any(_needs_whole_text(field_filter) for field_filter in filters):
        return None
    rows = [_value_rows(field_filter).values("ticket_id") for field_filter in filters]
    return rows[0].count() if len(rows) == 1 else rows[0].intersection(*rows[1:]).count()


def _value_rows(field_filter: FieldFilter) -> QuerySet[TicketFieldValue]:
    definition = field_filter.definition
    rows = TicketFieldValue.objects.filter(field_id=definition.id)
    column = {CustomFieldType.NUMBER: "number", CustomFieldType.DATE: "date"}.get(definition.type, "text")
    if field_filter.value is not None:
        value = field_filter.value
        if definition.type == CustomFieldType.BOOLEAN:
            value = "true" if value else "false"
        elif definition.type == CustomFieldType.TEXT:
            value = value[:TEXT_INDEXED_LENGTH]
        rows = rows.filter(**{column: value})
    if field_filter.low is not None:
        rows = rows.filter(**{f"{column}__gte": field_filter.low})
    if field_filter.high is not None:
        rows = rows.filter(**{f"{column}__lte": field_filter.high})
    return rows.order_by()
