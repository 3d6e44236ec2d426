"""Database helpers shared by the apps' hand-written SQL."""

from django.db import connection


def db_value(model, field_name: str, value):
    """`value` as the database stores `model`'s field (a UUID as text on SQLite, and so on): a parameter
    for hand-written SQL."""
    return model._meta.get_field(field_name).get_db_prep_value(value, connection)
