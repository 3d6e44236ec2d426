"""The periodic recount of the ticket counters (tickets.models.TicketCount).

The database's triggers keep the counters in the transaction of every write, so a recount should
find nothing. It is there for what triggers cannot see: a restore of one table, a trigger dropped by
hand, a bug. It corrects only drift: stored and real counts are read in one snapshot (REPEATABLE READ
on PostgreSQL) and the difference is added, so a write committed meanwhile is never undone; a
recount that meets one on the same counter fails to serialize and is left to the next run.
"""

import importlib
import logging
import re
from dataclasses import dataclass

from django.conf import settings
from django.db import OperationalError, connection, connections, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Count, F
from django.utils import timezone

from foundation.db import db_value, model_sql
from foundation.metrics.instruments import ticket_counts_corrected
from tickets.models import Ticket, TicketCount, TicketSequence

logger = logging.getLogger(__name__)

_ADD_SQL = model_sql(
    """
INSERT INTO {c} ({c.organization}, {c.priority}, {c.status}, {c.tickets}) VALUES (%s, %s, %s, %s)
ON CONFLICT ({c.organization}, {c.priority}, {c.status})
    DO UPDATE SET {c.tickets} = {c}.{c.tickets} + excluded.{c.tickets}
""",
    c=TicketCount,
)
# Whether the organization's numbers still follow creation (tickets.selectors, deep pages).
_IN_ORDER_SQL = model_sql(
    """
UPDATE {s} SET {s.counts_checked_at} = %s, {s.numbered_in_order} = NOT EXISTS (
    SELECT 1 FROM (
        SELECT {t.created_at}, lag({t.created_at}) OVER (ORDER BY {t.number}) AS before
        FROM {t} WHERE {t.organization} = %s
    ) numbered WHERE numbered.before > numbered.{t.created_at}
)
WHERE {s.organization} = %s
""",
    s=TicketSequence,
    t=Ticket,
)


@dataclass(frozen=True)
class Recount:
    organizations: int
    added: int
    removed: int
    skipped: int


def ticket_counts_recount(*, batch: int | None = None, now=None) -> Recount:
    """Recount the `batch` organizations recounted longest ago (TICKET_RECOUNT_BATCH): each run costs
    the same whatever the number of organizations."""
    now = now or timezone.now()
    batch = batch or settings.TICKET_RECOUNT_BATCH
    oldest = TicketSequence.objects.order_by(F("counts_checked_at").asc(nulls_first=True), "organization_id")
    added = removed = skipped = 0
    organization_ids = list(oldest.values_list("organization_id", flat=True)[:batch])
    for organization_id in organization_ids:
        try:
            more, fewer = ticket_counts_recount_organization(organization_id, now=now)
        except OperationalError:  # a write on the same counter meanwhile: the next run tries again
            logger.info("ticket counts of %s not recounted: concurrent write", organization_id)
            skipped += 1
            continue
        added, removed = added + more, removed + fewer
        if more or fewer:
            logger.warning("ticket counts of %s corrected: %s added, %s removed", organization_id, more, fewer)
    ticket_counts_corrected(added=added, removed=removed)
    return Recount(organizations=len(organization_ids), added=added, removed=removed, skipped=skipped)


def ticket_counts_recount_organization(organization_id, *, now=None) -> tuple[int, int]:
    """One organization recounted (after a bulk load, say): (tickets added to, removed from its counters)."""
    now = now or timezone.now()
    # Its own transaction (beat's task), its first statement; inside another one (a test) it reads
    # that one's snapshot.
    own_snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
    with transaction.atomic(), connection.cursor() as cursor:
        if own_snapshot:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        stored = {
            (priority, status_id): tickets
            for priority, status_id, tickets in TicketCount.objects.filter(organization_id=organization_id)
            .order_by()
            .values_list("priority", "status_id", "tickets")
        }
        real = {
            (priority, status_id): tickets
            for priority, status_id, tickets in Ticket.objects.filter(organization_id=organization_id)
            .order_by()
            .values_list("priority", "status_id")
            .annotate(tickets=Count("pk"))
        }
        drift = {key: real.get(key, 0) - stored.get(key, 0) for key in sorted(stored.keys() | real.keys(), key=str)}
        drift = {key: delta for key, delta in drift.items() if delta}
        organization = db_value(TicketCount, "organization", organization_id)
        for (priority, status_id), delta in drift.items():
            cursor.execute(_ADD_SQL, [organization, priority, db_value(TicketCount, "status", status_id), delta])
        cursor.execute(_IN_ORDER_SQL, [db_value(TicketSequence, "counts_checked_at", now), organization, organization])
    return sum(d for d in drift.values() if d > 0), -sum(d for d in drift.values() if d < 0)


COUNT_TRIGGERS_MIGRATION = ("tickets", "0007_ticket_counts")


def count_triggers_ensure(sender=None, using: str = "default", **kwargs) -> list[str]:
    """post_migrate, on SQLite: the counting triggers are there after every migration. SQLite changes a
    column by rebuilding the table, which drops its triggers silently (the counts would then stand still
    while tickets come and go); PostgreSQL keeps them. Returns the names it had to create again."""
    connection = connections[using]
    if (
        connection.vendor != "sqlite"
        or COUNT_TRIGGERS_MIGRATION not in MigrationRecorder(connection).applied_migrations()
    ):
        return []
    migration = importlib.import_module(f"{COUNT_TRIGGERS_MIGRATION[0]}.migrations.{COUNT_TRIGGERS_MIGRATION[1]}")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [Ticket._meta.db_table]
        )
        present = {name for (name,) in cursor.fetchall()}
        created = []
        for statement in migration.SQLITE:
            name = re.search(r"CREATE TRIGGER (\w+)", statement).group(1)
            if name not in present:
                cursor.execute(statement)
                created.append(name)
    if created:
        logger.warning("ticket count triggers created again after a migration: %s", ", ".join(created))
    return created
