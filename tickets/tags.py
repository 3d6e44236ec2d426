"""A ticket's tags: the rule of what a tag is, the limit per ticket, and the one condition that finds the tickets
carrying some tags on either database (docs/decisions.md, "Tags on tickets (issue 22)").

A tag is text, normalised on the way in, whatever door it comes through: trimmed, case-folded (Unicode
`str.casefold`: "Urgente" and "URGENTE" are one tag, "Straße" is "strasse"), inner whitespace collapsed to one
`-` ("cliente  VIP" is "cliente-vip"); 1..50 characters after that; never NUL (PostgreSQL's jsonb cannot hold
it) nor a lone UTF-16 surrogate (no database can). A ticket holds at most MAX_TAGS, kept sorted and unique in
`Ticket.tags`, a JSON array.
"""

import json

from django.db import connection
from django.db.models import BooleanField, Func, Q, Value

from foundation.exceptions import ValidationFailed

MAX_TAGS = 20
MAX_TAG_LENGTH = 50
_NAMED_LENGTH = 60  # a refused tag is named in its message, up to this many characters


def tag_normalize(value: str) -> str:
    """The tag `value` is: trimmed, case-folded, inner whitespace as one `-` (not checked: tags_normalize)."""
    return "-".join(value.casefold().split())


def _named(value) -> str:
    """The refused value as a message names it: JSON (a text in quotes), long ones cut."""
    if isinstance(value, str) and len(value) > _NAMED_LENGTH:
        value = value[:_NAMED_LENGTH] + "…"
    return json.dumps(value, ensure_ascii=False)


def tag_invalid_message(value) -> str:
    """The 422 of one refused tag, naming it as given."""
    if not isinstance(value, str):
        return f"Tag inválida: {_named(value)} (uma tag é um texto)."
    if "\x00" in value or not _encodable(value):
        return f"Tag inválida: {_named(value)} (sem o caractere NUL nem surrogates UTF-16 isolados)."
    return f"Tag inválida: {_named(value)} (de 1 a {MAX_TAG_LENGTH} caracteres depois de normalizada)."


TOO_MANY_TAGS = f"Um ticket tem no máximo {MAX_TAGS} tags."
NOT_A_LIST = "Informe uma lista de tags."


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _valid(value) -> bool:
    if not isinstance(value, str) or "\x00" in value or not _encodable(value):
        return False
    return 1 <= len(tag_normalize(value)) <= MAX_TAG_LENGTH


def tags_normalize(values, *, field: str = "tags") -> list[str]:
    """The tags `values` names, normalised, each once, sorted; a 422 on `field` naming each refused one (every
    refused tag of the list, in the order given). Does not count them against MAX_TAGS: what counts is what the
    ticket ends up with (tags_check_count)."""
    if not isinstance(values, list | tuple):
        raise ValidationFailed({field: [NOT_A_LIST]})
    refused = [tag_invalid_message(value) for value in values if not _valid(value)]
    if refused:
        raise ValidationFailed({field: list(dict.fromkeys(refused))})
    return sorted({tag_normalize(value) for value in values})


def tags_check_count(tags: list[str]) -> None:
    """At most MAX_TAGS on a ticket: a 422 on `tags` (the ticket's tags, whichever list brought them)."""
    if len(tags) > MAX_TAGS:
        raise ValidationFailed({"tags": [TOO_MANY_TAGS]})


class _TagsContainAll(Func):
    """SQLite has no `contains` for JSON: every tag asked is a value of the ticket's array (json_each)."""

    output_field = BooleanField()

    def __init__(self, column, tags: list[str]):
        super().__init__(column, Value(json.dumps(tags)))

    def as_sql(self, compiler, connection, **extra_context):
        column_sql, column_params = compiler.compile(self.source_expressions[0])
        tags_sql, tags_params = compiler.compile(self.source_expressions[1])
        # Both parts are compiled expressions with their own parameters: no value is placed in the text.
        asked = f"SELECT 1 FROM json_each({tags_sql}) AS asked"  # noqa: S608
        has = f"SELECT has.value FROM json_each({column_sql}) AS has"  # noqa: S608
        return f"NOT EXISTS ({asked} WHERE asked.value NOT IN ({has}))", (*tags_params, *column_params)


def tags_condition(tags: list[str], column: str = "tags") -> Q:
    """The tickets carrying every one of `tags` (normalised): `tags @> '["a","b"]'` on PostgreSQL, which the GIN
    index (jsonb_path_ops) of tickets.migrations.0012 answers; the same rule with json_each on SQLite."""
    if connection.vendor == "postgresql":
        return Q(**{f"{column}__contains": list(tags)})
    return Q(_TagsContainAll(column, list(tags)))
