"""SQL statements per request on the hot paths, transaction control included (docs/performance.md).

Tests run inside a transaction, so the request's own transaction shows up as a
SAVEPOINT and a RELEASE: they stand for its BEGIN and COMMIT and are counted.
A warm-up request first, so the once-a-minute `ultimo_uso_em` write and the
per-organization cache of the default status are not what is measured.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket
from tickets.services import ticket_update

TICKETS = "/api/v1/tickets"

# A write's audit record is one INSERT in its transaction (helpdesk.audit): create 7 + 1, reply 6 + 1.
BUDGET = {"create": 8, "list": 4, "read_one": 4, "agents": 3, "customer_reply": 7}


pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def statements(call) -> list[str]:
    call()
    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code < 300, response.content
    return [query["sql"] for query in captured.captured_queries]


def busy_tickets(organization, agent, count: int) -> None:
    for n in range(count):
        ticket = make_ticket(organization, subject=f"Ticket {n}")
        make_customer_reply(ticket, body="Cliente")
        make_agent_reply(ticket, agent, body="Atendente")
        make_agent_reply(ticket, agent, body="Nota", internal=True)


def _create(partner, n: int, query: str = ""):
    body = {"assunto": "Novo", "descricao": "x", "external_id": f"pedido-{n}"}
    body["solicitante"] = {"nome": "Cliente", "external_id": f"cliente-{n}"}
    return partner.post(TICKETS + query, body, format="json")


@pytest.mark.parametrize(
    ("ticket_external_id", "requester", "budget"),
    [
        pytest.param(True, lambda n: {"nome": "Novo", "external_id": f"cliente-{n}"}, 8, id="new-requester"),
        pytest.param(True, lambda n: {"nome": "Cliente", "external_id": "sempre-o-mesmo"}, 8, id="known-requester"),
        pytest.param(True, lambda n: {"nome": "Anônimo"}, 8, id="requester-without-ids"),
        pytest.param(False, lambda n: {"nome": "Por e-mail", "email": f"c{n}@example.test"}, 8, id="by-email"),
        # The one path past 8: the lock-free look for the ticket's external_id, then the
        # requester's e-mail looked up under the sequence lock (so two requests never make two contacts).
        pytest.param(True, lambda n: {"nome": "Por e-mail", "email": f"c{n}@example.test"}, 9, id="both-lookups"),
    ],
)
def test_create_runs_at_most_8_statements(partner, organization, ticket_external_id, requester, budget):
    counter = iter(range(1_000))

    def create():
        n = next(counter)
        body = {"assunto": "Novo", "descricao": "x", "solicitante": requester(n)}
        if ticket_external_id:
            body["external_id"] = f"pedido-{n}"
        return partner.post(TICKETS, body, format="json")

    sql = statements(create)

    assert len(sql) <= budget <= BUDGET["create"] + 1, "\n".join(sql)


def test_create_with_an_existing_external_id_writes_nothing(partner, organization):
    sql = statements(lambda: _create(partner, 1))

    assert not [statement for statement in sql if statement.lstrip().upper().startswith(("INSERT", "UPDATE"))]
    assert len(sql) <= BUDGET["create"], "\n".join(sql)


@pytest.mark.parametrize("per_page", [1, 25, 100])
def test_list_runs_at_most_4_statements_whatever_the_page_size(partner, organization, agent, per_page):
    busy_tickets(organization, agent, 30)

    sql = statements(lambda: partner.get(TICKETS, {"por_pagina": per_page}))

    assert len(sql) <= BUDGET["list"], "\n".join(sql)


def test_search_runs_at_most_4_statements(partner, organization, agent):
    busy_tickets(organization, agent, 10)

    sql = statements(lambda: partner.get(TICKETS, {"busca": "ticket 1", "prioridade": "media"}))

    assert len(sql) <= BUDGET["list"], "\n".join(sql)


def test_read_one_runs_at_most_4_statements(partner, organization, agent):
    busy_tickets(organization, agent, 1)
    ticket = organization.tickets.get()

    sql = statements(lambda: partner.get(f"{TICKETS}/{ticket.pk}"))

    assert len(sql) <= BUDGET["read_one"], "\n".join(sql)


def test_agents_run_at_most_3_statements(partner, organization):
    for n in range(12):
        make_agent(organization, name=f"Atendente {n}")

    sql = statements(lambda: partner.get("/api/v1/atendentes"))

    assert len(sql) <= BUDGET["agents"], "\n".join(sql)


def test_a_customer_reply_reads_its_ticket_once_under_the_lock(partner, organization):
    ticket = make_ticket(organization)

    sql = statements(lambda: partner.post(f"{TICKETS}/{ticket.pk}/respostas", {"mensagem": "Oi"}, format="json"))

    assert len(sql) <= BUDGET["customer_reply"], "\n".join(sql)
    assert sum(statement.lstrip().upper().startswith("SELECT") for statement in sql) == 2  # key, ticket (locked)


# --- `incluir` blocks (issue 21): extra columns of the same statements, never a statement more ---------------

BLOCK_COMBINATIONS = ["atendente", "contato", "atendente,contato", "contato,atendente,contato"]


@pytest.fixture
def assigned_and_not(organization, agent):
    """30 busy tickets, every other one assigned, and the events of their agents' replies."""
    busy_tickets(organization, agent, 30)
    for ticket in organization.tickets.order_by("number")[::2]:
        ticket_update(ticket=ticket, assignee=agent)


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
@pytest.mark.parametrize("per_page", [1, 100])
def test_the_list_runs_the_same_statements_with_any_blocks(partner, assigned_and_not, incluir, per_page):
    plain = statements(lambda: partner.get(TICKETS, {"por_pagina": per_page}))
    with_blocks = statements(lambda: partner.get(TICKETS, {"por_pagina": per_page, "incluir": incluir}))

    assert len(with_blocks) == len(plain) <= BUDGET["list"], "\n".join(with_blocks)


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
def test_a_read_and_the_change_list_run_the_same_statements_with_any_blocks(
    partner, organization, assigned_and_not, incluir
):
    ticket = organization.tickets.filter(assignee__isnull=False).first()
    for path in (f"{TICKETS}/{ticket.pk}", f"{TICKETS}/alteracoes"):
        plain = statements(lambda path=path: partner.get(path))
        with_blocks = statements(lambda path=path: partner.get(path, {"incluir": incluir}))
        assert len(with_blocks) == len(plain), "\n".join(with_blocks)
    assert len(with_blocks) == 3  # the change list: key, page, replies


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
def test_the_event_feed_runs_the_same_statements_with_any_blocks(partner, assigned_and_not, incluir):
    plain = statements(lambda: partner.get("/api/v1/eventos"))
    with_blocks = statements(lambda: partner.get("/api/v1/eventos", {"incluir": incluir}))

    assert len(with_blocks) == len(plain) == 2, "\n".join(with_blocks)  # key, page


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
def test_a_create_runs_the_same_statements_with_any_blocks(partner, organization, incluir):
    counter = iter(range(1_000))

    def create(params=""):
        return _create(partner, next(counter), params)

    plain = statements(create)
    with_blocks = statements(lambda: create(f"?incluir={incluir}"))
    existing = statements(lambda: _create(partner, 0, f"?incluir={incluir}"))

    assert len(with_blocks) == len(plain) <= BUDGET["create"], "\n".join(with_blocks)
    assert len(existing) <= BUDGET["create"], "\n".join(existing)
