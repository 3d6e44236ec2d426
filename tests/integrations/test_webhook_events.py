"""Outbox: which agent actions write a WebhookEvent and its deliveries, what the body says, and what is queued."""

import json
import re

import pytest
from django.db import transaction
from django.utils import timezone

from integrations.models import DeliveryStatus, EventKind, Webhook, WebhookDelivery, WebhookEvent
from tests.assertions import utc
from tests.contract import TICKET_SUMMARY_FIELDS
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket, make_webhook, status_of
from tickets.models import Reply, StatusCategory, Ticket, TicketStatus
from tickets.services import RequesterData, reply_edit_as_agent, reply_edit_as_customer, ticket_update

NOTE_TEXT = "NOTA-INTERNA: cliente inadimplente, não conceder desconto"

pytestmark = pytest.mark.usefixtures("example_dns", "queued")


@pytest.fixture
def webhook(organization) -> Webhook:
    return make_webhook(organization)


@pytest.fixture
def ticket(organization) -> Ticket:
    return make_ticket(
        organization,
        subject="Pedido não chegou",
        description="Pedido 1234 atrasado.",
        priority="alta",
        external_id="pedido-1234",
        requester=RequesterData(name="Maria Silva", email="maria@example.com", external_id="cliente-42"),
    )


def body_of(event: WebhookEvent) -> dict:
    return json.loads(event.body)


def second_resolved_status(organization) -> TicketStatus:
    return TicketStatus.objects.create(
        organization=organization, name="Resolvido sem retorno", category=StatusCategory.RESOLVED, position=9
    )


def assert_nothing_emitted(callbacks, queued) -> None:
    assert not WebhookEvent.objects.exists()
    assert not WebhookDelivery.objects.exists()
    assert callbacks == []
    assert queued == []


# --- Public reply -----------------------------------------------------------------


def test_agent_public_reply_writes_one_event_and_one_pending_delivery_per_active_subscribed_webhook(
    organization, other_organization, agent, ticket, queued, django_capture_on_commit_callbacks
):
    everything = make_webhook(organization, name="ERP")
    replies_only = make_webhook(organization, name="CRM", events=["ticket.resposta_publica"])
    make_webhook(organization, name="Inativo", active=False)
    make_webhook(organization, name="Resolvidos", events=["ticket.resolvido", "ticket.resposta_editada"])
    make_webhook(other_organization, name="Globex")

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        make_agent_reply(ticket, agent, body="Olá Maria, o pedido sai hoje.")

    event = WebhookEvent.objects.get()
    assert event.organization_id == organization.pk
    assert event.kind == EventKind.PUBLIC_REPLY
    deliveries = WebhookDelivery.objects.filter(event=event)
    assert sorted(deliveries.values_list("webhook_id", flat=True)) == sorted([everything.pk, replies_only.pk])
    assert WebhookDelivery.objects.count() == 2
    for delivery in deliveries:
        assert delivery.status == DeliveryStatus.PENDING
        assert delivery.attempt_count == 0
        assert delivery.last_attempt_at is None
        assert delivery.lease_expires_at is None
        assert not delivery.attempts.exists()
    assert not WebhookEvent.objects.filter(organization=other_organization).exists()
    assert len(callbacks) == 1
    assert queued == []  # nothing reaches the broker before the commit


