"""A ticket's tags (issue 22): a JSON array on the ticket row, `[]` by default, and on PostgreSQL a GIN index
(jsonb_path_ops) that answers `tags @> '["a","b"]'`, the list's `?tag=a&tag=b`.

PostgreSQL adds a column with a constant default without rewriting the table, and builds the index
CONCURRENTLY, so writes go on meanwhile. SQLite has no GIN: its `?tag=` reads json_each (tickets.tags), and
it rebuilds the table for the column, as for any column it adds this way (tickets.counts makes the counting
triggers again after the migration).
"""

from django.db import migrations, models

GIN_INDEX = "ticket_tags_gin"


def _create_gin(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {GIN_INDEX} ON tickets_ticket USING gin (tags jsonb_path_ops)"
        )


def _drop_gin(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {GIN_INDEX}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("tickets", "0011_contacts_partner_api"),
    ]

    operations = [
        migrations.AddField(
            model_name="ticket",
            name="tags",
            field=models.JSONField(
                blank=True,
                db_default=models.Value([], output_field=models.JSONField()),
                default=list,
                verbose_name="tags",
            ),
        ),
        migrations.RunPython(_create_gin, _drop_gin, elidable=False),
    ]
