"""POST and PATCH /api/v1/tickets/{id}/respostas: the partner answers as the ticket's contact."""

import uuid

import pytest

from tests.assertions import assert_error, assert_validation_error, utc
from tests.factories import make_agent_reply, make_customer_reply, make_ticket, status_of
from tickets.models import Reply
from tickets.services import RequesterData, ticket_update


def replies_url(ticket_id) -> str:
    return f"/api/v1/tickets/{ticket_id}/respostas"


def reply_url(ticket_id, reply_id) -> str:
    return f"/api/v1/tickets/{ticket_id}/respostas/{reply_id}"


@pytest.fixture
def ticket(organization):
    return make_ticket(
        organization,
        requester=RequesterData(name="Maria Souza", email="maria@example.com", phone="1199", external_id="cli-1"),
    )


def with_status(ticket, category: str):
    return ticket_update(ticket=ticket, status=status_of(ticket.organization, category))


# --- POST: create ---------------------------------------------------------


def test_reply_returns_201_with_the_whole_reply(partner, ticket):
    response = partner.post(replies_url(ticket.pk), {"mensagem": "Ainda não funciona."}, format="json")

    assert response.status_code == 201
    reply = Reply.objects.get()
    body = response.json()
    assert body == {
        "success": True,
        "message": "Resposta enviada.",
        "data": {
            "id": str(reply.pk),
            "mensagem": "Ainda não funciona.",
            "origem": "cliente_api",
            "editado": False,
            "autor": {"tipo": "cliente", "nome": "Maria Souza", "email": "maria@example.com", "external_id": "cli-1"},
            "criado_em": body["data"]["criado_em"],
        },
        "errors": [],
    }
    assert utc(body["data"]["criado_em"]) == reply.created_at


def test_reply_is_stored_as_a_public_customer_message_of_the_ticket(partner, ticket):
    partner.post(replies_url(ticket.pk), {"mensagem": "Ainda não funciona."}, format="json")

    reply = Reply.objects.get()
    assert reply.ticket == ticket
    assert reply.origin == "cliente_api"
    assert reply.is_internal is False
    assert reply.author_contact == ticket.requester
    assert reply.author_agent is None
    assert reply.body == "Ainda não funciona."


def test_reply_author_without_email_or_external_id_has_nulls(partner, organization):
    ticket = make_ticket(organization, requester=RequesterData(name="Anônimo"))

    response = partner.post(replies_url(ticket.pk), {"mensagem": "Oi"}, format="json")

    assert response.json()["data"]["autor"] == {
        "tipo": "cliente",
        "nome": "Anônimo",
        "email": None,
        "external_id": None,
    }


def test_reply_appears_in_the_ticket_thread(partner, ticket, agent):
    make_agent_reply(ticket, agent, body="Pode reiniciar?")

    created = partner.post(replies_url(ticket.pk), {"mensagem": "Reiniciei."}, format="json").json()["data"]

    replies = partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]["respostas"]
    assert [reply["mensagem"] for reply in replies] == ["Pode reiniciar?", "Reiniciei."]
    assert replies[1] == created


def test_reply_ignores_fields_the_client_may_not_set(partner, ticket, agent):
    response = partner.post(
        replies_url(ticket.pk),
        {"mensagem": "Oi", "origem": "agente", "editado": True, "interna": True, "autor": {"tipo": "agente"}},
        format="json",
    )

    assert response.status_code == 201
    data = response.json()["data"]
    assert (data["origem"], data["editado"], data["autor"]["tipo"]) == ("cliente_api", False, "cliente")
    reply = Reply.objects.get()
    assert (reply.origin, reply.is_internal, reply.edited, reply.author_agent) == ("cliente_api", False, False, None)


