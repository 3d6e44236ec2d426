"""A key of organization A sees nothing of organization B: every B id answers as a missing one."""

import uuid

import pytest

from helpdesk.models import Agent
from tests.assertions import organization_snapshot
from tests.contract import REPLY_NOT_FOUND, TICKET_NOT_FOUND
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket
from tickets.models import Reply, Ticket
from tickets.services import RequesterData

TICKETS = "/api/v1/tickets"
MARKER = "GLOBEX-CONFIDENCIAL"


@pytest.fixture
def own_ticket(organization):
    return make_ticket(
        organization,
        subject="Impressora da Acme",
        description="Não imprime",
        requester=RequesterData(name="Ana Acme", email="ana@acme.test", external_id="acme-cli-1"),
    )


@pytest.fixture
def foreign_data(other_organization):
    """Organization B's data: tickets, a contact, replies of every kind and an agent."""
    requester = RequesterData(name=f"Bruno {MARKER}", email="bruno@globex.test", external_id="cli-compartilhado")
    first = make_ticket(
        other_organization,
        subject=f"Assunto {MARKER}",
        description=f"Descrição {MARKER}",
        requester=requester,
        external_id="pedido-compartilhado",
        priority="urgente",
    )
    second = make_ticket(other_organization, subject=f"Outro {MARKER}", requester=requester)
    agent = make_agent(other_organization, name=f"Atendente {MARKER}")
    return {
        "ticket": first,
        "second_ticket": second,
        "agent": agent,
        "customer_reply": make_customer_reply(first, body=f"Cliente {MARKER}"),
        "agent_reply": make_agent_reply(first, agent, body=f"Agente {MARKER}"),
        "note": make_agent_reply(first, agent, body=f"Nota {MARKER}", internal=True),
    }


def listed_ids(response) -> list[str]:
    assert response.status_code == 200
    return [item["id"] for item in response.json()["data"]["data"]]


def test_get_ticket_of_another_organization_is_404_exactly_like_a_missing_one(partner, foreign_data):
    foreign_response = partner.get(f"{TICKETS}/{foreign_data['ticket'].pk}")
    missing_response = partner.get(f"{TICKETS}/{uuid.uuid4()}")

    assert foreign_response.status_code == 404
    assert foreign_response.json() == TICKET_NOT_FOUND
    assert missing_response.json() == foreign_response.json()
    assert MARKER.encode() not in foreign_response.content


def test_reply_to_ticket_of_another_organization_is_404_and_writes_nothing(partner, foreign_data, other_organization):
    before = organization_snapshot(other_organization)

    response = partner.post(f"{TICKETS}/{foreign_data['ticket'].pk}/respostas", {"mensagem": "Intrusão"}, format="json")

    assert response.status_code == 404
    assert response.json() == TICKET_NOT_FOUND
    assert organization_snapshot(other_organization) == before
    assert not Reply.objects.filter(body="Intrusão").exists()


@pytest.mark.parametrize("reply", ["customer_reply", "agent_reply", "note"])
def test_edit_reply_through_another_organizations_ticket_is_404(partner, foreign_data, other_organization, reply):
    before = organization_snapshot(other_organization)

    response = partner.patch(
        f"{TICKETS}/{foreign_data['ticket'].pk}/respostas/{foreign_data[reply].pk}",
        {"mensagem": "Intrusão"},
        format="json",
    )

    assert response.status_code == 404
    assert response.json() == TICKET_NOT_FOUND
    assert organization_snapshot(other_organization) == before


@pytest.mark.parametrize("reply", ["customer_reply", "agent_reply", "note"])
def test_edit_reply_of_another_organization_through_own_ticket_is_404(
    partner, own_ticket, foreign_data, other_organization, reply
):
    before = organization_snapshot(other_organization)

    response = partner.patch(
        f"{TICKETS}/{own_ticket.pk}/respostas/{foreign_data[reply].pk}", {"mensagem": "Intrusão"}, format="json"
    )

    assert response.status_code == 404
    assert response.json() == REPLY_NOT_FOUND
    assert organization_snapshot(other_organization) == before


def test_own_reply_cannot_be_edited_through_another_organizations_ticket(partner, own_ticket, foreign_data):
    own_reply = make_customer_reply(own_ticket, body="Minha resposta")

    response = partner.patch(
        f"{TICKETS}/{foreign_data['ticket'].pk}/respostas/{own_reply.pk}", {"mensagem": "Mudou"}, format="json"
    )

    assert response.status_code == 404
    assert response.json() == TICKET_NOT_FOUND
    own_reply.refresh_from_db()
    assert (own_reply.body, own_reply.edited) == ("Minha resposta", False)


def test_list_never_shows_another_organizations_tickets(partner, own_ticket, foreign_data):
    response = partner.get(TICKETS, {"por_pagina": 100})

    assert listed_ids(response) == [str(own_ticket.pk)]
    assert response.json()["data"]["total"] == 1
    assert response.json()["data"]["ultima_pagina"] == 1
    assert MARKER.encode() not in response.content


@pytest.mark.parametrize(
    "busca",
    [MARKER, MARKER.lower(), "Assunto GLOBEX", "Descrição GLOBEX", "Bruno", "bruno@globex.test", "globex", "Outro"],
)
def test_busca_never_finds_another_organizations_tickets(partner, own_ticket, foreign_data, busca):
    response = partner.get(TICKETS, {"busca": busca})

    assert listed_ids(response) == []
    assert response.json()["data"]["total"] == 0


