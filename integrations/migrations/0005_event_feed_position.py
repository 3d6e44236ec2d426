"""Each event's place in the event feed (foundation.feeds).

On PostgreSQL the column defaults give existing events a place each (the migration's transaction
id, a value of the shared sequence). SQLite's defaults are 0: existing events are numbered within
their organization, oldest first, before the uniqueness of a place is enforced.
"""

from django.db import migrations, models

import foundation.feeds


def number_existing_events(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        return
    WebhookEvent = apps.get_model("integrations", "WebhookEvent")
    numbered, last = [], {}
    for event in WebhookEvent.objects.order_by("organization_id", "created_at", "id").only("id", "organization_id"):
        last[event.organization_id] = event.change_seq = last.get(event.organization_id, 0) + 1
        numbered.append(event)
    WebhookEvent.objects.bulk_update(numbered, ["change_seq"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("helpdesk", "0003_change_sequence"),
        ("integrations", "0004_webhook_deliveries"),
    ]

    operations = [
        migrations.AddField(
            model_name="webhookevent",
            name="change_seq",
            field=models.BigIntegerField(db_default=foundation.feeds.ChangeSequenceDefault(), editable=False),
        ),
        migrations.AddField(
            model_name="webhookevent",
            name="change_tx",
            field=models.BigIntegerField(db_default=foundation.feeds.ChangeTransaction(), editable=False),
        ),
        migrations.RunPython(number_existing_events, migrations.RunPython.noop, elidable=False),
        migrations.AddConstraint(
            model_name="webhookevent",
            constraint=models.UniqueConstraint(
                fields=("organization", "change_tx", "change_seq"), name="event_org_feed_position"
            ),
        ),
    ]
