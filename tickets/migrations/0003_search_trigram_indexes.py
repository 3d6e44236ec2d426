"""`busca` through trigram indexes on PostgreSQL (pg_trgm), built without blocking writes.

Each index matches the expression the search filters on (Django's icontains:
UPPER(column::text) LIKE UPPER(%term%)). SQLite has no such index: nothing to do there.
"""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

INDEXES = [
    ("ticket_subject_trgm", "tickets_ticket", "subject"),
    ("ticket_description_trgm", "tickets_ticket", "description"),
    ("contact_name_trgm", "tickets_contact", "name"),
    ("contact_email_trgm", "tickets_contact", "email"),
]


def create_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, table, column in INDEXES:
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} USING gin ((UPPER({column}::text)) gin_trgm_ops)"
        )


def drop_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _table, _column in INDEXES:
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("tickets", "0002_reply_created_at_default")]

    operations = [
        TrigramExtension(),
        migrations.RunPython(create_indexes, drop_indexes, elidable=False),
    ]
