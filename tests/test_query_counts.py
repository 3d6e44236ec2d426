"""Partner lists run a fixed number of queries, however many rows they show."""

import pytest

from tests.assertions import queries_of
from tests.factories import make_agent, make_agent_reply, make_busy_ticket, make_customer_reply, png_file

TICKETS = "/api/v1/tickets"
AGENTS = "/api/v1/atendentes"

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def test_ticket_list_runs_the_same_queries_for_1_and_100_tickets(partner, organization, agent):
    make_busy_ticket(organization, [agent], 0)
    one_queries, one_page = queries_of(partner, TICKETS, {"por_pagina": 100})
    for n in range(1, 100):
        make_busy_ticket(organization, [agent], n)

    hundred_queries, hundred_page = queries_of(partner, TICKETS, {"por_pagina": 100})

    assert len(one_page["data"]) == 1
    assert len(hundred_page["data"]) == 100
    assert all(len(ticket["respostas"]) == 3 for ticket in hundred_page["data"])
    assert len(hundred_queries) == len(one_queries), "\n".join(hundred_queries)


def test_ticket_list_with_filters_runs_the_same_queries_for_1_and_100_tickets(partner, organization, agent):
    params = {"por_pagina": 100, "busca": "Ticket", "prioridade": "media"}
    make_busy_ticket(organization, [agent], 0)
    one_queries, _ = queries_of(partner, TICKETS, params)
    for n in range(1, 100):
        make_busy_ticket(organization, [agent], n)

    hundred_queries, hundred_page = queries_of(partner, TICKETS, params)

    assert len(hundred_page["data"]) == 100
    assert len(hundred_queries) == len(one_queries), "\n".join(hundred_queries)


def test_ticket_detail_runs_the_same_queries_for_1_and_50_replies(partner, organization, agent):
    ticket = make_busy_ticket(organization, [agent], 0)
    few_queries, few = queries_of(partner, f"{TICKETS}/{ticket.pk}")
    for n in range(1, 13):
        make_customer_reply(ticket, body=f"c{n}")
        make_agent_reply(ticket, agent, body=f"a{n}")
        make_agent_reply(ticket, agent, body=f"n{n}", internal=True)

    many_queries, many = queries_of(partner, f"{TICKETS}/{ticket.pk}")

    assert (len(few["respostas"]), len(many["respostas"])) == (3, 27)
    assert len(many_queries) == len(few_queries), "\n".join(many_queries)


def test_agent_list_runs_the_same_queries_for_1_and_10_agents(partner, organization):
    # organization_create makes the admin an agent: deactivate it so the first count is exactly 1.
    organization.agents.update(is_active=False)
    make_agent(organization, name="Agente 0", avatar=png_file())
    one_queries, one_page = queries_of(partner, AGENTS)
    for n in range(1, 10):
        make_agent(organization, name=f"Agente {n}", avatar=png_file() if n % 2 else None)

    ten_queries, ten_page = queries_of(partner, AGENTS)

    assert len(one_page["data"]) == 1
    assert len(ten_page["data"]) == 10
    assert sum(agent["avatar_url"] is not None for agent in ten_page["data"]) == 6
    assert len(ten_queries) == len(one_queries), "\n".join(ten_queries)


def test_ticket_list_with_issue_21_filters_runs_the_same_queries_for_1_and_100_tickets(partner, organization, agent):
    params = {
        "por_pagina": 100,
        "status": ["aberto", "em_andamento"],
        "atualizado_desde": "2000-01-01T00:00:00Z",
        "criado_desde": "2000-01-01T00:00:00Z",
        "criado_ate": "2100-01-01T00:00:00Z",
        "ordenacao": "atualizado_em",
    }
    make_busy_ticket(organization, [agent], 0)
    one_queries, _ = queries_of(partner, TICKETS, params)
    for n in range(1, 100):
        make_busy_ticket(organization, [agent], n)

    hundred_queries, hundred_page = queries_of(partner, TICKETS, params)

    assert len(hundred_page["data"]) == 100
    assert len(hundred_queries) == len(one_queries), "\n".join(hundred_queries)
