"""What each type of custom field accepts, and the one form each value is kept and shown in.

A value as the API writes it (and as `Ticket.custom_fields` keeps it): `texto` a string of at most 1,000
characters; `numero` a string of the decimal (`"12.5"`: exact, never a binary float; a JSON number is taken
too), `data` an ISO date (`"2025-01-31"`), `booleano` true or false, `lista` one of the options, `multilista`
a list of options, each once, in the definition's order. Pure functions: no query.
"""

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from tickets.models import CustomFieldType

TEXT_MAX_LENGTH = 1000
KEY_RE = re.compile(r"[a-z0-9_]{1,40}")
NUMBER_RE = re.compile(r"-?[0-9]{1,18}(\.[0-9]{1,6})?")
INTEGER_DIGITS, DECIMAL_PLACES = 18, 6
# The types a range (`campo.<chave>__de`, `__ate`) applies to.
RANGED_TYPES = frozenset({CustomFieldType.NUMBER, CustomFieldType.DATE})
LIST_TYPES = frozenset({CustomFieldType.CHOICE, CustomFieldType.MULTIPLE_CHOICE})
TEXT_INDEXED_LENGTH = 255  # what TicketFieldValue.text keeps of a text


@dataclass(frozen=True)
class FieldDefinition:
    """A CustomField as the API reads it (cached per organization by tickets.fields.selectors)."""

    id: str
    key: str
    name: str
    type: str
    options: tuple[str, ...]
    visible_to_partner: bool
    editable_by_partner: bool
    is_active: bool

    @property
    def shown_to_partner(self) -> bool:
        """What the `campos` block, the events and the partner's filters know of."""
        return self.visible_to_partner and self.is_active


class BadValue(ValueError):
    """A value the field's type does not take; its message says what is expected."""


def expected(definition: FieldDefinition) -> str:
    """The 422's message for a value of the wrong type: what the field takes."""
    options = ", ".join(definition.options)
    return {
        CustomFieldType.TEXT: f"Informe um texto de até {TEXT_MAX_LENGTH} caracteres.",
        CustomFieldType.NUMBER: (
            'Informe um número decimal (por exemplo, 12 ou "12.50"), com até 18 dígitos antes do ponto e 6 depois.'
        ),
        CustomFieldType.DATE: "Informe uma data no formato AAAA-MM-DD (ISO 8601).",
        CustomFieldType.BOOLEAN: "Informe true ou false.",
        CustomFieldType.CHOICE: f"Informe uma das opções: {options}.",
        CustomFieldType.MULTIPLE_CHOICE: f"Informe uma lista de opções dentre: {options}.",
    }[definition.type]


def clean(definition: FieldDefinition, value):
    """The value as kept and shown (the module's forms), from a JSON value of a request body; BadValue when the
    type does not take it. An empty `multilista` is None (no value), as null is."""
    return _CLEANERS[definition.type](definition, value)


def _text(definition: FieldDefinition, value) -> str:
    if not isinstance(value, str) or len(value) > TEXT_MAX_LENGTH or "\x00" in value:
        raise BadValue(expected(definition))
    return value


def _number(definition: FieldDefinition, value) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise BadValue(expected(definition))
    return number_text(definition, value)


def _date(definition: FieldDefinition, value) -> str:
    if not isinstance(value, str):
        raise BadValue(expected(definition))
    return date_of(definition, value).isoformat()


def _boolean(definition: FieldDefinition, value) -> bool:
    if not isinstance(value, bool):
        raise BadValue(expected(definition))
    return value


def _choice(definition: FieldDefinition, value) -> str:
    if not isinstance(value, str) or value not in definition.options:
        raise BadValue(expected(definition))
    return value


def _choices(definition: FieldDefinition, value) -> list[str] | None:
    if not isinstance(value, list) or any(
        not isinstance(item, str) or item not in definition.options for item in value
    ):
        raise BadValue(expected(definition))
    chosen = set(value)
    return [option for option in definition.options if option in chosen] or None


_CLEANERS = {
    CustomFieldType.TEXT: _text,
    CustomFieldType.NUMBER: _number,
    CustomFieldType.DATE: _date,
    CustomFieldType.BOOLEAN: _boolean,
    CustomFieldType.CHOICE: _choice,
    CustomFieldType.MULTIPLE_CHOICE: _choices,
}


def number_text(definition: FieldDefinition, value) -> str:
    """A decimal's one spelling: no exponent, no trailing zeros (`10.50` and 10.5 are `"10.5"`)."""
    try:
        number = Decimal(value.strip() if isinstance(value, str) else str(value))
    except (InvalidOperation, ValueError):
        raise BadValue(expected(definition)) from None
    if not number.is_finite():
        raise BadValue(expected(definition))
    text = format(number.normalize(), "f") if number else "0"
    if not NUMBER_RE.fullmatch(text):
        raise BadValue(expected(definition))
    return text


def date_of(definition: FieldDefinition, value: str) -> date:
    try:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        raise BadValue(expected(definition)) from None


def query_value(definition: FieldDefinition, text: str):
    """A value of `campo.<chave>` (a query string's text) in the form clean() keeps: for `multilista`, one option
    (the tickets whose list contains it); `booleano` is `true` or `false`."""
    if definition.type == CustomFieldType.BOOLEAN:
        if text not in ("true", "false"):
            raise BadValue(expected(definition))
        return text == "true"
    if definition.type == CustomFieldType.NUMBER:
        return number_text(definition, text)
    if definition.type == CustomFieldType.MULTIPLE_CHOICE:
        if text not in definition.options:
            raise BadValue(f"Informe uma das opções: {', '.join(definition.options)}.")
        return text
    return clean(definition, text)


def value_columns(definition: FieldDefinition, value) -> list[dict]:
    """The TicketFieldValue columns of a kept value: one row, or one per option of a `multilista`."""
    kind = definition.type
    if kind == CustomFieldType.MULTIPLE_CHOICE:
        return [{"text": option} for option in value]
    if kind == CustomFieldType.NUMBER:
        return [{"number": Decimal(value)}]
    if kind == CustomFieldType.DATE:
        return [{"date": date.fromisoformat(value)}]
    if kind == CustomFieldType.BOOLEAN:
        return [{"text": "true" if value else "false"}]
    return [{"text": value[:TEXT_INDEXED_LENGTH]}]
