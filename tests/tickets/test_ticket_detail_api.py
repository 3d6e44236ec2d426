"""GET /api/v1/tickets/{id}: one ticket with its public replies only."""

import uuid

import pytest

from tests.assertions import assert_success, assert_ticket_not_found, utc
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket, status_of
from tickets.services import RequesterData, ticket_update


def url(ticket_id) -> str:
    return f"/api/v1/tickets/{ticket_id}"


def test_detail_returns_the_whole_ticket(partner, organization):
    ticket = make_ticket(
        organization,
        subject="Impressora",
        description="Não imprime",
        priority="urgente",
        external_id="pedido-9",
        requester=RequesterData(name="Maria", email="maria@example.com", phone="1199", external_id="cli-9"),
    )

    response = partner.get(url(ticket.pk))

    data = assert_success(response, 200, "Ticket encontrado.")
    assert data == {
        "id": str(ticket.pk),
        "numero": 1,
        "assunto": "Impressora",
        "descricao": "Não imprime",
        "prioridade": "urgente",
        "canal_origem": "api",
        "status": {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"},
        "solicitante": {"nome": "Maria", "email": "maria@example.com", "telefone": "1199", "external_id": "cli-9"},
        "external_id": "pedido-9",
        "origem_sistema": "api",
        "criado_em": data["criado_em"],
        "atualizado_em": data["atualizado_em"],
        "resolvido_em": None,
        "respostas": [],
    }
    assert utc(data["criado_em"]) == ticket.created_at
    assert utc(data["atualizado_em"]) == ticket.updated_at


def test_detail_shows_status_and_resolution_time_of_a_resolved_ticket(partner, organization):
    ticket = ticket_update(ticket=make_ticket(organization), status=status_of(organization, "resolvido"))

    data = partner.get(url(ticket.pk)).json()["data"]

    assert data["status"] == {"nome": "Resolvido", "categoria": "resolvido", "cor": "#10B981"}
    assert utc(data["resolvido_em"]) == ticket.resolved_at


def test_detail_lists_public_replies_in_order_with_every_field(partner, organization, agent):
    ticket = make_ticket(
        organization, requester=RequesterData(name="Maria", email="maria@example.com", external_id="cli-1")
    )
    first = make_agent_reply(ticket, agent, body="Olá, estamos verificando.")
    make_agent_reply(ticket, agent, body="Nota: cliente VIP.", internal=True)
    second = make_customer_reply(ticket, body="Obrigada, aguardo.")
    third = make_agent_reply(ticket, agent, body="Resolvido.")

    response = partner.get(url(ticket.pk))

    replies = response.json()["data"]["respostas"]
    assert replies == [
        {
            "id": str(first.pk),
            "mensagem": "Olá, estamos verificando.",
            "origem": "agente",
            "editado": False,
            "autor": {"tipo": "agente", "nome": "Beatriz Atendente", "email": None, "external_id": None},
            "criado_em": replies[0]["criado_em"],
        },
        {
            "id": str(second.pk),
            "mensagem": "Obrigada, aguardo.",
            "origem": "cliente_api",
            "editado": False,
            "autor": {"tipo": "cliente", "nome": "Maria", "email": "maria@example.com", "external_id": "cli-1"},
            "criado_em": replies[1]["criado_em"],
        },
        {
            "id": str(third.pk),
            "mensagem": "Resolvido.",
            "origem": "agente",
            "editado": False,
            "autor": {"tipo": "agente", "nome": "Beatriz Atendente", "email": None, "external_id": None},
            "criado_em": replies[2]["criado_em"],
        },
    ]
    assert [utc(reply["criado_em"]) for reply in replies] == [first.created_at, second.created_at, third.created_at]


def test_detail_never_reveals_internal_notes(partner, organization, agent):
    ticket = make_ticket(organization)
    note = make_agent_reply(ticket, agent, body="Nota interna: não contar ao cliente.", internal=True)

    response = partner.get(url(ticket.pk))

    assert response.json()["data"]["respostas"] == []
    assert "Nota interna" not in response.content.decode()
    assert str(note.pk) not in response.content.decode()


def test_detail_names_each_agent_author(partner, organization, agent):
    ticket = make_ticket(organization)
    colleague = make_agent(organization, name="Carlos Suporte")
    make_agent_reply(ticket, agent, body="Primeira")
    make_agent_reply(ticket, colleague, body="Segunda")

    replies = partner.get(url(ticket.pk)).json()["data"]["respostas"]

    assert [reply["autor"]["nome"] for reply in replies] == ["Beatriz Atendente", "Carlos Suporte"]


@pytest.mark.parametrize(
    "ticket_id",
    [
        pytest.param(str(uuid.uuid4()), id="unknown-uuid"),
        pytest.param("abc", id="not-a-uuid"),
        pytest.param("123", id="number"),
        pytest.param("00000000-0000-0000-0000-00000000000z", id="almost-uuid"),
    ],
)
def test_unknown_or_malformed_id_is_404(partner, organization, ticket_id):
    make_ticket(organization)

    assert_ticket_not_found(partner.get(url(ticket_id)))


def test_ticket_of_another_organization_is_404_like_an_unknown_one(partner, other_organization):
    theirs = make_ticket(other_organization)

    response = partner.get(url(theirs.pk))
    unknown = partner.get(url(uuid.uuid4()))

    assert_ticket_not_found(response)
    assert response.json() == unknown.json()


def test_trailing_slash_is_a_404_envelope_not_a_redirect(partner, organization):
    ticket = make_ticket(organization)

    response = partner.get(f"{url(ticket.pk)}/")

    assert response.status_code == 404
    assert "Location" not in response
    body = response.json()
    assert body == {
        "success": False,
        "message": body["message"],
        "status": 404,
        "data": None,
        "errors": body["errors"],
    }
    assert set(body["errors"]) == {"field", "message"}
    assert isinstance(body["message"], str)
    assert body["message"]
