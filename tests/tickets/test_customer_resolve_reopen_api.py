"""POST /api/v1/tickets/{id}/resolver and /reabrir: the customer closes the loop (issue 21, part 3)."""

import json
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from helpdesk.models import AuditRecord
from integrations.models import IdempotencyRecord, WebhookDelivery, WebhookEvent
from tests.assertions import assert_error, assert_success, utc
from tests.contract import TICKET_SUMMARY_ORDER, error_envelope
from tests.factories import credential_of, make_agent_reply, make_customer_reply, make_ticket, make_webhook, status_of
from tickets.models import StatusCategory, Ticket
from tickets.services import RequesterData, status_create, status_delete, ticket_update

CATEGORIES = ["aberto", "em_andamento", "aguardando", "resolvido", "fechado"]
DEFAULT_STATUS = {
    "aberto": {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"},
    "em_andamento": {"nome": "Em andamento", "categoria": "em_andamento", "cor": "#F59E0B"},
    "aguardando": {"nome": "Aguardando cliente", "categoria": "aguardando", "cor": "#8B5CF6"},
    "resolvido": {"nome": "Resolvido", "categoria": "resolvido", "cor": "#10B981"},
    "fechado": {"nome": "Fechado", "categoria": "fechado", "cor": "#6B7280"},
}
MESSAGE = {"resolver": "Ticket resolvido.", "reabrir": "Ticket reaberto."}
CLOSED_DETAIL = "Um ticket fechado não pode ser resolvido nem reaberto pelo cliente."

# (action, category before) -> category after; None: 409 Ticket fechado.
TRANSITIONS = {
    ("resolver", "aberto"): "resolvido",
    ("resolver", "em_andamento"): "resolvido",
    ("resolver", "aguardando"): "resolvido",
    ("resolver", "resolvido"): "resolvido",
    ("resolver", "fechado"): None,
    ("reabrir", "aberto"): "aberto",
    ("reabrir", "em_andamento"): "em_andamento",
    ("reabrir", "aguardando"): "aberto",
    ("reabrir", "resolvido"): "aberto",
    ("reabrir", "fechado"): None,
}
MOVES = {key for key, after in TRANSITIONS.items() if after is not None and after != key[1]}


def url(ticket_id, action: str) -> str:
    return f"/api/v1/tickets/{ticket_id}/{action}"


@pytest.fixture
def ticket(organization):
    ticket = make_ticket(
        organization,
        requester=RequesterData(name="Maria Souza", email="maria@example.com", phone="1199", external_id="cli-1"),
        external_id="pedido-1",
        priority="alta",
    )
    make_customer_reply(ticket, body="Não chegou.")
    return ticket


def in_category(ticket: Ticket, category: str) -> Ticket:
    """The ticket moved by an agent's change (the admin's path), as partners find it."""
    if ticket.status.category != category:
        ticket_update(ticket=ticket, status=status_of(ticket.organization, category))
    return Ticket.objects.select_related("status").get(pk=ticket.pk)


def stored(ticket: Ticket) -> dict:
    """Every stored column of the ticket's row (its place in the change list included)."""
    return Ticket.objects.filter(pk=ticket.pk).values().get()


def status_records(ticket: Ticket) -> list[AuditRecord]:
    return list(
        AuditRecord.objects.filter(action="ticket.status_alterado", resource_id=str(ticket.pk)).order_by("created_at")
    )


# --- answers --------------------------------------------------------------------------------------


def test_resolve_answers_200_with_the_ticket_exactly_as_get_shows_it(partner, ticket):
    response = partner.post(url(ticket.pk, "resolver"))

    data = assert_success(response, 200, "Ticket resolvido.")
    ticket.refresh_from_db()
    assert data == partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]
    assert data["status"] == DEFAULT_STATUS["resolvido"]
    assert utc(data["resolvido_em"]) == ticket.resolved_at
    assert utc(data["atualizado_em"]) == ticket.updated_at
    assert [reply["mensagem"] for reply in data["respostas"]] == ["Não chegou."]
    assert list(data) == [*TICKET_SUMMARY_ORDER, "respostas"]


