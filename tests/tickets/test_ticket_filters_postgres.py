"""On PostgreSQL every lookup, filter and order of GET /api/v1/tickets (issue 21) is answered by an index that
starts with the organization: the plans of the statements a request runs, on 20,000 tickets of 2,000
customers beside another organization's 20,000 (docs/performance.md, "Lookups, filters and orders")."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.assertions import assert_success, bearer_client
from tests.factories import make_key, make_organization, make_ticket

URL = "/api/v1/tickets"
TICKETS = 20_000
CUSTOMERS = 2_000

# A scan of these reads every organization's rows; statuses and counters are a few rows each, read whole when few.
BIG_TABLES = ("Seq Scan on tickets_ticket ", "Seq Scan on tickets_contact ")
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def _grow(organization) -> None:
    """TICKETS tickets of CUSTOMERS customers (bulk-1.., c1@bulk.example..): one in 1,000 `fechado`, one in five
    `em_andamento`, the rest `aberto`; created a second apart, changed in another order."""
    first = make_ticket(organization)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO tickets_contact (id, organization_id, name, email, phone, external_id, created_at, updated_at)
            SELECT gen_random_uuid(), %s, 'Cliente ' || g, 'c' || g || '@bulk.example', '', 'bulk-' || g, now(), now()
            FROM generate_series(1, %s) g
            """,
            [organization.pk, CUSTOMERS],
        )
        cursor.execute(
            """
            INSERT INTO tickets_ticket (id, organization_id, number, subject, description, priority, channel,
                source_system, status_id, requester_id, external_id, created_at, updated_at)
            SELECT gen_random_uuid(), %(org)s, 1 + g, 'Assunto ' || g, 'x', (ARRAY['baixa', 'media', 'alta',
                'urgente'])[1 + g %% 4], 'api', 'api',
                (SELECT id FROM tickets_ticketstatus s WHERE s.organization_id = %(org)s AND s.category =
                    CASE WHEN g %% 1000 = 0 THEN 'fechado' WHEN g %% 5 = 0 THEN 'em_andamento' ELSE 'aberto' END),
                c.id, 'pedido-' || g, t.created_at + g * interval '1 second',
                t.created_at + ((g * 7919) %% %(count)s) * interval '1 second'
            FROM generate_series(1, %(count)s) g
            JOIN tickets_contact c
                ON c.organization_id = %(org)s AND c.external_id = 'bulk-' || (1 + g %% %(customers)s)
            CROSS JOIN (SELECT created_at FROM tickets_ticket WHERE id = %(first)s) t
            """,
            {"org": organization.pk, "count": TICKETS, "customers": CUSTOMERS, "first": first.pk},
        )
        cursor.execute(
            "UPDATE tickets_ticketsequence SET last_number = %s WHERE organization_id = %s",
            [TICKETS + 1, organization.pk],
        )


@pytest.fixture
def grown(postgres_only):
    organization = make_organization("Grande")
    _grow(organization)
    _grow(make_organization("Vizinha"))  # the planner weighs another tenant's rows too
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE tickets_ticket")
        cursor.execute("VACUUM ANALYZE tickets_contact")
    return bearer_client(make_key(organization))


def plans(client, params: dict) -> list[str]:
    """EXPLAIN of each statement the request ran on the tickets (its count and its page), after a warm-up."""
    assert_success(client.get(URL, params), 200, "Tickets listados.")
    with CaptureQueriesContext(connection) as captured:
        data = assert_success(client.get(URL, params), 200, "Tickets listados.")
    assert data["data"], "the query must find tickets: an empty page is never read"
    statements = [
        query["sql"]
        for query in captured.captured_queries
        if 'FROM "tickets_ticket"' in query["sql"] or 'FROM "tickets_ticketcount"' in query["sql"]
    ]
    found = []
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute("EXPLAIN " + statement)
            found.append("\n".join(row[0] for row in cursor.fetchall()))
    return found


