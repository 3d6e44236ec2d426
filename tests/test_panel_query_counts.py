"""Panel lists (JWT) run a fixed number of queries, however many rows they show."""

import pytest

from integrations.services import credential_create
from tests.assertions import queries_of
from tests.factories import admin_of, make_agent, make_busy_ticket, make_webhook

TICKETS = "/api/tickets"
API_KEYS = "/api/api-keys"
WEBHOOKS = "/api/webhooks"

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def test_panel_ticket_list_runs_the_same_queries_for_1_and_50_tickets(manager, organization):
    agents = [make_agent(organization, name=f"Agente {n}") for n in range(3)]
    make_busy_ticket(organization, agents, 0, assign_every_other=True)
    one_queries, one_page = queries_of(manager, TICKETS, {"por_pagina": 100})
    for n in range(1, 50):
        make_busy_ticket(organization, agents, n, assign_every_other=True)

    fifty_queries, fifty_page = queries_of(manager, TICKETS, {"por_pagina": 100})

    assert len(one_page["data"]) == 1
    assert len(fifty_page["data"]) == 50
    assert all(len(ticket["respostas"]) == 4 for ticket in fifty_page["data"])
    assert all(sum(reply["interna"] for reply in ticket["respostas"]) == 1 for ticket in fifty_page["data"])
    assert sum(ticket["atendente"] is not None for ticket in fifty_page["data"]) == 25
    assert len(fifty_queries) == len(one_queries), "\n".join(fifty_queries)


def test_panel_ticket_list_with_filters_runs_the_same_queries_for_1_and_50_tickets(manager, organization):
    agents = [make_agent(organization, name=f"Agente {n}") for n in range(2)]
    params = {"por_pagina": 100, "busca": "Ticket", "prioridade": "media"}
    make_busy_ticket(organization, agents, 0, assign_every_other=True)
    one_queries, _ = queries_of(manager, TICKETS, params)
    for n in range(1, 50):
        make_busy_ticket(organization, agents, n, assign_every_other=True)

    fifty_queries, fifty_page = queries_of(manager, TICKETS, params)

    assert len(fifty_page["data"]) == 50
    assert len(fifty_queries) == len(one_queries), "\n".join(fifty_queries)


def test_the_tag_list_runs_the_same_queries_for_1_and_60_tags(manager, organization):
    from tests.factories import make_ticket
    from tickets.services import ticket_update

    ticket_update(ticket=make_ticket(organization), tags_add=["t00"])
    one_queries, one_list = queries_of(manager, "/api/tags")
    for n in range(1, 4):
        ticket_update(ticket=make_ticket(organization), tags_add=[f"t{n * 20 + m:02}" for m in range(20)])

    more_queries, more_list = queries_of(manager, "/api/tags")

    assert (len(one_list), len(more_list)) == (1, 61)
    assert len(more_queries) == len(one_queries), "\n".join(more_queries)
    assert sum("json" in query for query in more_queries) == 1  # one statement counts every tag


def test_api_key_list_runs_the_same_queries_for_1_and_20_credentials(manager, organization):
    admin = admin_of(organization)
    credential_create(organization=organization, name="Chave 0", created_by=admin)
    one_queries, one_list = queries_of(manager, API_KEYS)
    for n in range(1, 20):
        credential_create(organization=organization, name=f"Chave {n}", created_by=admin if n % 2 else None)

    twenty_queries, twenty_list = queries_of(manager, API_KEYS)

    assert len(one_list) == 1
    assert len(twenty_list) == 20
    assert len(twenty_queries) == len(one_queries), "\n".join(twenty_queries)


def test_webhook_list_runs_the_same_queries_for_1_and_10_webhooks(manager, organization, example_dns):
    def make(n):
        return make_webhook(
            organization,
            name=f"Webhook {n}",
            url=f"https://hooks.example.com/{n}",
            events=["ticket.resolvido", "ticket.resposta_publica"],
        )

    make(0)
    one_queries, one_list = queries_of(manager, WEBHOOKS)
    for n in range(1, 10):
        make(n)

    ten_queries, ten_list = queries_of(manager, WEBHOOKS)

    assert len(one_list) == 1
    assert len(ten_list) == 10
    assert len(ten_queries) == len(one_queries), "\n".join(ten_queries)