def test_public_reply_event_body_is_the_documented_json(organization, agent, ticket, webhook, partner):
    before = timezone.now()
    reply = make_agent_reply(ticket, agent, body="Olá Maria, o pedido sai hoje.")
    after = timezone.now()

    event = WebhookEvent.objects.get()
    body = body_of(event)
    assert set(body) == {"id", "evento", "criado_em", "data"}
    assert body["id"] == str(event.pk)
    assert body["evento"] == "ticket.resposta_publica"
    assert before <= utc(body["criado_em"]) <= after
    assert set(body["data"]) == {"ticket", "resposta", "ator"}
    assert body["data"]["ator"] == {"tipo": "agente", "id": str(agent.pk), "nome": "Beatriz Atendente"}
    shown = partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]
    assert set(body["data"]["ticket"]) == TICKET_SUMMARY_FIELDS
    # atualizado_em has its own test below (test_public_reply_event_ticket_is_not_older_than_its_reply).
    assert {**body["data"]["ticket"], "atualizado_em": None} == {
        **{key: value for key, value in shown.items() if key != "respostas"},
        "atualizado_em": None,
    }
    assert body["data"]["ticket"]["id"] == str(ticket.pk)
    assert body["data"]["ticket"]["assunto"] == "Pedido não chegou"
    assert body["data"]["ticket"]["status"] == {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"}
    assert body["data"]["ticket"]["solicitante"] == {
        "nome": "Maria Silva",
        "email": "maria@example.com",
        "telefone": None,
        "external_id": "cliente-42",
    }
    assert body["data"]["resposta"] == {
        "id": str(reply.pk),
        "mensagem": "Olá Maria, o pedido sai hoje.",
        "origem": "agente",
        "editado": False,
        "autor": {"tipo": "agente", "nome": "Beatriz Atendente", "email": None, "external_id": None},
        "criado_em": body["data"]["resposta"]["criado_em"],
    }
    assert shown["respostas"] == [body["data"]["resposta"]]


def test_public_reply_event_ticket_is_not_older_than_its_reply(organization, agent, ticket, webhook):
    """The ticket in the payload is the ticket after the reply, as GET /api/v1/tickets/{id} shows it then."""
    make_agent_reply(ticket, agent, body="Olá Maria, o pedido sai hoje.")

    data = body_of(WebhookEvent.objects.get())["data"]
    ticket.refresh_from_db()
    assert utc(data["ticket"]["atualizado_em"]) >= utc(data["resposta"]["criado_em"])
    assert utc(data["ticket"]["atualizado_em"]) == ticket.updated_at


# --- Internal notes -----------------------------------------------------------------


def test_internal_note_emits_nothing(organization, agent, ticket, webhook, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        make_agent_reply(ticket, agent, body=NOTE_TEXT, internal=True)

    assert_nothing_emitted(callbacks, queued)


def test_editing_an_internal_note_emits_nothing(
    organization, agent, ticket, webhook, queued, django_capture_on_commit_callbacks
):
    note = make_agent_reply(ticket, agent, body=NOTE_TEXT, internal=True)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        reply_edit_as_agent(reply=note, agent=agent, body=NOTE_TEXT + " (revisado)")

    assert_nothing_emitted(callbacks, queued)


def test_no_event_body_ever_contains_a_note_text(organization, agent, ticket, webhook):
    make_agent_reply(ticket, agent, body=NOTE_TEXT, internal=True)

    public = make_agent_reply(ticket, agent, body="Estamos verificando.")
    reply_edit_as_agent(reply=public, agent=agent, body="Estamos verificando com a transportadora.")
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))

    events = list(WebhookEvent.objects.order_by("created_at").values_list("kind", "body"))
    assert [kind for kind, _ in events] == [
        EventKind.PUBLIC_REPLY,
        EventKind.REPLY_EDITED,
        EventKind.STATUS_CHANGED,
        EventKind.RESOLVED,
    ]
    for _, body in events:
        assert "NOTA-INTERNA" not in body
        assert "inadimplente" not in body


# --- No echo ---------------------------------------------------------------------------


