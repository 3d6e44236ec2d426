"""The SLA clock on the ticket (issue 23): its JSON, the version of the settings it follows, the next deadline and
80% instant, the breached flag, and the metrics of `incluir=metricas`. Every column is nullable or has a constant
default, which PostgreSQL adds without rewriting the table; the indexes of `sla=` are built CONCURRENTLY there, so
writes go on meanwhile. The replies' counts and the first agent reply are filled from the replies, a batch of
tickets per transaction (a backfill moves no ticket in the change list: nothing a partner sees changed). Tickets
opened before keep a null clock until their next change (tickets.service_levels adopts them).
"""

from django.db import migrations, models
from django.db.models import Count, Min, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from foundation.batches import key_batches
from foundation.migration_operations import AddIndexConcurrentlyOnPostgreSQL

BATCH = 5000


def _count_replies(apps, schema_editor):
    Ticket = apps.get_model("tickets", "Ticket")
    Reply = apps.get_model("tickets", "Reply")
    public = Reply.objects.filter(ticket=OuterRef("pk"), is_internal=False).order_by().values("ticket")
    agent = Q(origin="agente")

    def tally(expression):
        return Subquery(public.annotate(value=expression).values("value")[:1])

    for ids in key_batches(Ticket.objects.all(), BATCH):
        Ticket.objects.filter(pk__in=ids).update(
            first_response_at=tally(Min("created_at", filter=agent)),
            agent_reply_count=Coalesce(tally(Count("pk", filter=agent)), 0),
            customer_reply_count=Coalesce(tally(Count("pk", filter=~agent)), 0),
        )


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("helpdesk", "0004_audit_record"),
        ("tickets", "0013_custom_fields"),
    ]

    operations = [
        migrations.AddField(
            model_name="ticket",
            name="agent_reply_count",
            field=models.PositiveIntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="ticket",
            name="customer_reply_count",
            field=models.PositiveIntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="ticket",
            name="first_response_at",
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name="primeira resposta em"),
        ),
        migrations.AddField(
            model_name="ticket",
            name="first_response_minutes",
            field=models.PositiveIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="ticket",
            name="reopen_count",
            field=models.PositiveIntegerField(db_default=0, default=0, editable=False, verbose_name="reaberturas"),
        ),
        migrations.AddField(
            model_name="ticket",
            name="resolution_minutes",
            field=models.PositiveIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="ticket",
            name="sla_breached",
            field=models.BooleanField(db_default=False, default=False, editable=False, verbose_name="SLA violado"),
        ),
        migrations.AddField(
            model_name="ticket",
            name="sla_clock",
            field=models.JSONField(blank=True, editable=False, null=True, verbose_name="SLA"),
        ),
        migrations.AddField(
            model_name="ticket",
            name="sla_due_at",
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name="próximo prazo"),
        ),
        migrations.AddField(
            model_name="ticket",
            name="sla_risk_at",
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name="em risco a partir de"),
        ),
        migrations.AddField(
            model_name="ticket",
            name="sla_version",
            field=models.CharField(blank=True, db_default="", default="", editable=False, max_length=80),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="ticket",
            index=models.Index(
                condition=models.Q(("sla_due_at__isnull", False)),
                fields=["organization", "sla_due_at"],
                name="ticket_org_sla_due",
            ),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="ticket",
            index=models.Index(
                condition=models.Q(("sla_risk_at__isnull", False)),
                fields=["organization", "sla_risk_at"],
                name="ticket_org_sla_risk",
            ),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="ticket",
            index=models.Index(
                condition=models.Q(("sla_breached", True)), fields=["organization"], name="ticket_org_sla_breached"
            ),
        ),
        migrations.AddField(
            model_name="ticket",
            name="sla_event_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="ticket",
            index=models.Index(
                condition=models.Q(("sla_event_at__isnull", False)), fields=["sla_event_at"], name="ticket_sla_event"
            ),
        ),
        migrations.RunPython(_count_replies, migrations.RunPython.noop, elidable=True),
    ]