def test_busca_by_number_finds_only_the_own_ticket_with_that_number(partner, own_ticket, foreign_data):
    assert foreign_data["ticket"].number == own_ticket.number == 1

    response = partner.get(TICKETS, {"busca": "1"})

    assert listed_ids(response) == [str(own_ticket.pk)]


def test_numero_filter_finds_only_the_own_ticket_with_that_number(partner, own_ticket, foreign_data):
    assert foreign_data["second_ticket"].number == 2

    own = partner.get(TICKETS, {"numero": 1})
    foreign_only = partner.get(TICKETS, {"numero": 2})

    assert listed_ids(own) == [str(own_ticket.pk)]
    assert listed_ids(foreign_only) == []


def test_prioridade_filter_never_finds_another_organizations_tickets(partner, own_ticket, foreign_data):
    response = partner.get(TICKETS, {"prioridade": "urgente"})

    assert listed_ids(response) == []


def test_atendentes_never_lists_another_organizations_agents(partner, organization, agent, foreign_data):
    response = partner.get("/api/v1/atendentes")

    assert response.status_code == 200
    own_agents = Agent.objects.filter(organization=organization, is_active=True)
    assert sorted(listed_ids(response)) == sorted(str(a.pk) for a in own_agents)
    assert str(agent.pk) in listed_ids(response)
    assert str(foreign_data["agent"].pk) not in listed_ids(response)
    assert response.json()["data"]["total"] == own_agents.count()
    assert MARKER.encode() not in response.content


def test_external_id_of_another_organization_creates_a_new_ticket(
    partner, organization, foreign_data, other_organization
):
    before = organization_snapshot(other_organization)
    body = {
        "assunto": "Pedido",
        "descricao": "Mesmo id externo",
        "external_id": "pedido-compartilhado",
        "solicitante": {"nome": "Ana"},
    }

    response = partner.post(TICKETS, body, format="json")

    assert response.status_code == 201
    assert response.json()["message"] == "Ticket criado."
    data = response.json()["data"]
    assert data["id"] != str(foreign_data["ticket"].pk)
    assert (data["numero"], data["assunto"], data["external_id"]) == (1, "Pedido", "pedido-compartilhado")
    assert Ticket.objects.get(pk=data["id"]).organization == organization
    assert organization_snapshot(other_organization) == before


def test_solicitante_external_id_of_another_organization_creates_a_new_contact(
    partner, organization, foreign_data, other_organization
):
    before = organization_snapshot(other_organization)
    body = {
        "assunto": "Pedido",
        "descricao": "Mesmo cliente externo",
        "solicitante": {
            "nome": "Carla",
            "email": "carla@acme.test",
            "telefone": "+55 11 90000-0000",
            "external_id": "cli-compartilhado",
        },
    }

    response = partner.post(TICKETS, body, format="json")

    assert response.status_code == 201
    assert response.json()["data"]["solicitante"] == {
        "nome": "Carla",
        "email": "carla@acme.test",
        "telefone": "+55 11 90000-0000",
        "external_id": "cli-compartilhado",
    }
    contact = Ticket.objects.get(pk=response.json()["data"]["id"]).requester
    assert contact.organization == organization
    assert contact.pk != foreign_data["ticket"].requester_id
    # B's contact had no phone: A's request must not fill it in.
    assert organization_snapshot(other_organization) == before


def test_solicitante_email_of_another_organization_creates_a_new_contact(
    partner, organization, foreign_data, other_organization
):
    before = organization_snapshot(other_organization)
    body = {
        "assunto": "Pedido",
        "descricao": "Mesmo e-mail",
        "solicitante": {"nome": "B", "email": "bruno@globex.test"},
    }

    response = partner.post(TICKETS, body, format="json")

    assert response.status_code == 201
    assert response.json()["data"]["solicitante"]["nome"] == "B"
    contact = Ticket.objects.get(pk=response.json()["data"]["id"]).requester
    assert contact.organization == organization
    assert organization_snapshot(other_organization) == before


def test_nothing_of_the_other_organization_changes_under_a_barrage_of_attempts(
    partner, own_ticket, foreign_data, other_organization
):
    before = organization_snapshot(other_organization)
    ticket_id = foreign_data["ticket"].pk

    partner.get(f"{TICKETS}/{ticket_id}")
    partner.post(f"{TICKETS}/{ticket_id}/respostas", {"mensagem": "x"}, format="json")
    for reply in ("customer_reply", "agent_reply", "note"):
        partner.patch(f"{TICKETS}/{ticket_id}/respostas/{foreign_data[reply].pk}", {"mensagem": "x"}, format="json")
        partner.patch(f"{TICKETS}/{own_ticket.pk}/respostas/{foreign_data[reply].pk}", {"mensagem": "x"}, format="json")
    partner.get(TICKETS, {"busca": MARKER})
    partner.get("/api/v1/atendentes")

    assert organization_snapshot(other_organization) == before


def test_isolation_holds_in_the_other_direction_too(other_partner, own_ticket, foreign_data):
    response = other_partner.get(TICKETS)

    assert sorted(listed_ids(response)) == sorted(
        [str(foreign_data["ticket"].pk), str(foreign_data["second_ticket"].pk)]
    )
    assert other_partner.get(f"{TICKETS}/{own_ticket.pk}").json() == TICKET_NOT_FOUND
