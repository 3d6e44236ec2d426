"""Contacts' e-mails get room for their lower-cased form (tickets.models.EMAIL_MAX_LENGTH).

Widening a varchar rewrites nothing on PostgreSQL, but an index on an expression of the column is rebuilt
under the ALTER's lock: the e-mail's trigram index (0003) is dropped and built again CONCURRENTLY around it,
so contacts stay writable (a search by e-mail reads without it meanwhile). SQLite has no such index.
"""

from django.db import migrations, models


def drop_email_trigram(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX CONCURRENTLY IF EXISTS contact_email_trgm")


def create_email_trigram(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS contact_email_trgm "
            "ON tickets_contact USING gin ((UPPER(email::text)) gin_trgm_ops)"
        )


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("tickets", "0016_merge"),
    ]

    operations = [
        migrations.RunPython(drop_email_trigram, create_email_trigram, elidable=False),
        migrations.AlterField(
            model_name="contact",
            name="email",
            field=models.EmailField(blank=True, max_length=508, verbose_name="e-mail"),
        ),
        migrations.RunPython(create_email_trigram, drop_email_trigram, elidable=False),
    ]
