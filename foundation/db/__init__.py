"""What the apps' hand-written SQL takes from the models: table and column names, choice literals, parameter
values. A renamed table, column or choice is followed, as the ORM's own SQL follows it."""

import enum

from django.db import connection as default_connection


def db_value(model, field_name: str, value, *, connection=default_connection):
    """`value` as the database stores `model`'s field (a UUID as text on SQLite, and so on): a parameter
    for hand-written SQL."""
    return model._meta.get_field(field_name).get_db_prep_value(value, connection)


def _quote(name: str) -> str:
    return default_connection.ops.quote_name(name)


class Table:
    """A model's table as hand-written SQL names it: `{t}` is the table, `{t.status}` the column of the field
    `status` (`{t.webhook}` is webhook_id), quoted. With an alias, `{t}` is `"table" AS alias` and each
    column is qualified by the alias (`alias."status"`)."""

    def __init__(self, model, alias: str | None = None):
        self._meta = model._meta
        self._alias = alias

    def __str__(self) -> str:
        table = _quote(self._meta.db_table)
        return f"{table} AS {self._alias}" if self._alias else table

    def __getattr__(self, name: str) -> str:
        if name.startswith("_"):
            raise AttributeError(name)
        column = _quote(self._meta.get_field(name).column)
        return f"{self._alias}.{column}" if self._alias else column


class SQL(str):
    """A piece of SQL made by model_sql: placed as it is into another statement."""


def model_sql(template: str, **names) -> SQL:
    """`template` with its `{name}`s filled in: a model class (its Table), a Table (an alias), a choice (its
    value as a string literal: a partial index's predicate matches a literal, not a parameter) or an SQL
    piece. Everything placed comes from code, never from a request; values stay `%s` parameters."""
    return SQL(template.format(**{name: _placed(value) for name, value in names.items()}))


def _placed(value):
    if isinstance(value, Table | SQL):
        return value
    if isinstance(value, enum.Enum) and isinstance(value.value, str) and "%" not in value.value:
        return "'" + value.value.replace("'", "''") + "'"
    if isinstance(value, type) and hasattr(value, "_meta"):
        return Table(value)
    raise TypeError(f"model_sql places models, tables, choices and SQL pieces, not {value!r}")