def test_partner_reply_through_the_api_emits_nothing(
    organization, ticket, webhook, partner, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = partner.post(
            f"/api/v1/tickets/{ticket.pk}/respostas", {"mensagem": "Ainda não chegou."}, format="json"
        )

    assert response.status_code == 201
    assert Reply.objects.filter(ticket=ticket).count() == 1
    assert not WebhookEvent.objects.exists()
    assert not WebhookDelivery.objects.exists()
    assert queued == []


def test_partner_edit_through_the_api_emits_nothing(
    organization, ticket, webhook, partner, queued, django_capture_on_commit_callbacks
):
    reply = make_customer_reply(ticket, body="Ainda não chegou.")

    with django_capture_on_commit_callbacks(execute=True):
        response = partner.patch(
            f"/api/v1/tickets/{ticket.pk}/respostas/{reply.pk}", {"mensagem": "Chegou, obrigado."}, format="json"
        )

    assert response.status_code == 200
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Chegou, obrigado.", True)
    assert not WebhookEvent.objects.exists()
    assert not WebhookDelivery.objects.exists()
    assert queued == []


def test_customer_reply_and_edit_through_the_services_emit_nothing(
    organization, ticket, webhook, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        reply = make_customer_reply(ticket, body="Ainda não chegou.")
        reply_edit_as_customer(reply=reply, body="Chegou, obrigado.")

    assert_nothing_emitted(callbacks, queued)


# --- Edits ------------------------------------------------------------------------------


def test_agent_edit_of_a_public_reply_emits_resposta_editada_with_the_previous_text(
    organization, agent, ticket, partner
):
    edits_only = make_webhook(organization, name="Edições", events=["ticket.resposta_editada"])
    make_webhook(organization, name="Respostas", events=["ticket.resposta_publica"])
    reply = make_agent_reply(ticket, agent, body="Olá Maria, o pedido sai hoje.")

    reply_edit_as_agent(reply=reply, agent=agent, body="Olá Maria, o pedido saiu hoje.")

    event = WebhookEvent.objects.get(kind=EventKind.REPLY_EDITED)
    assert list(event.deliveries.values_list("webhook_id", "status")) == [(edits_only.pk, DeliveryStatus.PENDING)]
    body = body_of(event)
    assert set(body) == {"id", "evento", "criado_em", "data"}
    assert (body["id"], body["evento"]) == (str(event.pk), "ticket.resposta_editada")
    assert set(body["data"]) == {"ticket", "resposta", "mensagem_anterior", "ator"}
    assert body["data"]["mensagem_anterior"] == "Olá Maria, o pedido sai hoje."
    assert body["data"]["resposta"] == {
        "id": str(reply.pk),
        "mensagem": "Olá Maria, o pedido saiu hoje.",
        "origem": "agente",
        "editado": True,
        "autor": {"tipo": "agente", "nome": "Beatriz Atendente", "email": None, "external_id": None},
        "criado_em": body["data"]["resposta"]["criado_em"],
    }
    shown = partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]
    assert body["data"]["ticket"] == {key: value for key, value in shown.items() if key != "respostas"}
    assert shown["respostas"] == [body["data"]["resposta"]]


def test_each_edit_carries_the_text_just_before_it(organization, agent, ticket, webhook):
    reply = make_agent_reply(ticket, agent, body="Primeira versão")

    reply_edit_as_agent(reply=reply, agent=agent, body="Segunda versão")
    reply_edit_as_agent(reply=Reply.objects.get(pk=reply.pk), agent=agent, body="Terceira versão")

    edits = [body_of(event)["data"] for event in WebhookEvent.objects.filter(kind=EventKind.REPLY_EDITED)]
    pairs = sorted((data["mensagem_anterior"], data["resposta"]["mensagem"]) for data in edits)
    assert pairs == [("Primeira versão", "Segunda versão"), ("Segunda versão", "Terceira versão")]


def test_edit_with_the_same_text_emits_nothing(
    organization, agent, ticket, webhook, queued, django_capture_on_commit_callbacks
):
    reply = make_agent_reply(ticket, agent, body="Olá Maria")
    events_before = list(WebhookEvent.objects.values_list("pk", flat=True))
    deliveries_before = list(WebhookDelivery.objects.values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        reply_edit_as_agent(reply=reply, agent=agent, body="Olá Maria")
        reply_edit_as_agent(reply=Reply.objects.get(pk=reply.pk), agent=agent, body="Olá Maria")

    assert list(WebhookEvent.objects.values_list("pk", flat=True)) == events_before
    assert list(WebhookDelivery.objects.values_list("pk", flat=True)) == deliveries_before
    assert callbacks == []
    assert queued == []


def test_saving_a_reply_without_changes_emits_nothing(
    organization, agent, ticket, webhook, queued, django_capture_on_commit_callbacks
):
    reply = make_agent_reply(ticket, agent, body="Olá Maria")
    events_before = WebhookEvent.objects.count()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        reply.save()
        Reply.objects.get(pk=reply.pk).save()
        Reply.objects.get(pk=reply.pk).save(update_fields=["updated_at"])

    assert events_before == 1
    assert WebhookEvent.objects.count() == 1
    assert WebhookDelivery.objects.count() == 1
    assert callbacks == []
    assert queued == []


# --- Resolved ---------------------------------------------------------------------------


def test_resolving_a_ticket_emits_ticket_resolvido_once(organization, ticket, webhook, partner):
    resolved = status_of(organization, StatusCategory.RESOLVED)

    ticket_update(ticket=ticket, status=resolved)

    kinds = list(WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("kind", flat=True))
    assert kinds == [EventKind.STATUS_CHANGED, EventKind.RESOLVED]
    event = WebhookEvent.objects.get(kind=EventKind.RESOLVED)
    assert list(event.deliveries.values_list("webhook_id", "status")) == [(webhook.pk, DeliveryStatus.PENDING)]
    body = body_of(event)
    assert set(body) == {"id", "evento", "criado_em", "data"}
    assert (body["id"], body["evento"]) == (str(event.pk), "ticket.resolvido")
    assert set(body["data"]) == {"ticket", "ator"}
    assert body["data"]["ator"] == {"tipo": "sistema"}
    assert set(body["data"]["ticket"]) == TICKET_SUMMARY_FIELDS
    assert body["data"]["ticket"]["status"] == {"nome": "Resolvido", "categoria": "resolvido", "cor": "#10B981"}
    ticket.refresh_from_db()
    assert utc(body["data"]["ticket"]["resolvido_em"]) == ticket.resolved_at
    shown = partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]
    assert body["data"]["ticket"] == {key: value for key, value in shown.items() if key != "respostas"}


def test_resolved_event_goes_only_to_webhooks_subscribed_to_it(organization, other_organization, ticket):
    resolved_hook = make_webhook(organization, name="Resolvidos", events=["ticket.resolvido"])
    make_webhook(organization, name="Respostas", events=["ticket.resposta_publica", "ticket.resposta_editada"])
    make_webhook(organization, name="Inativo", events=["ticket.resolvido"], active=False)
    make_webhook(other_organization, name="Globex", events=["ticket.resolvido"])

    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))

    event = WebhookEvent.objects.get(kind=EventKind.RESOLVED)
    assert list(WebhookDelivery.objects.values_list("webhook_id", "event_id")) == [(resolved_hook.pk, event.pk)]


