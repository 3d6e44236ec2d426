"""Per-organization ticket counts (priority x status), the numbers deleted tickets left, and whether
an organization's numbers follow creation: kept by triggers on tickets_ticket, so every insert, delete
and move counts, whatever wrote it (a service, QuerySet.update(), raw SQL, a bulk load), in the
writer's own transaction. The list's `total` and deep pages read them (tickets.selectors.ticket_page).

PostgreSQL: statement triggers with transition tables (a bulk statement counts once per group; the
counter rows are upserted in key order, so two writers never lock them in opposite orders).
SQLite: row triggers.
"""

import django.db.models.deletion
from django.db import migrations, models

POSTGRESQL = r"""
CREATE FUNCTION tickets_ticket_counted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO tickets_ticketcount AS c (organization_id, priority, status_id, tickets)
        SELECT organization_id, priority, status_id, count(*) FROM new_rows
        GROUP BY organization_id, priority, status_id ORDER BY organization_id, priority, status_id
        ON CONFLICT (organization_id, priority, status_id) DO UPDATE SET tickets = c.tickets + excluded.tickets;
        DELETE FROM tickets_ticketnumbergap g USING new_rows n
        WHERE g.organization_id = n.organization_id AND g.number = n.number;
        -- A number created before its lower neighbour, or after its higher one: not in order any more.
        UPDATE tickets_ticketsequence s SET numbered_in_order = false
        WHERE s.numbered_in_order AND s.organization_id IN (
            SELECT n.organization_id FROM new_rows n
            WHERE EXISTS (
                SELECT 1 FROM (
                    SELECT t.created_at FROM tickets_ticket t
                    WHERE t.organization_id = n.organization_id AND t.number < n.number
                    ORDER BY t.number DESC LIMIT 1
                ) lower_one WHERE lower_one.created_at > n.created_at
            ) OR EXISTS (
                SELECT 1 FROM (
                    SELECT t.created_at FROM tickets_ticket t
                    WHERE t.organization_id = n.organization_id AND t.number > n.number
                    ORDER BY t.number LIMIT 1
                ) higher_one WHERE higher_one.created_at < n.created_at
            )
        );
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO tickets_ticketcount AS c (organization_id, priority, status_id, tickets)
        SELECT organization_id, priority, status_id, -count(*) FROM old_rows
        GROUP BY organization_id, priority, status_id ORDER BY organization_id, priority, status_id
        ON CONFLICT (organization_id, priority, status_id) DO UPDATE SET tickets = c.tickets + excluded.tickets;
        INSERT INTO tickets_ticketnumbergap (organization_id, number)
        SELECT organization_id, number FROM old_rows ORDER BY organization_id, number
        ON CONFLICT (organization_id, number) DO NOTHING;
    ELSE
        INSERT INTO tickets_ticketcount AS c (organization_id, priority, status_id, tickets)
        SELECT organization_id, priority, status_id, sum(delta) FROM (
            SELECT organization_id, priority, status_id, -1 AS delta FROM old_rows
            UNION ALL
            SELECT organization_id, priority, status_id, 1 AS delta FROM new_rows
        ) moved
        GROUP BY organization_id, priority, status_id HAVING sum(delta) <> 0
        ORDER BY organization_id, priority, status_id
        ON CONFLICT (organization_id, priority, status_id) DO UPDATE SET tickets = c.tickets + excluded.tickets;
        UPDATE tickets_ticketsequence s SET numbered_in_order = false
        WHERE s.numbered_in_order AND s.organization_id IN (
            SELECT o.organization_id FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE n.number <> o.number OR n.created_at <> o.created_at OR n.organization_id <> o.organization_id
            UNION
            SELECT o.organization_id FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE n.number <> o.number OR n.created_at <> o.created_at OR n.organization_id <> o.organization_id
        );
    END IF;
    RETURN NULL;
END
$fn$;
--
CREATE TRIGGER tickets_ticket_counted_insert AFTER INSERT ON tickets_ticket
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tickets_ticket_counted();
--
CREATE TRIGGER tickets_ticket_counted_delete AFTER DELETE ON tickets_ticket
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tickets_ticket_counted();
--
CREATE TRIGGER tickets_ticket_counted_update AFTER UPDATE ON tickets_ticket
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tickets_ticket_counted();
"""