def nodes(plan: str) -> list[str]:
    """The plan's node names (`Index Scan using ... on ...`, `Sort`...), without their details."""
    return [line.strip().removeprefix("->").strip().split("  (")[0] for line in plan.splitlines() if "(cost=" in line]


def assert_indexed(found: list[str], *indexes: str) -> None:
    everything = "\n\n".join(found)
    for index in indexes:
        assert index in everything, everything
    for plan in found:
        assert not [node for node in nodes(plan) if node.startswith(BIG_TABLES)], plan


# Each filter, and the index it needs (none named: any index, never a scan of the organization's rows).
FILTERS = {
    "external_id": ({"external_id": "pedido-777"}, ["ticket_org_external_id_unique"]),
    "solicitante_external_id": (
        {"solicitante_external_id": "bulk-42"},
        ["contact_org_external_id_unique", "ticket_org_requester"],
    ),
    "solicitante_email": ({"solicitante_email": "C42@bulk.example"}, ["contact_org_email", "ticket_org_requester"]),
    "status, a rare category": ({"status": "fechado"}, ["tickets_ticketstatus"]),
    "status, common categories": ({"status": ["em_andamento", "fechado"]}, []),
    "status and prioridade": ({"status": "aberto", "prioridade": "alta"}, []),
    "atualizado_desde, everything": ({"atualizado_desde": "2000-01-01T00:00:00Z"}, []),
    "criado_desde and criado_ate": ({"criado_desde": "2000-01-01T00:00:00Z", "criado_ate": "2100-01-01T00:00:00Z"}, []),
}
# Each order, and the scan that reads it in order (the page, and the keyset page after a cursor).
ORDERS = {
    "-criado_em": "Index Scan using ticket_org_newest",
    "criado_em": "Index Scan Backward using ticket_org_newest",
    "-atualizado_em": "Index Scan Backward using ticket_org_updated_number",
    "atualizado_em": "Index Scan using ticket_org_updated_number",
    "numero": "Index Scan using ticket_org_number_unique",
    "-numero": "Index Scan Backward using ticket_org_number_unique",
}


def test_each_filter_is_answered_by_an_index_of_the_organization(grown):
    for case, (params, indexes) in FILTERS.items():
        found = plans(grown, params)
        assert found, case
        assert_indexed(found, *indexes)
    recent = grown.get(URL, {"ordenacao": "-atualizado_em", "por_pagina": 50}).json()["data"]["data"][-1]
    assert_indexed(plans(grown, {"atualizado_desde": recent["atualizado_em"]}), "ticket_org_updated_number")


def test_a_category_with_a_filter_the_counters_do_not_answer_is_read_in_order(grown):
    """The count names the category's statuses, so the page reads (organization, status, criado_em) or the
    newest-first index in order, and stops at the page: it never collects and sorts the category's rows."""
    [count, page] = plans(grown, {"status": "aberto", "criado_desde": "2000-01-01T00:00:00Z"})
    assert "tickets_ticketstatus" in count, count  # the statuses come with the count
    assert "Sort" not in nodes(page) and "Seq Scan on tickets_ticket " not in nodes(page), page
    # A rare one (20 of 20,000) is found through a status index, never by walking the whole list for it.
    [count, page] = plans(grown, {"status": "fechado", "criado_desde": "2000-01-01T00:00:00Z"})
    assert "ticket_org_newest" not in page, page
    assert "Seq Scan on tickets_ticket " not in nodes(page), page


def test_each_order_is_read_from_its_index_without_sorting(grown):
    for ordenacao, scan in ORDERS.items():
        [_counters, page] = plans(grown, {"ordenacao": ordenacao, "por_pagina": 25})
        cursor = grown.get(URL, {"ordenacao": ordenacao, "cursor": ""}).json()["data"]["proximo_cursor"]
        [_counters, keyset] = plans(grown, {"ordenacao": ordenacao, "cursor": cursor})
        for plan in (page, keyset):
            assert scan in plan, f"{ordenacao}:\n{plan}"
            assert "Sort" not in nodes(plan) and "Seq Scan on tickets_ticket" not in nodes(plan), plan
