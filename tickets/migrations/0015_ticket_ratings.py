"""Satisfaction ratings (issue 23, part 5): the ratings' table, and on the ticket its resolution count (each a
rating cycle), the agent who resolved it and the current cycle's rating. The ticket's columns are nullable or have a
constant default, its new index is built CONCURRENTLY on PostgreSQL (the FK columns take no index of their own).
A ticket resolved now, from before, counts one resolution by its assignee, so its customer can rate it; a batch of
tickets per transaction, moving none in the change list.
"""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

from foundation.batches import key_batches
from foundation.migration_operations import AddIndexConcurrentlyOnPostgreSQL

BATCH = 5000


def _count_resolutions(apps, schema_editor):
    Ticket = apps.get_model("tickets", "Ticket")
    for ids in key_batches(Ticket.objects.filter(resolved_at__isnull=False), BATCH):
        Ticket.objects.filter(pk__in=ids).update(resolution_count=1, resolved_by=models.F("assignee"))


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ("helpdesk", "0004_audit_record"),
        ("tickets", "0014_ticket_sla_clock"),
    ]

    operations = [
        migrations.AddField(
            model_name="ticket",
            name="resolution_count",
            field=models.PositiveIntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="ticket",
            name="resolved_by",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="helpdesk.agent",
            ),
        ),
        migrations.CreateModel(
            name="TicketRating",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("cycle", models.PositiveIntegerField(verbose_name="ciclo de resolução")),
                ("score", models.PositiveSmallIntegerField(verbose_name="nota")),
                ("comment", models.TextField(blank=True, verbose_name="comentário")),
                ("resolved_at", models.DateTimeField(blank=True, null=True, verbose_name="resolvido em")),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False, verbose_name="criado em"),
                ),
                ("updated_at", models.DateTimeField(auto_now=True, verbose_name="atualizado em")),
                (
                    "agent",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="ratings",
                        to="helpdesk.agent",
                        verbose_name="atendente",
                    ),
                ),
                (
                    "organization",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="helpdesk.organization",
                        verbose_name="organização",
                    ),
                ),
                (
                    "ticket",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="ratings",
                        to="tickets.ticket",
                        verbose_name="ticket",
                    ),
                ),
            ],
            options={
                "verbose_name": "avaliação",
                "verbose_name_plural": "avaliações",
            },
        ),
        migrations.AddField(
            model_name="ticket",
            name="current_rating",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="tickets.ticketrating",
            ),
        ),
        AddIndexConcurrentlyOnPostgreSQL(
            model_name="ticket",
            index=models.Index(fields=["organization", "resolved_by", "resolved_at"], name="ticket_org_resolver"),
        ),
        migrations.AddIndex(
            model_name="ticketrating",
            index=models.Index(fields=["organization", "created_at"], name="rating_org_created"),
        ),
        migrations.AddConstraint(
            model_name="ticketrating",
            constraint=models.UniqueConstraint(fields=("ticket", "cycle"), name="rating_ticket_cycle_unique"),
        ),
        migrations.RunPython(_count_resolutions, migrations.RunPython.noop, elidable=True),
    ]