POSTGRESQL_REVERSE = [
    *(f"DROP TRIGGER tickets_ticket_counted_{name} ON tickets_ticket" for name in ("insert", "delete", "update")),
    "DROP FUNCTION tickets_ticket_counted()",
]

SQLITE = [
    """
CREATE TRIGGER tickets_ticket_counted_insert AFTER INSERT ON tickets_ticket BEGIN
    INSERT INTO tickets_ticketcount (organization_id, priority, status_id, tickets)
    VALUES (NEW.organization_id, NEW.priority, NEW.status_id, 1)
    ON CONFLICT (organization_id, priority, status_id) DO UPDATE SET tickets = tickets + 1;
    DELETE FROM tickets_ticketnumbergap WHERE organization_id = NEW.organization_id AND number = NEW.number;
    UPDATE tickets_ticketsequence SET numbered_in_order = 0
    WHERE organization_id = NEW.organization_id AND numbered_in_order AND (
        COALESCE((
            SELECT created_at > NEW.created_at FROM tickets_ticket
            WHERE organization_id = NEW.organization_id AND number < NEW.number ORDER BY number DESC LIMIT 1
        ), 0)
        OR COALESCE((
            SELECT created_at < NEW.created_at FROM tickets_ticket
            WHERE organization_id = NEW.organization_id AND number > NEW.number ORDER BY number LIMIT 1
        ), 0)
    );
END
""",
    """
CREATE TRIGGER tickets_ticket_counted_delete AFTER DELETE ON tickets_ticket BEGIN
    INSERT INTO tickets_ticketcount (organization_id, priority, status_id, tickets)
    VALUES (OLD.organization_id, OLD.priority, OLD.status_id, -1)
    ON CONFLICT (organization_id, priority, status_id) DO UPDATE SET tickets = tickets - 1;
    INSERT OR IGNORE INTO tickets_ticketnumbergap (organization_id, number) VALUES (OLD.organization_id, OLD.number);
END
""",
    """
CREATE TRIGGER tickets_ticket_counted_move AFTER UPDATE OF priority, status_id, organization_id ON tickets_ticket
WHEN OLD.priority IS NOT NEW.priority OR OLD.status_id IS NOT NEW.status_id
    OR OLD.organization_id IS NOT NEW.organization_id BEGIN
    INSERT INTO tickets_ticketcount (organization_id, priority, status_id, tickets)
    VALUES (OLD.organization_id, OLD.priority, OLD.status_id, -1)
    ON CONFLICT (organization_id, priority, status_id) DO UPDATE SET tickets = tickets - 1;
    INSERT INTO tickets_ticketcount (organization_id, priority, status_id, tickets)
    VALUES (NEW.organization_id, NEW.priority, NEW.status_id, 1)
    ON CONFLICT (organization_id, priority, status_id) DO UPDATE SET tickets = tickets + 1;
END
""",
    """
CREATE TRIGGER tickets_ticket_counted_renumber AFTER UPDATE OF number, created_at, organization_id ON tickets_ticket
WHEN OLD.number IS NOT NEW.number OR OLD.created_at IS NOT NEW.created_at
    OR OLD.organization_id IS NOT NEW.organization_id BEGIN
    UPDATE tickets_ticketsequence SET numbered_in_order = 0
    WHERE organization_id IN (OLD.organization_id, NEW.organization_id);
END
""",
]

SQLITE_REVERSE = [f"DROP TRIGGER tickets_ticket_counted_{name}" for name in ("insert", "delete", "move", "renumber")]

