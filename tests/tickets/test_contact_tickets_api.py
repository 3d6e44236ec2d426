"""GET /api/v1/contatos/{id}/tickets: the tickets a contact asked, paginated and filtered exactly like
GET /api/v1/tickets."""

import uuid

import pytest

from tests.assertions import assert_success, assert_validation_error, numbers
from tests.contract import error_envelope
from tests.factories import make_customer_reply, make_ticket
from tickets.services import RequesterData

CONTACT_NOT_FOUND = error_envelope(404, "Contato não encontrado.", "id", "Contato inexistente nesta organização.")
MARIA = RequesterData(name="Maria", email="maria@example.com", external_id="cliente-42")

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def url(contact) -> str:
    return f"/api/v1/contatos/{contact.pk}/tickets"


@pytest.fixture
def maria_and_others(organization):
    """Maria asked tickets 1, 3 and 4 (4 urgent, 3 with the partner's id pedido-3); João asked 2 and 5."""
    joao = RequesterData(name="João", email="joao@example.com", external_id="cliente-7")
    make_ticket(organization, subject="Impressora", requester=MARIA)
    make_ticket(organization, subject="Impressora do João", requester=joao)
    make_ticket(organization, subject="Rede", requester=MARIA, external_id="pedido-3")
    make_ticket(organization, subject="Impressora de novo", requester=MARIA, priority="urgente")
    last = make_ticket(organization, subject="Rede do João", requester=joao)
    return organization.contacts.get(external_id="cliente-42"), last.requester


def test_the_contacts_tickets_are_the_ticket_lists_page_of_its_tickets(partner, organization, maria_and_others):
    maria, _joao = maria_and_others

    response = partner.get(url(maria))

    data = assert_success(response, 200, "Tickets listados.")
    assert numbers(response) == [4, 3, 1]
    assert (data["total"], data["por_pagina"], data["pagina_atual"], data["ultima_pagina"]) == (3, 15, 1, 1)
    # Each ticket exactly as the ticket list shows it.
    whole_list = assert_success(partner.get("/api/v1/tickets"), 200, "Tickets listados.")["data"]
    assert data["data"] == [ticket for ticket in whole_list if ticket["solicitante"]["external_id"] == "cliente-42"]


def test_the_ticket_lists_filters_and_pages_apply(partner, organization, maria_and_others):
    maria, joao = maria_and_others

    assert numbers(partner.get(url(maria), {"busca": "impressora"})) == [4, 1]
    assert numbers(partner.get(url(maria), {"prioridade": "urgente"})) == [4]
    assert numbers(partner.get(url(maria), {"numero": 2})) == []  # João's
    assert numbers(partner.get(url(maria), {"external_id": "pedido-3"})) == [3]
    assert numbers(partner.get(url(maria), {"por_pagina": 2, "page": 2})) == [1]
    assert numbers(partner.get(url(joao), {"busca": "rede"})) == [5]


def test_cursor_mode_walks_the_contacts_tickets(partner, organization, maria_and_others):
    maria, _joao = maria_and_others

    first = assert_success(partner.get(url(maria), {"por_pagina": 2, "cursor": ""}), 200, "Tickets listados.")
    second = assert_success(
        partner.get(url(maria), {"por_pagina": 2, "cursor": first["proximo_cursor"]}), 200, "Tickets listados."
    )

    assert [t["numero"] for t in first["data"]] + [t["numero"] for t in second["data"]] == [4, 3, 1]
    assert (first["total"], second["pagina_atual"], second["proximo_cursor"]) == (3, 2, None)


def test_public_replies_come_with_each_ticket(partner, organization):
    ticket = make_ticket(organization, requester=MARIA)
    make_customer_reply(ticket, body="Alguma novidade?")

    [item] = assert_success(partner.get(url(ticket.requester)), 200, "Tickets listados.")["data"]

    assert [reply["mensagem"] for reply in item["respostas"]] == ["Alguma novidade?"]


def test_no_match_is_an_empty_page_with_last_page_1(partner, organization, maria_and_others):
    maria, _joao = maria_and_others

    data = assert_success(partner.get(url(maria), {"busca": "nada disso"}), 200, "Tickets listados.")

    assert data == {"data": [], "total": 0, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1}


@pytest.mark.parametrize(
    ("params", "field"),
    [({"por_pagina": 0}, "por_pagina"), ({"prioridade": "x"}, "prioridade"), ({"cursor": "forjado"}, "cursor")],
)
def test_a_bad_query_value_is_a_422_on_its_parameter(partner, organization, maria_and_others, params, field):
    maria, _joao = maria_and_others

    assert_validation_error(partner.get(url(maria), params), field)


@pytest.mark.parametrize("which", ["unknown", "foreign", "not-a-uuid"])
def test_an_unknown_or_foreign_contact_is_the_404_even_with_a_bad_query(partner, other_organization, which):
    foreign = make_ticket(other_organization, requester=MARIA).requester
    path = {"unknown": uuid.uuid4(), "foreign": foreign.pk, "not-a-uuid": "x"}[which]

    for params in ({}, {"por_pagina": 0}):
        response = partner.get(f"/api/v1/contatos/{path}/tickets", params)
        assert (response.status_code, response.json()) == (404, CONTACT_NOT_FOUND)


def test_another_organizations_tickets_never_appear(partner, organization, other_organization):
    ours = make_ticket(organization, subject="Nosso", requester=MARIA, external_id="pedido-1")
    make_ticket(other_organization, subject="Nosso também", requester=MARIA, external_id="pedido-1")

    for params in ({}, {"busca": "nosso"}, {"external_id": "pedido-1"}, {"numero": 1}, {"cursor": ""}):
        data = assert_success(partner.get(url(ours.requester), params), 200, "Tickets listados.")
        assert [item["id"] for item in data["data"]] == [str(ours.pk)], params
        assert data["total"] == 1