def test_reopen_answers_200_with_the_ticket_exactly_as_get_shows_it(partner, ticket):
    in_category(ticket, "resolvido")

    response = partner.post(url(ticket.pk, "reabrir"))

    data = assert_success(response, 200, "Ticket reaberto.")
    assert data == partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]
    assert data["status"] == DEFAULT_STATUS["aberto"]
    assert data["resolvido_em"] is None


@pytest.mark.parametrize(("action", "before"), sorted(TRANSITIONS), ids=lambda value: value)
def test_every_category_moves_as_the_transition_table_says(partner, ticket, action, before):
    ticket = in_category(ticket, before)
    row_before = stored(ticket)
    records_before = len(status_records(ticket))

    response = partner.post(url(ticket.pk, action))

    after = TRANSITIONS[(action, before)]
    ticket.refresh_from_db()
    if after is None:
        assert response.json() == error_envelope(409, "Ticket fechado.", "status", CLOSED_DETAIL)
        assert stored(ticket) == row_before
        return
    data = assert_success(response, 200, MESSAGE[action])
    assert data["status"] == DEFAULT_STATUS[after]
    assert ticket.status.category == after
    assert (ticket.resolved_at is not None) == (after == "resolvido")
    assert (utc(data["resolvido_em"]) if data["resolvido_em"] else None) == ticket.resolved_at
    if (action, before) in MOVES:
        assert ticket.updated_at > row_before["updated_at"]
        assert (ticket.change_tx, ticket.change_seq) > (row_before["change_tx"], row_before["change_seq"])
        assert len(status_records(ticket)) == records_before + 1
    else:  # nothing changes: no write, no move in the change list, no record
        assert stored(ticket) == row_before
        assert len(status_records(ticket)) == records_before


def test_resolving_a_resolved_ticket_keeps_its_first_resolution(partner, ticket):
    first = assert_success(partner.post(url(ticket.pk, "resolver")), 200, "Ticket resolvido.")

    again = assert_success(partner.post(url(ticket.pk, "resolver")), 200, "Ticket resolvido.")

    assert again == first


def test_a_resolved_ticket_in_another_resolved_status_stays_in_it(partner, organization, ticket):
    archived = status_create(
        organization_id=organization.pk,
        name="Resolvido pelo cliente",
        category="resolvido",
        color="#123456",
        position=9,
    )
    ticket_update(ticket=ticket, status=archived)

    data = assert_success(partner.post(url(ticket.pk, "resolver")), 200, "Ticket resolvido.")

    assert data["status"] == {"nome": "Resolvido pelo cliente", "categoria": "resolvido", "cor": "#123456"}


def test_resolve_goes_to_the_organizations_first_resolved_status(partner, organization, ticket):
    first = status_create(
        organization_id=organization.pk, name="Concluído", category="resolvido", color="#00AA00", position=0
    )

    assert_success(partner.post(url(ticket.pk, "resolver")), 200, "Ticket resolvido.")

    ticket.refresh_from_db()
    assert ticket.status == first


def test_the_audit_trail_records_each_move_as_the_partners_key(partner, api_key, ticket):
    partner.post(url(ticket.pk, "resolver"))
    partner.post(url(ticket.pk, "reabrir"))

    credential = credential_of(api_key)
    assert [(record.actor_type, record.actor_id, record.changes) for record in status_records(ticket)] == [
        ("credencial", str(credential.pk), {"status": {"antes": "Aberto", "depois": "Resolvido"}}),
        ("credencial", str(credential.pk), {"status": {"antes": "Resolvido", "depois": "Aberto"}}),
    ]


def test_the_body_is_not_read(partner, ticket):
    """No fields: an empty body, `{}`, or anything else is the same request (never a 400 or 415)."""
    responses = [
        partner.post(url(ticket.pk, "resolver"), data="{nope", content_type="application/json"),
        partner.post(url(ticket.pk, "reabrir"), {"status": "fechado"}, format="json"),
        partner.post(url(ticket.pk, "resolver"), data="texto", content_type="text/plain"),
    ]

    assert [response.status_code for response in responses] == [200, 200, 200]
    ticket.refresh_from_db()
    assert ticket.status.category == "resolvido"


# --- no echo --------------------------------------------------------------------------------------