# What the tickets already there count, which numbers they left free, and whether they are in order.
BACKFILL_COUNTS = """
INSERT INTO tickets_ticketcount (organization_id, priority, status_id, tickets)
SELECT organization_id, priority, status_id, count(*) FROM tickets_ticket GROUP BY organization_id, priority, status_id
"""
BACKFILL_IN_ORDER = """
UPDATE tickets_ticketsequence SET numbered_in_order = NOT EXISTS (
    SELECT 1 FROM (
        SELECT created_at, lag(created_at) OVER (ORDER BY number) AS before
        FROM tickets_ticket t WHERE t.organization_id = tickets_ticketsequence.organization_id
    ) numbered WHERE numbered.before > numbered.created_at
)
"""
BACKFILL_GAPS = {
    "postgresql": """
INSERT INTO tickets_ticketnumbergap (organization_id, number)
SELECT s.organization_id, n.number FROM tickets_ticketsequence s
CROSS JOIN LATERAL generate_series(1, s.last_number) AS n(number)
WHERE NOT EXISTS (SELECT 1 FROM tickets_ticket t WHERE t.organization_id = s.organization_id AND t.number = n.number)
""",
    "sqlite": """
WITH RECURSIVE numbers(organization_id, number, last_number) AS (
    SELECT organization_id, 1, last_number FROM tickets_ticketsequence WHERE last_number > 0
    UNION ALL
    SELECT organization_id, number + 1, last_number FROM numbers WHERE number < last_number
)
INSERT INTO tickets_ticketnumbergap (organization_id, number)
SELECT n.organization_id, n.number FROM numbers n
WHERE NOT EXISTS (SELECT 1 FROM tickets_ticket t WHERE t.organization_id = n.organization_id AND t.number = n.number)
""",
}


def install_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = POSTGRESQL.split("\n--\n") if vendor == "postgresql" else SQLITE
    for statement in [BACKFILL_COUNTS, BACKFILL_IN_ORDER, BACKFILL_GAPS[vendor], *statements]:
        schema_editor.execute(statement)


def remove_triggers(apps, schema_editor):
    statements = POSTGRESQL_REVERSE if schema_editor.connection.vendor == "postgresql" else SQLITE_REVERSE
    for statement in statements:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("helpdesk", "0003_change_sequence"),
        ("tickets", "0006_ticket_tombstone"),
    ]

    operations = [
        migrations.AddField(
            model_name="ticketsequence",
            name="counts_checked_at",
            field=models.DateTimeField(blank=True, db_index=True, null=True),
        ),
        migrations.AddField(
            model_name="ticketsequence",
            name="numbered_in_order",
            field=models.BooleanField(default=True),
        ),
        migrations.CreateModel(
            name="TicketCount",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "priority",
                    models.CharField(
                        choices=[("baixa", "Baixa"), ("media", "Média"), ("alta", "Alta"), ("urgente", "Urgente")],
                        max_length=10,
                    ),
                ),
                ("tickets", models.IntegerField(default=0)),
                (
                    "organization",
                    models.ForeignKey(
                        db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="helpdesk.organization"
                    ),
                ),
                (
                    "status",
                    models.ForeignKey(
                        db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tickets.ticketstatus"
                    ),
                ),
            ],
            options={
                "verbose_name": "contagem de tickets",
                "verbose_name_plural": "contagens de tickets",
                "constraints": [
                    models.UniqueConstraint(fields=("organization", "priority", "status"), name="ticket_count_unique")
                ],
            },
        ),
        migrations.CreateModel(
            name="TicketNumberGap",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("number", models.PositiveIntegerField()),
                (
                    "organization",
                    models.ForeignKey(
                        db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="helpdesk.organization"
                    ),
                ),
            ],
            options={
                "verbose_name": "número sem ticket",
                "verbose_name_plural": "números sem ticket",
                "constraints": [
                    models.UniqueConstraint(fields=("organization", "number"), name="ticket_number_gap_unique")
                ],
            },
        ),
        migrations.RunPython(install_triggers, remove_triggers, elidable=False),
    ]
