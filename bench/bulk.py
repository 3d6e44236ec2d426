"""Grow the bench organization to N tickets with set-based SQL (generate_series).

Run by bench/run.py with the product's settings:
    python -m bench.bulk --organization ID --tickets 100000

Prints one JSON line: a bulk ticket from the middle of the backlog (its external_id and its requester's),
which the lookup rows of the bench ask for.

Rows stay valid for the product: the bulk tickets are older than the ones
already there, as a backlog is, so they take the lowest numbers (the others move
up, under the sequence's row lock) and numbers keep following creation; each
ticket has a contact of the organization and one of its statuses, and a customer
reply and an internal note by one of its agents. The database's triggers count
them (tickets.migrations.0007); the organization is recounted after the load, as
beat would. Table and column names come from the models, so a renamed column is
followed.
"""

import argparse
import json
import os
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from bench.seed import CUSTOM_FIELDS, STORES, SUBJECTS  # noqa: E402

CONTACTS = 10_000
TAGS = 100  # lote-0..lote-99: each on 1% of the bulk tickets (`?tag=` at 100,000 tickets)
# 1% of the bulk tickets have a breached SLA target (`?sla=violado`, issue 23), every hundredth.


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--organization", required=True)
    parser.add_argument("--tickets", type=int, required=True)
    options = parser.parse_args()

    from django.db import OperationalError, connection, transaction
    from django.utils import timezone

    from helpdesk.models import Agent
    from tickets.counts import ticket_counts_recount_organization
    from tickets.models import (
        Contact,
        CustomField,
        Reply,
        StatusCategory,
        Ticket,
        TicketCount,
        TicketFieldValue,
        TicketSequence,
        TicketStatus,
    )

    quote = connection.ops.quote_name

    def table(model) -> str:
        return quote(model._meta.db_table)

    def col(model, name: str) -> str:
        return quote(model._meta.get_field(name).column)

    organization = options.organization
    statuses = dict(
        TicketStatus.objects.filter(organization_id=organization).order_by("-position").values_list("category", "id")
    )
    agents = [str(pk) for pk in Agent.objects.filter(organization_id=organization).values_list("id", flat=True)]
    store_field = CustomField.objects.filter(organization_id=organization, key="loja").values_list("pk", flat=True)
    store_field = store_field.first() or _store_field_create(organization)

    with transaction.atomic(), connection.cursor() as cursor:
        sequence = TicketSequence.objects.select_for_update().get(organization_id=organization)
        existing = Ticket.objects.filter(organization_id=organization).count()
        count = options.tickets - existing
        if count <= 0:
            return
        middle = count // 2  # the ticket `g` of the SQL below, and its requester
        sample = {
            "external_id": f"bulk-{sequence.last_number + middle}",
            "requester_external_id": f"bulk-cli-{1 + middle % CONTACTS}",
            # Each bulk ticket has one tag of TAGS, so each tag is on 1% of them (issue 22).
            "tag": f"lote-{middle % TAGS}",
            # And a value of the `loja` field of STORES, so each value is on 1% of them too.
            "store": f"loja-{middle % STORES}",
        }
        # The backlog is older than every ticket there: it takes numbers 1..count, the others move up.
        oldest = Ticket.objects.filter(organization_id=organization).order_by("created_at").first()
        # In two steps, so no number is ever taken twice on the way.
        for shift in (sequence.last_number + count, -sequence.last_number):
            cursor.execute(
                f"UPDATE {table(Ticket)} SET {col(Ticket, 'number')} = {col(Ticket, 'number')} + %s "
                f"WHERE {col(Ticket, 'organization')} = %s",
                [shift, organization],
            )
        C, T, R = Contact, Ticket, Reply
        cursor.execute(
            f"""
            INSERT INTO {table(C)} ({col(C, "id")}, {col(C, "organization")}, {col(C, "name")}, {col(C, "email")},
                {col(C, "phone")}, {col(C, "external_id")}, {col(C, "created_at")}, {col(C, "updated_at")})
            SELECT gen_random_uuid(), %(org)s, 'Cliente Antigo ' || g, 'antigo' || g || '@bench.example', '',
                'bulk-cli-' || g, now(), now()
            FROM generate_series(1, %(contacts)s) AS g
            ON CONFLICT DO NOTHING
            """,  # identifiers from the models, values as parameters
            {"org": organization, "contacts": CONTACTS},
        )
        cursor.execute(
            f"""
            INSERT INTO {table(T)} ({col(T, "id")}, {col(T, "organization")}, {col(T, "number")}, {col(T, "subject")},
                {col(T, "description")}, {col(T, "priority")}, {col(T, "channel")}, {col(T, "source_system")},
                {col(T, "status")}, {col(T, "requester")}, {col(T, "assignee")}, {col(T, "external_id")},
                {col(T, "created_at")}, {col(T, "updated_at")}, {col(T, "resolved_at")}, {col(T, "tags")},
                {col(T, "custom_fields")}, {col(T, "sla_breached")})
            SELECT gen_random_uuid(), %(org)s, g,
                (%(subjects)s::text[])[1 + g %% %(subject_count)s] || ' #' || (200000 + g),
                'Cliente relata: ' || lower((%(subjects)s::text[])[1 + (g * 7) %% %(subject_count)s])
                    || '. Pedido ' || (900000 + g) || '.',
                (ARRAY['baixa', 'media', 'alta', 'urgente'])[1 + g %% 4], 'api', 'api',
                CASE WHEN g %% 7 = 0 THEN %(resolved)s::uuid WHEN g %% 5 = 0 THEN %(in_progress)s::uuid
                     ELSE %(open)s::uuid END,
                c.{col(C, "id")},
                CASE WHEN g %% 5 = 0 THEN (%(agents)s::uuid[])[1 + g %% %(agent_count)s] END,
                'bulk-' || (%(earlier)s + g),
                %(before)s::timestamptz - (%(count)s - g + 1) * interval '3 seconds',
                %(before)s::timestamptz - (%(count)s - g + 1) * interval '3 seconds',
                CASE WHEN g %% 7 = 0 THEN %(before)s::timestamptz - (%(count)s - g + 1) * interval '2 seconds' END,
                jsonb_build_array('lote-' || (g %% %(tags)s)),
                jsonb_build_object('loja', 'loja-' || (g %% %(stores)s)),
                g %% 100 = 37
            FROM generate_series(1, %(count)s) AS g
            JOIN {table(C)} c ON c.{col(C, "organization")} = %(org)s
                AND c.{col(C, "external_id")} = 'bulk-cli-' || (1 + g %% %(contacts)s)
            """,
            {
                "org": organization,
                "count": count,
                "before": oldest.created_at if oldest else timezone.now(),
                "earlier": sequence.last_number,  # external ids stay unique across loads
                "subjects": SUBJECTS,
                "subject_count": len(SUBJECTS),
                "open": statuses[StatusCategory.OPEN],
                "in_progress": statuses[StatusCategory.IN_PROGRESS],
                "resolved": statuses[StatusCategory.RESOLVED],
                "agents": agents,
                "agent_count": len(agents),
                "contacts": CONTACTS,
                "tags": TAGS,
                "stores": STORES,
            },
        )
        # The `loja` values' typed rows, as tickets.fields.services writes them beside `custom_fields`.
        V = TicketFieldValue
        cursor.execute(
            f"""
            INSERT INTO {table(V)} ({col(V, "organization")}, {col(V, "ticket")}, {col(V, "field")}, {col(V, "text")})
            SELECT %(org)s, t.{col(T, "id")}, %(field)s, t.{col(T, "custom_fields")} ->> 'loja'
            FROM {table(T)} t
            WHERE t.{col(T, "organization")} = %(org)s AND t.{col(T, "number")} <= %(count)s
            """,
            {"org": organization, "count": count, "field": store_field},
        )
        for internal, origin, body in (
            (False, "cliente_api", "Alguma novidade sobre o meu pedido?"),
            (True, "agente", "Nota: cliente antigo, verificar histórico."),
        ):
            cursor.execute(
                f"""
                INSERT INTO {table(R)} ({col(R, "id")}, {col(R, "ticket")}, {col(R, "body")}, {col(R, "is_internal")},
                    {col(R, "origin")}, {col(R, "author_agent")}, {col(R, "author_contact")}, {col(R, "edited")},
                    {col(R, "created_at")}, {col(R, "updated_at")})
                SELECT gen_random_uuid(), t.{col(T, "id")}, %(body)s, %(internal)s, %(origin)s,
                    CASE WHEN %(internal)s THEN (%(agents)s::uuid[])[1 + t.{col(T, "number")} %% %(agent_count)s] END,
                    CASE WHEN %(internal)s THEN NULL ELSE t.{col(T, "requester")} END,
                    false, t.{col(T, "created_at")} + interval '1 hour', t.{col(T, "created_at")} + interval '1 hour'
                FROM {table(T)} t
                WHERE t.{col(T, "organization")} = %(org)s AND t.{col(T, "number")} <= %(count)s
                """,
                {
                    "org": organization,
                    "count": count,
                    "body": body,
                    "internal": internal,
                    "origin": origin,
                    "agents": agents,
                    "agent_count": len(agents),
                },
            )
        sequence.last_number += count
        sequence.save(update_fields=["last_number"])
    # As beat would: the renumbering made the triggers doubt the order; the recount looks again. Beat's own
    # recount may take the organization at the same moment (its sequence row): one of the two gives way, and
    # when it is this one it tries again (a 10,000,000 load lost an hour to it once).
    for attempt in range(3):
        try:
            ticket_counts_recount_organization(organization)
            break
        except OperationalError:
            if attempt == 2:
                raise
            time.sleep(1)
    # As autovacuum would on a live database: hint bits and the visibility map set, statistics fresh,
    # so neither server pays for the bulk load on its first read (counts become index-only).
    with connection.cursor() as cursor:
        for model in (Contact, Ticket, Reply, TicketCount, TicketFieldValue):
            cursor.execute(f"VACUUM ANALYZE {table(model)}")
    print(json.dumps(sample))


def _store_field_create(organization_id):
    """An organization the seed did not make (the large section's own) gets the `loja` field its rows fill."""
    from helpdesk.models import Organization
    from tickets.fields.services import custom_field_create

    organization = Organization.objects.get(pk=organization_id)
    definition = next(field for field in CUSTOM_FIELDS if field["key"] == "loja")
    return custom_field_create(organization=organization, **definition).pk


if __name__ == "__main__":
    main()