def test_moving_between_two_resolvido_statuses_does_not_emit_resolvido_again(organization, ticket, webhook):
    resolved = status_of(organization, StatusCategory.RESOLVED)
    ticket_update(ticket=ticket, status=resolved)
    other_resolved = second_resolved_status(organization)

    ticket = ticket_update(ticket=ticket, status=other_resolved)
    ticket_update(ticket=ticket, status=resolved)

    assert Ticket.objects.get(pk=ticket.pk).status.category == StatusCategory.RESOLVED
    kinds = list(WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("kind", flat=True))
    # Each move is a status change; only the first entered `resolvido`.
    assert kinds == [EventKind.STATUS_CHANGED, EventKind.RESOLVED, EventKind.STATUS_CHANGED, EventKind.STATUS_CHANGED]
    assert WebhookDelivery.objects.filter(event__kind=EventKind.RESOLVED).count() == 1


def test_leaving_and_reentering_resolvido_emits_again(organization, ticket, webhook):
    resolved = status_of(organization, StatusCategory.RESOLVED)
    ticket = ticket_update(ticket=ticket, status=resolved)

    ticket = ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.IN_PROGRESS))
    assert WebhookEvent.objects.filter(kind=EventKind.RESOLVED).count() == 1
    ticket_update(ticket=ticket, status=second_resolved_status(organization))

    events = list(WebhookEvent.objects.filter(kind=EventKind.RESOLVED).order_by("created_at"))
    assert [event.kind for event in events] == [EventKind.RESOLVED, EventKind.RESOLVED]
    assert body_of(events[1])["data"]["ticket"]["status"]["nome"] == "Resolvido sem retorno"
    assert WebhookDelivery.objects.filter(webhook=webhook, event__kind=EventKind.RESOLVED).count() == 2


def test_reopening_by_a_customer_reply_then_resolving_emits_again(organization, ticket, webhook):
    ticket = ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))
    make_customer_reply(ticket, body="Voltou a acontecer.")
    assert Ticket.objects.get(pk=ticket.pk).status.category == StatusCategory.OPEN
    assert WebhookEvent.objects.count() == 2  # the reopening was the customer's: no echo

    ticket_update(ticket=Ticket.objects.get(pk=ticket.pk), status=status_of(organization, StatusCategory.RESOLVED))

    kinds = list(WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("kind", flat=True))
    assert kinds == [EventKind.STATUS_CHANGED, EventKind.RESOLVED, EventKind.STATUS_CHANGED, EventKind.RESOLVED]


def test_changing_priority_or_assignee_emits_one_event_per_change(organization, agent, ticket, webhook):
    ticket = ticket_update(ticket=ticket, priority="urgente")
    ticket = ticket_update(ticket=ticket, assignee=agent)
    ticket = ticket_update(ticket=ticket, assignee=make_agent(organization), priority="baixa")
    ticket_update(ticket=ticket, unassign=True)
    ticket_update(ticket=ticket, priority="baixa", unassign=True)  # nothing changes: nothing emitted

    stored = Ticket.objects.get(pk=ticket.pk)
    assert (stored.priority, stored.assignee_id) == ("baixa", None)
    kinds = list(WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("kind", flat=True))
    assert kinds == [
        EventKind.PRIORITY_CHANGED,
        EventKind.ASSIGNED,
        EventKind.PRIORITY_CHANGED,
        EventKind.ASSIGNED,
        EventKind.ASSIGNED,
    ]