@pytest.mark.parametrize("category", ["aguardando", "resolvido"])
def test_reply_reopens_a_waiting_or_resolved_ticket(partner, ticket, category):
    with_status(ticket, category)

    response = partner.post(replies_url(ticket.pk), {"mensagem": "Voltou a falhar."}, format="json")

    assert response.status_code == 201
    ticket.refresh_from_db()
    assert ticket.status.category == "aberto"
    assert ticket.resolved_at is None
    data = partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]
    assert data["status"] == {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"}
    assert data["resolvido_em"] is None


@pytest.mark.parametrize("category", ["aberto", "em_andamento"])
def test_reply_keeps_an_open_or_in_progress_status(partner, ticket, category):
    with_status(ticket, category)

    response = partner.post(replies_url(ticket.pk), {"mensagem": "Alguma novidade?"}, format="json")

    assert response.status_code == 201
    ticket.refresh_from_db()
    assert ticket.status.category == category


def test_reply_to_a_closed_ticket_is_409_and_writes_nothing(partner, ticket):
    with_status(ticket, "fechado")

    response = partner.post(replies_url(ticket.pk), {"mensagem": "Ainda preciso de ajuda."}, format="json")

    assert_error(response, 409, "Ticket fechado.", "status")
    assert not Reply.objects.exists()
    ticket.refresh_from_db()
    assert ticket.status.category == "fechado"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="missing"),
        pytest.param({"mensagem": ""}, id="blank"),
        pytest.param({"mensagem": "   \n "}, id="whitespace"),
        pytest.param({"mensagem": None}, id="null"),
        pytest.param({"mensagem": 42}, id="number"),
        pytest.param({"mensagem": "m" * 65536}, id="too-long"),
    ],
)
def test_invalid_reply_is_422_and_writes_nothing(partner, ticket, body):
    with_status(ticket, "resolvido")

    response = partner.post(replies_url(ticket.pk), body, format="json")

    assert_validation_error(response, {"mensagem"})
    assert not Reply.objects.exists()
    ticket.refresh_from_db()
    assert ticket.status.category == "resolvido"
    assert ticket.resolved_at is not None


def test_reply_of_maximum_length_is_accepted(partner, ticket):
    response = partner.post(replies_url(ticket.pk), {"mensagem": "m" * 65535}, format="json")

    assert response.status_code == 201
    assert Reply.objects.get().body == "m" * 65535


@pytest.mark.parametrize("ticket_id", [pytest.param(str(uuid.uuid4()), id="unknown"), pytest.param("abc", id="bad")])
def test_reply_to_an_unknown_ticket_is_404(partner, ticket, ticket_id):
    response = partner.post(replies_url(ticket_id), {"mensagem": "Oi"}, format="json")

    assert_error(response, 404, "Ticket não encontrado.", "id")
    assert not Reply.objects.exists()


def test_reply_to_another_organizations_ticket_is_404(partner, other_organization):
    theirs = make_ticket(other_organization)

    response = partner.post(replies_url(theirs.pk), {"mensagem": "Oi"}, format="json")

    assert_error(response, 404, "Ticket não encontrado.", "id")
    assert not Reply.objects.exists()


# --- PATCH: edit ----------------------------------------------------------


def test_edit_own_reply_returns_200_with_editado_true(partner, ticket):
    reply = make_customer_reply(ticket, body="Texto original")

    response = partner.patch(reply_url(ticket.pk, reply.pk), {"mensagem": "Texto corrigido"}, format="json")

    assert response.status_code == 200
    assert response.json() == {
        "success": True,
        "message": "Resposta atualizada.",
        "data": {
            "id": str(reply.pk),
            "mensagem": "Texto corrigido",
            "origem": "cliente_api",
            "editado": True,
            "autor": {"tipo": "cliente", "nome": "Maria Souza", "email": "maria@example.com", "external_id": "cli-1"},
            "criado_em": response.json()["data"]["criado_em"],
        },
        "errors": [],
    }
    assert utc(response.json()["data"]["criado_em"]) == reply.created_at
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Texto corrigido", True)


def test_edit_of_a_reply_created_through_the_api(partner, ticket):
    created = partner.post(replies_url(ticket.pk), {"mensagem": "Primeira versão"}, format="json").json()["data"]

    response = partner.patch(reply_url(ticket.pk, created["id"]), {"mensagem": "Segunda versão"}, format="json")

    assert response.status_code == 200
    thread = partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]["respostas"]
    assert thread == [response.json()["data"]]
    assert thread[0]["mensagem"] == "Segunda versão"
    assert thread[0]["editado"] is True
    assert Reply.objects.count() == 1


