"""Indexes of the partner list's lookups and orders (issue 21): a requester's tickets, newest first; and
atualizado_em with the number, which answers `atualizado_desde`, the orders by atualizado_em (and their
keyset) and where a change list asked from a timestamp starts, in place of (organization, updated_at).

On PostgreSQL each index is built and dropped CONCURRENTLY, so a large organization keeps writing while it
builds (the new one is made before the old one goes); elsewhere (SQLite) they are plain.
"""

from django.db import migrations, models

from foundation.migration_operations import AddIndexConcurrentlyOnPostgreSQL, RemoveIndexConcurrentlyOnPostgreSQL


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
