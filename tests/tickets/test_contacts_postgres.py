"""The partner's contacts on PostgreSQL (issue 21): every filter of GET /api/v1/contatos and a contact's
tickets are answered by an index that starts with the organization (plans in docs/performance.md), and an
external_id taken by concurrent corrections goes to exactly one contact (the unique constraint decides)."""

import threading

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from tests.assertions import bearer_client
from tests.contract import error_envelope
from tests.factories import make_key, make_organization, make_ticket
from tickets.models import Contact
from tickets.services import RequesterData

THREADS = 12
EXTERNAL_ID_TAKEN = error_envelope(
    409,
    "Já existe um contato com este external_id.",
    "external_id",
    "Outro contato desta organização já tem este external_id.",
)

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


# --- the unique constraint decides -------------------------------------------------------------------


def test_concurrent_corrections_to_one_external_id_give_it_to_exactly_one_contact(postgres_only):
    organization = make_organization("Concorrência")
    key = make_key(organization)
    contacts = [
        make_ticket(organization, requester=RequesterData(name=f"Pessoa {n}", external_id=f"cliente-{n}")).requester
        for n in range(THREADS)
    ]
    barrier = threading.Barrier(THREADS)
    responses: list = [None] * THREADS

    def correct(index: int) -> None:
        client = bearer_client(key)
        try:
            barrier.wait(timeout=30)
            responses[index] = client.patch(
                f"/api/v1/contatos/{contacts[index].pk}", {"external_id": "crm-1"}, format="json"
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=correct, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(response.status_code for response in responses) == [200] + [409] * (THREADS - 1)
    [winner] = [response for response in responses if response.status_code == 200]
    assert all(response.json() == EXTERNAL_ID_TAKEN for response in responses if response.status_code == 409)
    assert list(
        Contact.objects.filter(organization=organization, external_id="crm-1").values_list("pk", flat=True)
    ) == [contacts[[r.status_code for r in responses].index(200)].pk]
    assert winner.json()["data"]["external_id"] == "crm-1"
    # The others kept their own.
    kept = Contact.objects.filter(organization=organization).exclude(external_id="crm-1")
    assert sorted(kept.values_list("external_id", flat=True)) == sorted(
        f"cliente-{n}" for n, response in enumerate(responses) if response.status_code == 409
    )


# --- every filter has its index ----------------------------------------------------------------------


@pytest.fixture
def many_contacts(postgres_only):
    """The organization under test: 3,000 contacts (one phone in ten), 20,000 tickets of 2,000 of them; beside
    it, a larger organization of 20,000 contacts: as on a shared production database."""
    ours, neighbour = make_organization("Nossa"), make_organization("Vizinha")
    make_ticket(ours, requester=RequesterData(name="Maria Reembolso", email="maria@rara.test", external_id="maria"))
    with connection.cursor() as cursor:
        for organization, count in ((neighbour, 20000), (ours, 3000)):
            cursor.execute(
                """
                INSERT INTO tickets_contact (id, organization_id, name, email, phone, external_id, created_at,
                    updated_at)
                SELECT gen_random_uuid(), %s, 'Pessoa ' || md5(g::text), 'p' || g || '@example.test',
                    CASE WHEN g %% 10 = 0 THEN '+55 (11) 5555-' || lpad(g::text, 4, '0') ELSE '' END,
                    'bulk-' || g, now() - g * interval '1 second', now()
                FROM generate_series(1, %s) g
                """,
                [organization.pk, count],
            )
        cursor.execute(
            """
            INSERT INTO tickets_ticket (id, organization_id, number, subject, description, priority, channel,
                source_system, status_id, requester_id, created_at, updated_at)
            SELECT gen_random_uuid(), t.organization_id, 1000 + g, 'Assunto ' || md5(g::text), md5((g * 7)::text),
                'media', 'api', 'api', t.status_id, c.id, now() - g * interval '1 second', now()
            FROM generate_series(1, 20000) g
            JOIN tickets_contact c ON c.organization_id = %s AND c.external_id = 'bulk-' || (1 + g %% 2000)
            CROSS JOIN (SELECT * FROM tickets_ticket WHERE organization_id = %s LIMIT 1) t
            """,
            [ours.pk, ours.pk],
        )
        cursor.execute("VACUUM ANALYZE tickets_ticket")
        cursor.execute("VACUUM ANALYZE tickets_contact")
    return ours


def plans(client, path: str, params: dict) -> list[str]:
    """EXPLAIN of each statement the request ran on contacts or tickets (the key's lookup left out)."""
    assert client.get(path, params).status_code == 200  # warm-up: the once-a-minute key write
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, params)
    assert response.status_code == 200, response.content
    found = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            sql = query["sql"]
            if '"tickets_' not in sql:  # the key's lookup
                continue
            cursor.execute("EXPLAIN " + sql)
            found.append("\n".join(row[0] for row in cursor.fetchall()))
    return found


# Each filter: the index its count reads, and the one its page reads (the plain count reads the
# organization's own foreign-key index, the smallest that starts with it).
TRIGRAMS = ("contact_name_trgm", "contact_email_trgm")
CONTACT_FILTERS = {
    "newest first": ({}, ("tickets_contact_organization_id",), ("contact_org_newest",)),
    "external_id": (
        {"external_id": "bulk-2500"},
        ("contact_org_external_id_unique",),
        ("contact_org_external_id_unique",),
    ),
    "email": ({"email": "P2500@Example.test"}, ("contact_org_email",), ("contact_org_email",)),
    "telefone": ({"telefone": "+55 11 5555 2500"}, ("contact_org_phone",), ("contact_org_phone",)),
    "busca, a rare term": ({"busca": "reembolso"}, TRIGRAMS, TRIGRAMS),
}


def test_each_contact_filter_is_answered_by_its_index(many_contacts):
    client = bearer_client(make_key(many_contacts))

    for case, (params, *indexes) in CONTACT_FILTERS.items():
        statements = plans(client, "/api/v1/contatos", {"por_pagina": 25, **params})
        assert len(statements) == 2, (case, statements)  # the count, the page
        for plan, names in zip(statements, indexes, strict=True):
            assert "Seq Scan" not in plan, (case, plan)
            for name in names:
                assert name in plan, (case, plan)


def test_a_contacts_tickets_are_read_through_their_index(many_contacts):
    client = bearer_client(make_key(many_contacts))
    busy = Contact.objects.get(organization=many_contacts, external_id="bulk-7")

    contact, count, page, replies = plans(client, f"/api/v1/contatos/{busy.pk}/tickets", {"por_pagina": 25})

    assert "tickets_contact_pkey" in contact, contact
    for plan in (count, page):
        assert "ticket_org_requester" in plan, plan
        assert "Seq Scan" not in plan, plan
    assert "tickets_reply" in replies  # the ticket list's own third statement, as GET /api/v1/tickets reads it
