"""Internal notes never leave the building: no partner payload contains one, in any shape."""

import pytest

from integrations import delivery as delivery_module
from integrations.delivery import delivery_attempt
from integrations.models import WebhookDelivery
from tests.contract import REPLY_NOT_FOUND
from tests.factories import make_agent_reply, make_customer_reply, make_ticket, make_webhook
from tests.integrations.test_webhook_delivery import FakeClock, FakeHTTP, FakeResponse
from tickets.models import Reply, Ticket
from tickets.services import RequesterData, reply_edit_as_agent, ticket_update

TICKETS = "/api/v1/tickets"
MARKER = "NOTA-INTERNA-7f3a9c"


@pytest.fixture
def thread_with_notes(organization, agent):
    """A ticket whose only mention of MARKER is in internal notes, between public replies."""
    ticket = make_ticket(
        organization,
        subject="Impressora",
        description="Não imprime",
        requester=RequesterData(name="Ana", email="ana@example.test", external_id="cli-1"),
    )
    public = [
        make_customer_reply(ticket, body="Ainda não funciona"),
        make_agent_reply(ticket, agent, body="Vamos verificar"),
    ]
    note = make_agent_reply(ticket, agent, body=f"Cliente difícil, {MARKER}", internal=True)
    public.append(make_customer_reply(ticket, body="Obrigada"))
    edited_note = make_agent_reply(ticket, agent, body="rascunho", internal=True)
    reply_edit_as_agent(reply=edited_note, agent=agent, body=f"Revisado: {MARKER}")
    return {"ticket": ticket, "public": public, "notes": [note, edited_note]}


def assert_no_note_in(response, thread_with_notes):
    assert response.status_code < 300, response.content
    assert MARKER.encode() not in response.content
    assert b"rascunho" not in response.content
    for note in thread_with_notes["notes"]:
        assert str(note.pk).encode() not in response.content


def test_ticket_detail_shows_public_replies_and_no_internal_note(partner, thread_with_notes):
    response = partner.get(f"{TICKETS}/{thread_with_notes['ticket'].pk}")

    assert_no_note_in(response, thread_with_notes)
    replies = response.json()["data"]["respostas"]
    assert [r["id"] for r in replies] == [str(r.pk) for r in thread_with_notes["public"]]
    assert [r["mensagem"] for r in replies] == ["Ainda não funciona", "Vamos verificar", "Obrigada"]


def test_ticket_list_shows_public_replies_and_no_internal_note(partner, thread_with_notes):
    response = partner.get(TICKETS)

    assert_no_note_in(response, thread_with_notes)
    [ticket] = response.json()["data"]["data"]
    assert [r["id"] for r in ticket["respostas"]] == [str(r.pk) for r in thread_with_notes["public"]]


@pytest.mark.parametrize("busca", [MARKER, MARKER.lower(), "NOTA-INTERNA", "Cliente difícil", "Revisado", "rascunho"])
def test_busca_never_matches_a_ticket_through_an_internal_note(partner, thread_with_notes, busca):
    response = partner.get(TICKETS, {"busca": busca})

    assert_no_note_in(response, thread_with_notes)
    assert response.json()["data"]["data"] == []
    assert response.json()["data"]["total"] == 0


def test_busca_matching_the_ticket_otherwise_still_hides_its_notes(partner, thread_with_notes):
    response = partner.get(TICKETS, {"busca": "Impressora"})

    assert_no_note_in(response, thread_with_notes)
    assert [t["id"] for t in response.json()["data"]["data"]] == [str(thread_with_notes["ticket"].pk)]


def test_reply_create_response_contains_no_internal_note(partner, thread_with_notes):
    response = partner.post(
        f"{TICKETS}/{thread_with_notes['ticket'].pk}/respostas", {"mensagem": "Mais uma"}, format="json"
    )

    assert response.status_code == 201
    assert_no_note_in(response, thread_with_notes)
    assert response.json()["data"]["mensagem"] == "Mais uma"


def test_reply_edit_response_contains_no_internal_note(partner, thread_with_notes):
    own = thread_with_notes["public"][0]

    response = partner.patch(
        f"{TICKETS}/{thread_with_notes['ticket'].pk}/respostas/{own.pk}", {"mensagem": "Corrigido"}, format="json"
    )

    assert response.status_code == 200
    assert_no_note_in(response, thread_with_notes)
    assert response.json()["data"]["mensagem"] == "Corrigido"