@pytest.mark.usefixtures("example_dns")
def test_no_event_is_recorded_nor_delivered_while_an_agents_change_is(partner, organization, agent, ticket):
    make_webhook(organization)  # subscribed to every kind
    make_agent_reply(ticket, agent, body="Enviamos outro.")
    events_before = WebhookEvent.objects.count()
    deliveries_before = WebhookDelivery.objects.count()

    for action in ("resolver", "reabrir", "resolver", "reabrir"):
        assert partner.post(url(ticket.pk, action)).status_code == 200

    assert WebhookEvent.objects.count() == events_before
    assert WebhookDelivery.objects.count() == deliveries_before
    feed = partner.get("/api/v1/eventos").json()["data"]["itens"]
    assert [event["evento"] for event in feed] == ["ticket.resposta_publica"]
    # The control: the same move by an agent is announced (status_alterado, then resolvido).
    ticket_update(ticket=Ticket.objects.get(pk=ticket.pk), status=status_of(organization, "resolvido"))
    assert WebhookEvent.objects.count() == events_before + 2
    assert WebhookDelivery.objects.count() == deliveries_before + 2


def test_a_move_brings_the_ticket_in_the_change_list_and_a_no_op_does_not(partner, ticket):
    cursor = partner.get("/api/v1/tickets/alteracoes").json()["data"]["proximo_cursor"]

    partner.post(url(ticket.pk, "reabrir"))  # aberto: nothing changes
    unchanged = partner.get("/api/v1/tickets/alteracoes", {"desde": cursor}).json()["data"]
    partner.post(url(ticket.pk, "resolver"))
    changed = partner.get("/api/v1/tickets/alteracoes", {"desde": cursor}).json()["data"]

    assert unchanged["itens"] == []
    assert [item["id"] for item in changed["itens"]] == [str(ticket.pk)]
    assert changed["itens"][0]["status"] == DEFAULT_STATUS["resolvido"]


# --- Idempotency-Key ------------------------------------------------------------------------------


