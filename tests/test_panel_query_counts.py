"""Panel lists (JWT) run a fixed number of queries, however many rows they show."""

import socket

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from helpdesk.models import User
from integrations import webhook_urls
from integrations.services import credential_create, webhook_create
from tests.factories import PASSWORD, make_agent, make_agent_reply, make_customer_reply, make_ticket
from tickets.services import ticket_update

TICKETS = "/api/tickets"
API_KEYS = "/api/api-keys"
WEBHOOKS = "/api/webhooks"


@pytest.fixture(autouse=True)
def generous_rate_limit(settings):
    settings.PANEL_RATE_LIMIT = "1000/m"


@pytest.fixture
def public_dns(monkeypatch, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False

    def resolve(host, port):
        if host != "hooks.example.com":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return ["93.184.216.34"]

    monkeypatch.setattr(webhook_urls, "resolve_host", resolve)


@pytest.fixture
def manager(organization) -> APIClient:
    """The organization's admin: an agent with api_publica:gerenciar."""
    client = APIClient()
    email = User.objects.get(organization=organization, is_staff=True).email
    response = client.post("/api/auth/login", {"email": email, "senha": PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['data']['access_token']}")
    return client


def queries_of(client, path, params=None) -> tuple[list[str], object]:
    # Warm-up first, so nothing done once per process or per minute lands in the measurement.
    assert client.get(path, params).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, params)
    assert response.status_code == 200, response.content
    return [query["sql"] for query in captured.captured_queries], response.json()["data"]


def make_busy_ticket(organization, agents, n: int):
    """Public replies and internal notes from several authors, and an assignee on every other ticket."""
    ticket = make_ticket(organization, subject=f"Ticket {n}")
    make_customer_reply(ticket, body=f"Cliente {n}")
    make_agent_reply(ticket, agents[n % len(agents)], body=f"Atendente {n}")
    make_agent_reply(ticket, agents[(n + 1) % len(agents)], body=f"Nota {n}", internal=True)
    make_customer_reply(ticket, body=f"Cliente de novo {n}")
    if n % 2 == 0:
        ticket_update(ticket=ticket, assignee=agents[n % len(agents)])
    return ticket


def test_panel_ticket_list_runs_the_same_queries_for_1_and_50_tickets(manager, organization):
    agents = [make_agent(organization, name=f"Agente {n}") for n in range(3)]
    make_busy_ticket(organization, agents, 0)
    one_queries, one_page = queries_of(manager, TICKETS, {"por_pagina": 100})
    for n in range(1, 50):
        make_busy_ticket(organization, agents, n)

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
    make_busy_ticket(organization, agents, 0)
    one_queries, _ = queries_of(manager, TICKETS, params)
    for n in range(1, 50):
        make_busy_ticket(organization, agents, n)

    fifty_queries, fifty_page = queries_of(manager, TICKETS, params)

    assert len(fifty_page["data"]) == 50
    assert len(fifty_queries) == len(one_queries), "\n".join(fifty_queries)


def test_api_key_list_runs_the_same_queries_for_1_and_20_credentials(manager, organization):
    admin = User.objects.get(organization=organization, is_staff=True)
    credential_create(organization=organization, name="Chave 0", created_by=admin)
    one_queries, one_list = queries_of(manager, API_KEYS)
    for n in range(1, 20):
        credential_create(organization=organization, name=f"Chave {n}", created_by=admin if n % 2 else None)

    twenty_queries, twenty_list = queries_of(manager, API_KEYS)

    assert len(one_list) == 1
    assert len(twenty_list) == 20
    assert len(twenty_queries) == len(one_queries), "\n".join(twenty_queries)


def test_webhook_list_runs_the_same_queries_for_1_and_10_webhooks(manager, organization, public_dns):
    def make(n):
        return webhook_create(
            organization=organization,
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