def test_saving_a_ticket_without_changes_emits_nothing(
    organization, ticket, webhook, queued, django_capture_on_commit_callbacks
):
    ticket = ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))
    assert WebhookEvent.objects.count() == 2  # ticket.status_alterado, ticket.resolvido

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        ticket.save()
        Ticket.objects.get(pk=ticket.pk).save()
        Ticket.objects.get(pk=ticket.pk).save(update_fields=["status", "updated_at"])
        ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))

    assert WebhookEvent.objects.count() == 2
    assert WebhookDelivery.objects.count() == 2
    assert callbacks == []
    assert queued == []


# --- Commit, rollback, nobody listening ---------------------------------------------------


def test_on_commit_queues_exactly_the_created_delivery_ids(
    organization, agent, ticket, queued, django_capture_on_commit_callbacks
):
    make_webhook(organization, name="ERP")
    make_webhook(organization, name="CRM", events=["ticket.resposta_publica"])
    make_webhook(organization, name="Resolvidos", events=["ticket.resolvido"])

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        make_agent_reply(ticket, agent, body="Olá")

    assert len(callbacks) == 1
    assert queued == []
    callbacks[0]()
    created = WebhookDelivery.objects.filter(event=WebhookEvent.objects.get())
    assert created.count() == 2
    assert sorted(queued) == sorted([str(pk), 0] for pk in created.values_list("pk", flat=True))


def test_an_action_in_a_transaction_that_raises_leaves_no_rows_and_queues_nothing(
    organization, agent, ticket, webhook, queued, django_capture_on_commit_callbacks
):
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError, match="falhou depois"),
        transaction.atomic(),
    ):
        make_agent_reply(ticket, agent, body="Olá")
        ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))
        assert WebhookEvent.objects.count() == 3
        raise RuntimeError("falhou depois")

    assert not Reply.objects.exists()
    assert Ticket.objects.get(pk=ticket.pk).status.category == StatusCategory.OPEN
    assert_nothing_emitted(callbacks, queued)


def assert_recorded_without_deliveries(organization, kinds: list[str], callbacks, queued) -> None:
    """The event feed (GET /api/v1/eventos) reads every event: written, but nothing to deliver."""
    events = WebhookEvent.objects.order_by("change_tx", "change_seq")
    assert [(event.organization_id, event.kind) for event in events] == [(organization.pk, kind) for kind in kinds]
    assert not WebhookDelivery.objects.exists()
    assert callbacks == []
    assert queued == []


def test_without_any_webhook_the_event_is_recorded_and_nothing_is_delivered(
    organization, other_organization, agent, ticket, queued, django_capture_on_commit_callbacks
):
    make_webhook(other_organization, name="Globex")

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        reply = make_agent_reply(ticket, agent, body="Olá")
        reply_edit_as_agent(reply=reply, agent=agent, body="Olá de novo")
        ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))

    kinds = [EventKind.PUBLIC_REPLY, EventKind.REPLY_EDITED, EventKind.STATUS_CHANGED, EventKind.RESOLVED]
    assert_recorded_without_deliveries(organization, kinds, callbacks, queued)


def test_only_inactive_or_unsubscribed_webhooks_record_the_event_and_deliver_nothing(
    organization, agent, ticket, queued, django_capture_on_commit_callbacks
):
    make_webhook(organization, name="Inativo", active=False)
    make_webhook(organization, name="Resolvidos", events=["ticket.resolvido"])

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        make_agent_reply(ticket, agent, body="Olá")

    assert_recorded_without_deliveries(organization, [EventKind.PUBLIC_REPLY], callbacks, queued)


def test_event_timestamp_has_the_api_format(organization, agent, settings, django_capture_on_commit_callbacks):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    make_webhook(organization, name="W", url="http://127.0.0.1/x", events=["ticket.resposta_publica"])
    with django_capture_on_commit_callbacks(execute=False):
        make_agent_reply(make_ticket(organization), agent)

    body = json.loads(WebhookEvent.objects.get().body)
    # As DRF writes datetimes: microseconds (omitted only when zero) and "Z".
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z", body["criado_em"])