def test_edit_does_not_change_the_ticket_status(partner, ticket):
    reply = make_customer_reply(ticket)
    with_status(ticket, "resolvido")

    partner.patch(reply_url(ticket.pk, reply.pk), {"mensagem": "Corrigido"}, format="json")

    ticket.refresh_from_db()
    assert ticket.status.category == "resolvido"


def test_edit_of_an_agents_reply_is_403_and_changes_nothing(partner, ticket, agent):
    reply = make_agent_reply(ticket, agent, body="Resposta do atendente")

    response = partner.patch(reply_url(ticket.pk, reply.pk), {"mensagem": "Adulterada"}, format="json")

    assert_error(response, 403, "Acesso negado.", "resposta")
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Resposta do atendente", False)


def test_edit_of_an_internal_note_is_404_like_an_unknown_reply(partner, ticket, agent):
    note = make_agent_reply(ticket, agent, body="Nota interna", internal=True)

    response = partner.patch(reply_url(ticket.pk, note.pk), {"mensagem": "Adulterada"}, format="json")
    unknown = partner.patch(reply_url(ticket.pk, uuid.uuid4()), {"mensagem": "Adulterada"}, format="json")

    assert_error(response, 404, "Resposta não encontrada.", "resposta")
    assert response.json() == unknown.json()
    note.refresh_from_db()
    assert (note.body, note.edited) == ("Nota interna", False)


def test_edit_of_an_internal_note_with_an_invalid_body_does_not_reveal_it(partner, ticket, agent):
    note = make_agent_reply(ticket, agent, body="Nota interna", internal=True)

    response = partner.patch(reply_url(ticket.pk, note.pk), {"mensagem": ""}, format="json")

    assert_error(response, 404, "Resposta não encontrada.", "resposta")


@pytest.mark.parametrize("reply_id", [pytest.param(str(uuid.uuid4()), id="unknown"), pytest.param("abc", id="bad")])
def test_edit_of_an_unknown_reply_is_404(partner, ticket, reply_id):
    response = partner.patch(reply_url(ticket.pk, reply_id), {"mensagem": "Novo"}, format="json")

    assert_error(response, 404, "Resposta não encontrada.", "resposta")


def test_edit_of_a_reply_through_another_ticket_is_404(partner, organization, ticket):
    other_ticket = make_ticket(organization)
    reply = make_customer_reply(other_ticket, body="Original")

    response = partner.patch(reply_url(ticket.pk, reply.pk), {"mensagem": "Adulterada"}, format="json")

    assert_error(response, 404, "Resposta não encontrada.", "resposta")
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Original", False)


def test_edit_on_an_unknown_ticket_is_404(partner, ticket):
    reply = make_customer_reply(ticket, body="Original")

    response = partner.patch(reply_url(uuid.uuid4(), reply.pk), {"mensagem": "Adulterada"}, format="json")

    assert_error(response, 404, "Ticket não encontrado.", "id")
    reply.refresh_from_db()
    assert reply.body == "Original"


def test_edit_of_another_organizations_reply_is_404(partner, other_organization):
    theirs = make_ticket(other_organization)
    reply = make_customer_reply(theirs, body="Original")

    response = partner.patch(reply_url(theirs.pk, reply.pk), {"mensagem": "Adulterada"}, format="json")

    assert_error(response, 404, "Ticket não encontrado.", "id")
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Original", False)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="missing"),
        pytest.param({"mensagem": ""}, id="blank"),
        pytest.param({"mensagem": None}, id="null"),
        pytest.param({"mensagem": "m" * 65536}, id="too-long"),
    ],
)
def test_invalid_edit_is_422_and_changes_nothing(partner, ticket, body):
    reply = make_customer_reply(ticket, body="Original")

    response = partner.patch(reply_url(ticket.pk, reply.pk), body, format="json")

    assert_validation_error(response, {"mensagem"})
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Original", False)


def test_editing_an_agent_reply_is_403_even_with_an_invalid_body(partner, ticket, agent):
    reply = make_agent_reply(ticket, agent, body="Do atendente")

    response = partner.patch(reply_url(ticket.pk, reply.pk), {}, format="json")

    assert_error(response, 403, "Acesso negado.", "resposta")
    reply.refresh_from_db()
    assert reply.body == "Do atendente"
