"""The sequence behind change_seq of every change feed (foundation.feeds), on PostgreSQL.

SQLite numbers changes per organization inside each write and needs no sequence.
"""

from django.db import migrations

from foundation.feeds import CHANGE_SEQUENCE


def create_sequence(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"CREATE SEQUENCE IF NOT EXISTS {CHANGE_SEQUENCE}")


def drop_sequence(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP SEQUENCE IF EXISTS {CHANGE_SEQUENCE}")


class Migration(migrations.Migration):
    dependencies = [("helpdesk", "0002_organization_is_active")]

    operations = [migrations.RunPython(create_sequence, drop_sequence, elidable=False)]
