"""On PostgreSQL `busca` is answered by the trigram indexes, with the same results as a plain scan."""

import pytest
from django.db import connection, transaction
from django.db.models import Q

from tests.factories import make_ticket
from tickets.models import Contact
from tickets.selectors import ticket_list_public
from tickets.services import RequesterData


@pytest.fixture
def tickets(postgres_only, organization):
    for n in range(40):
        make_ticket(
            organization,
            subject=f"Pedido {n} atrasado" if n % 10 else f"Reembolso do pedido {n}",
            description=f"Texto do chamado {n}",
            requester=RequesterData(name=f"Cliente {n}", email=f"cliente{n}@example.test", external_id=f"c-{n}"),
        )
    make_ticket(organization, subject="Outro", requester=RequesterData(name="Maria do Reembolso", external_id="m"))
    return organization


@pytest.fixture
def many_tickets(tickets):
    """20,000 more tickets of 2,000 more requesters: the planner weighs indexes as on a real organization."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO tickets_contact (id, organization_id, name, email, phone, external_id, created_at, updated_at)
            SELECT gen_random_uuid(), %s, 'Pessoa ' || md5(g::text), 'p' || g || '@example.test', '', 'bulk-' || g,
                now(), now()
            FROM generate_series(1, 2000) g
            """,
            [tickets.pk],
        )
        cursor.execute(
            """
            INSERT INTO tickets_ticket (id, organization_id, number, subject, description, priority, channel,
                source_system, status_id, requester_id, created_at, updated_at)
            SELECT gen_random_uuid(), t.organization_id, 1000 + g, 'Assunto ' || md5(g::text), md5((g * 7)::text),
                'media', 'api', 'api', t.status_id, c.id, now(), now()
            FROM generate_series(1, 20000) g
            JOIN tickets_contact c ON c.organization_id = %s AND c.external_id = 'bulk-' || (1 + g %% 2000)
            CROSS JOIN (SELECT * FROM tickets_ticket WHERE organization_id = %s LIMIT 1) t
            """,
            [tickets.pk, tickets.pk],
        )
        # As autovacuum keeps a live table (and the bench does after its bulk load): the dead index entries
        # every earlier test's rollback left, and the GIN pending lists, would otherwise weigh on the plan.
        cursor.execute("VACUUM ANALYZE tickets_ticket")
        cursor.execute("VACUUM ANALYZE tickets_contact")
    return tickets


def _plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_rare_term_is_found_through_the_trigram_indexes(many_tickets):
    plan = _plan(ticket_list_public(organization=many_tickets, search="reembolso"))

    assert "BitmapOr" in plan, plan
    for index in ("ticket_subject_trgm", "ticket_description_trgm", "tickets_ticket_requester_id"):
        assert index in plan, plan
    assert "Seq Scan on tickets_ticket" not in plan, plan


def test_the_requesters_name_and_email_have_usable_trigram_indexes(many_tickets):
    contacts = Contact.objects.filter(Q(name__icontains="reembolso") | Q(email__icontains="reembolso"))

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # 2,000 contacts: a scan is cheaper, and chosen
        plan = _plan(contacts)

    assert "contact_name_trgm" in plan and "contact_email_trgm" in plan, plan


def test_indexed_search_finds_what_a_plain_scan_finds(many_tickets):
    tickets = many_tickets

    def subjects(search):
        return sorted(ticket_list_public(organization=tickets, search=search).values_list("subject", flat=True))[:50]

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # whatever the planner would rather do
        assert "trgm" in _plan(ticket_list_public(organization=tickets, search="reembolso"))
        indexed = {
            term: subjects(term) for term in ("reembolso", "REEMBOLS", "cliente1", "example", "12", "pe", "1042")
        }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        assert "trgm" not in _plan(ticket_list_public(organization=tickets, search="reembolso"))
        scanned = {term: subjects(term) for term in indexed}

    assert indexed == scanned
    assert indexed["reembolso"] == [
        "Outro",
        "Reembolso do pedido 0",
        "Reembolso do pedido 10",
        "Reembolso do pedido 20",
        "Reembolso do pedido 30",
    ]