def test_a_retry_with_the_same_key_replays_the_first_answer_and_changes_nothing(partner, ticket):
    first = partner.post(url(ticket.pk, "resolver"), HTTP_IDEMPOTENCY_KEY="resolver-1")
    in_category(ticket, "em_andamento")  # an agent takes it back meanwhile
    row = stored(ticket)

    retry = partner.post(url(ticket.pk, "resolver"), HTTP_IDEMPOTENCY_KEY="resolver-1")

    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()
    assert retry["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert stored(ticket) == row


def test_an_empty_body_and_an_empty_object_are_the_same_request_for_the_key(partner, ticket):
    first = partner.post(url(ticket.pk, "reabrir"), HTTP_IDEMPOTENCY_KEY="reabrir-1")

    retry = partner.post(url(ticket.pk, "reabrir"), {}, format="json", HTTP_IDEMPOTENCY_KEY="reabrir-1")

    assert (retry.status_code, retry.json()) == (200, first.json())
    assert retry["Idempotent-Replayed"] == "true"


def test_a_key_is_one_request_the_other_action_with_it_is_a_422(partner, ticket):
    partner.post(url(ticket.pk, "resolver"), HTTP_IDEMPOTENCY_KEY="chave")

    response = partner.post(url(ticket.pk, "reabrir"), HTTP_IDEMPOTENCY_KEY="chave")

    assert response.status_code == 422
    assert response.json() == {
        "success": False,
        "message": "Erro de validação",
        "errors": {"Idempotency-Key": ["Esta chave já foi usada com outra requisição."]},
    }
    ticket.refresh_from_db()
    assert ticket.status.category == "resolvido"


def test_a_refused_move_is_stored_and_replayed_too(partner, ticket):
    in_category(ticket, "fechado")
    first = partner.post(url(ticket.pk, "reabrir"), HTTP_IDEMPOTENCY_KEY="fechado-1")

    retry = partner.post(url(ticket.pk, "reabrir"), HTTP_IDEMPOTENCY_KEY="fechado-1")

    assert_error(first, 409, "Ticket fechado.", "status")
    assert (retry.status_code, retry.json(), retry["Idempotent-Replayed"]) == (409, first.json(), "true")
    assert IdempotencyRecord.objects.get(key="fechado-1").status_code == 409


# --- not found, tenancy ---------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["resolver", "reabrir"])
@pytest.mark.parametrize("ticket_id", [pytest.param(str(uuid.uuid4()), id="unknown"), pytest.param("abc", id="bad")])
def test_an_unknown_ticket_is_the_404_of_get(partner, ticket, action, ticket_id):
    response = partner.post(url(ticket_id, action))

    assert_error(response, 404, "Ticket não encontrado.", "id")
    assert response.json() == partner.get(f"/api/v1/tickets/{ticket_id}").json()


@pytest.mark.parametrize("action", ["resolver", "reabrir"])
def test_another_organizations_ticket_is_the_404_of_a_missing_one_and_stays_as_it_was(
    partner, other_organization, action
):
    theirs = in_category(make_ticket(other_organization), "aguardando")
    row, records = stored(theirs), status_records(theirs)

    response = partner.post(url(theirs.pk, action), HTTP_IDEMPOTENCY_KEY=f"deles-{action}")

    assert_error(response, 404, "Ticket não encontrado.", "id")
    assert response.json() == partner.post(url(uuid.uuid4(), action)).json()
    assert stored(theirs) == row
    assert status_records(theirs) == records


# --- an organization without the status to go to ---------------------------------------------------


def test_resolve_without_any_resolved_status_is_409_and_changes_nothing(partner, organization, ticket):
    status_delete(status=status_of(organization, "resolvido"))
    row = stored(ticket)

    response = partner.post(url(ticket.pk, "resolver"))

    assert response.json() == error_envelope(
        409, "Status indisponível.", "status", "A organização não tem um status da categoria resolvido."
    )
    assert stored(ticket) == row


def test_reopen_without_any_open_status_is_409_and_changes_nothing(partner, organization, ticket):
    ticket = in_category(ticket, "aguardando")
    status_delete(status=status_of(organization, "aberto"))
    row = stored(ticket)

    response = partner.post(url(ticket.pk, "reabrir"))

    assert response.json() == error_envelope(
        409, "Status indisponível.", "status", "A organização não tem um status da categoria aberto."
    )
    assert stored(ticket) == row


def test_a_customer_reply_without_any_open_status_keeps_the_tickets_status(partner, organization, ticket):
    """The reopening rule is the same code for a reply: with nowhere to go the reply is taken, the status kept."""
    ticket = in_category(ticket, "aguardando")
    status_delete(status=status_of(organization, "aberto"))

    response = partner.post(f"/api/v1/tickets/{ticket.pk}/respostas", {"mensagem": "Voltou."}, format="json")

    assert_success(response, 201, "Resposta enviada.")
    ticket.refresh_from_db()
    assert ticket.status.category == "aguardando"


# --- rate limit -----------------------------------------------------------------------------------


@pytest.mark.usefixtures("frozen_rate_limit_clock")
def test_they_count_against_the_keys_rate_limit(settings, partner, ticket):
    settings.PARTNER_RATE_LIMIT = "2/m"

    answers = [partner.post(url(ticket.pk, action)) for action in ("resolver", "reabrir", "resolver")]

    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert [answer["X-RateLimit-Remaining"] for answer in answers[:2]] == ["1", "0"]
    assert answers[2].json() == error_envelope(
        429, "Limite de requisições excedido.", "rate_limit", "Limite excedido, tente novamente mais tarde."
    )
    ticket.refresh_from_db()
    assert ticket.status.category == "aberto"


# --- statements -----------------------------------------------------------------------------------


def test_a_no_op_writes_nothing(partner, ticket):
    partner.post(url(ticket.pk, "reabrir"))  # warm-up: the key's last use
    with CaptureQueriesContext(connection) as captured:
        assert partner.post(url(ticket.pk, "reabrir")).status_code == 200

    writes = [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE"))]
    assert writes == []


def test_resolved_at_follows_the_category(partner, ticket):
    partner.post(url(ticket.pk, "resolver"))
    resolved_at = Ticket.objects.get(pk=ticket.pk).resolved_at
    partner.post(url(ticket.pk, "reabrir"))
    reopened = Ticket.objects.get(pk=ticket.pk)

    assert resolved_at is not None
    assert reopened.resolved_at is None
    assert reopened.status.category == StatusCategory.OPEN
    assert json.loads(partner.get(f"/api/v1/tickets/{ticket.pk}").content)["data"]["resolvido_em"] is None
