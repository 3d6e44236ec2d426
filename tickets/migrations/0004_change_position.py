"""Each ticket's place in the change list (foundation.feeds), and the index a timestamp start needs.

On PostgreSQL the column defaults give existing tickets a place each (the migration's transaction
id, a value of the shared sequence). SQLite's defaults are 0: existing tickets are numbered within
their organization, oldest change first, before the uniqueness of a place is enforced.
"""

from django.db import migrations, models

import foundation.feeds


def number_existing_tickets(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        return
    Ticket = apps.get_model("tickets", "Ticket")
    numbered, last = [], {}
    for ticket in Ticket.objects.order_by("organization_id", "updated_at", "id").only("id", "organization_id"):
        last[ticket.organization_id] = ticket.change_seq = last.get(ticket.organization_id, 0) + 1
        numbered.append(ticket)
    Ticket.objects.bulk_update(numbered, ["change_seq"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("helpdesk", "0003_change_sequence"),
        ("tickets", "0003_search_trigram_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="ticket",
            name="change_seq",
            field=models.BigIntegerField(db_default=foundation.feeds.ChangeSequenceDefault(), editable=False),
        ),
        migrations.AddField(
            model_name="ticket",
            name="change_tx",
            field=models.BigIntegerField(db_default=foundation.feeds.ChangeTransaction(), editable=False),
        ),
        migrations.RunPython(number_existing_tickets, migrations.RunPython.noop, elidable=False),
        migrations.AddIndex(
            model_name="ticket",
            index=models.Index(fields=["organization", "updated_at"], name="ticket_org_updated"),
        ),
        migrations.AddConstraint(
            model_name="ticket",
            constraint=models.UniqueConstraint(
                fields=("organization", "change_tx", "change_seq"), name="ticket_org_change_position"
            ),
        ),
    ]
