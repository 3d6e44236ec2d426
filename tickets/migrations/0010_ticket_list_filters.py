"""Indexes of the partner list's lookups and orders (issue 21): a requester's tickets, newest first; and
atualizado_em with the number, which answers `atualizado_desde`, the orders by atualizado_em (and their
keyset) and where a change list asked from a timestamp starts, in place of (organization, updated_at).

On PostgreSQL each index is built and dropped CONCURRENTLY, so a large organization keeps writing while it
builds (the new one is made before the old one goes); elsewhere (SQLite) they are plain.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class AddIndexConcurrentlyOnPostgreSQL(AddIndexConcurrently):
    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            migrations.AddIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            migrations.AddIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


class RemoveIndexConcurrentlyOnPostgreSQL(RemoveIndexConcurrently):
    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
        else:
            migrations.RemoveIndex.database_forwards(self, app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
        else:
            migrations.RemoveIndex.database_backwards(self, app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("helpdesk", "0004_audit_record"),
        ("tickets", "0009_attachment_usage"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="ticket",
            index=models.Index(
                fields=["organization", "requester", "-created_at", "-number"], name="ticket_org_requester"
            ),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="ticket",
            index=models.Index(fields=["organization", "updated_at", "number"], name="ticket_org_updated_number"),
        ),
        RemoveIndexConcurrentlyOnPostgreSQL(model_name="ticket", name="ticket_org_updated"),
    ]