def test_ticket_create_replay_by_external_id_contains_no_internal_note(partner, organization, agent):
    body = {"assunto": "Pedido", "descricao": "Atrasado", "external_id": "pedido-9", "solicitante": {"nome": "Ana"}}
    ticket_id = partner.post(TICKETS, body, format="json").json()["data"]["id"]
    make_agent_reply(Ticket.objects.get(pk=ticket_id), agent, body=MARKER, internal=True)

    response = partner.post(TICKETS, body, format="json")

    assert response.status_code == 200
    assert response.json()["message"] == "Ticket já existente para este external_id."
    assert response.json()["data"]["respostas"] == []
    assert MARKER.encode() not in response.content


@pytest.mark.parametrize("index", [0, 1])
def test_internal_note_cannot_be_edited_and_answers_as_missing(partner, thread_with_notes, index):
    note = thread_with_notes["notes"][index]
    before = Reply.objects.filter(pk=note.pk).values("body", "edited", "updated_at", "is_internal").get()

    response = partner.patch(
        f"{TICKETS}/{thread_with_notes['ticket'].pk}/respostas/{note.pk}", {"mensagem": "Exposta"}, format="json"
    )

    assert response.status_code == 404
    assert response.json() == REPLY_NOT_FOUND
    assert Reply.objects.filter(pk=note.pk).values("body", "edited", "updated_at", "is_internal").get() == before


def test_notes_stay_hidden_after_the_customer_replies_and_edits(partner, thread_with_notes):
    ticket = thread_with_notes["ticket"]
    created = partner.post(f"{TICKETS}/{ticket.pk}/respostas", {"mensagem": "Nova"}, format="json").json()["data"]
    partner.patch(f"{TICKETS}/{ticket.pk}/respostas/{created['id']}", {"mensagem": "Nova editada"}, format="json")

    response = partner.get(f"{TICKETS}/{ticket.pk}")

    assert_no_note_in(response, thread_with_notes)
    assert [r["mensagem"] for r in response.json()["data"]["respostas"]] == [
        "Ainda não funciona",
        "Vamos verificar",
        "Obrigada",
        "Nova editada",
    ]


# --- `incluir` (issue 21): blocks, the feed and webhook deliveries with blocks carry no note either ----------

INCLUIR = {"incluir": "atendente,contato"}


@pytest.mark.parametrize("path", ["detail", TICKETS, f"{TICKETS}/alteracoes", "/api/v1/eventos"])
def test_answers_with_every_block_contain_no_internal_note(partner, thread_with_notes, path):
    ticket = thread_with_notes["ticket"]
    ticket_update(ticket=ticket, assignee=thread_with_notes["notes"][0].author_agent)
    path = f"{TICKETS}/{ticket.pk}" if path == "detail" else path

    response = partner.get(path, INCLUIR)

    assert_no_note_in(response, thread_with_notes)
    assert b'"atendente":{' in response.content and b'"contato_id":' in response.content


def test_a_webhook_with_every_block_is_sent_no_internal_note(organization, agent, example_dns, monkeypatch):
    monkeypatch.setattr("integrations.tasks.deliver_webhook.apply_async", lambda **kwargs: None)
    clock = FakeClock(1_800_000_000)
    http = FakeHTTP(clock)
    monkeypatch.setattr(delivery_module, "time", clock)
    monkeypatch.setattr(delivery_module, "_session", lambda: http)
    make_webhook(organization, blocks=["atendente", "contato"])
    ticket = make_ticket(organization)
    make_agent_reply(ticket, agent, body=f"Nota {MARKER}", internal=True)
    make_agent_reply(ticket, agent, body="Resposta pública")
    deliveries = list(WebhookDelivery.objects.all())
    http.respond(*[FakeResponse(200) for _ in deliveries])

    for delivery in deliveries:
        delivery_attempt(delivery_id=delivery.pk, expected_attempts=0)

    assert len(http.calls) == 1  # the public reply's; a note is no event
    assert MARKER.encode() not in http.calls[0]["body"]
    assert b'"contato_id":' in http.calls[0]["body"]
