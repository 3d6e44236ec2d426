"""SQL statements of the partner's contact lists (issue 21): fixed whatever the page size and the filters.

As in tests/test_statement_counts.py: a warm-up request first, then the second one is counted.
"""

import pytest

from tests.assertions import measured_get
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket
from tickets.services import RequesterData

CONTACTS = "/api/v1/contatos"
# The key, the count, the page.
CONTACT_LIST = 3
# The key, the contact, then the ticket list's own: the count, the page, the page's replies.
CONTACT_TICKETS = 5

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


@pytest.fixture
def busy_contact(organization):
    """One requester with 12 tickets, each with a customer reply, an agent reply and a note; 12 more contacts."""
    agent = make_agent(organization)
    maria = RequesterData(name="Maria", email="maria@example.com", phone="+55 11 5555-0000", external_id="cliente-42")
    for n in range(12):
        ticket = make_ticket(organization, subject=f"Ticket {n}", requester=maria, priority="alta")
        make_customer_reply(ticket, body="Cliente")
        make_agent_reply(ticket, agent, body="Atendente")
        make_agent_reply(ticket, agent, body="Nota", internal=True)
        make_ticket(organization, requester=RequesterData(name=f"Pessoa {n}", email=f"p{n}@example.com"))
    return organization.contacts.get(external_id="cliente-42")


@pytest.mark.parametrize("per_page", [1, 100])
@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"external_id": "cliente-42"},
        {"email": "MARIA@example.com"},
        {"telefone": "+55 (11) 5555-0000"},
        {"busca": "pessoa"},
        {"busca": "maria", "email": "maria@example.com", "telefone": "+5511 5555 0000", "external_id": "cliente-42"},
    ],
    ids=["none", "external_id", "email", "telefone", "busca", "all"],
)
def test_the_contact_list_runs_3_statements_whatever_the_page_size_and_filters(
    partner, busy_contact, per_page, filters
):
    sql, response = measured_get(partner, CONTACTS, {"por_pagina": per_page, **filters})

    assert response.json()["data"]["data"]
    assert len(sql) == CONTACT_LIST, "\n".join(sql)


@pytest.mark.parametrize("per_page", [1, 100])
@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"prioridade": "alta", "busca": "ticket 1"},
        {"cursor": ""},
        {"status": ["aberto", "resolvido"], "ordenacao": "numero", "atualizado_desde": "2000-01-01T00:00:00Z"},
        {"incluir": "atendente,contato"},
        {"incluir": "contato", "cursor": "", "ordenacao": "-atualizado_em"},
    ],
    ids=["none", "prioridade-busca", "cursor", "status-ordenacao-atualizado_desde", "incluir", "incluir-cursor"],
)
def test_a_contacts_tickets_run_5_statements_whatever_the_page_size_and_filters(
    partner, busy_contact, per_page, filters
):
    path = f"{CONTACTS}/{busy_contact.pk}/tickets"

    sql, response = measured_get(partner, path, {"por_pagina": per_page, **filters})

    tickets = response.json()["data"]["data"]
    assert tickets and all(len(ticket["respostas"]) == 2 for ticket in tickets)
    assert len(sql) == CONTACT_TICKETS, "\n".join(sql)


def test_reading_a_contact_runs_2_statements(partner, busy_contact):
    sql, _response = measured_get(partner, f"{CONTACTS}/{busy_contact.pk}")

    assert len(sql) == 2, "\n".join(sql)  # the key, the contact
