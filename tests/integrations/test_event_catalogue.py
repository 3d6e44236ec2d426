"""The catalogue: every change a partner can see, made by an agent (panel API, admin) or the system, is an event
with `data.ator`, and changes carry `data.alteracoes.<campo>: {anterior, atual}`. Nothing the partner did through
the partner API is told back to it (no echo), and a change that changes nothing emits nothing.

Deletions (ticket.excluido) have their own tests: tests/tickets/test_ticket_delete.py.
"""

import json

import pytest

from integrations.models import EventKind, WebhookDelivery, WebhookEvent
from tests.assertions import assert_error, assert_success, assert_validation_error, panel_client
from tests.contract import PANEL_TICKET_FIELDS, TICKET_SUMMARY_FIELDS
from tests.factories import make_agent, make_customer_reply, make_ticket, make_webhook, status_of
from tickets.models import Channel, Contact, StatusCategory, Ticket
from tickets.services import ticket_update

pytestmark = pytest.mark.usefixtures("example_dns", "queued", "generous_rate_limits")

SYSTEM = {"tipo": "sistema"}


@pytest.fixture
def webhook(organization):
    return make_webhook(organization)  # every kind


@pytest.fixture
def ticket(organization) -> Ticket:
    return make_ticket(organization, subject="Pedido", priority="media")


def bodies(organization, kind: str | None = None) -> list[dict]:
    """The organization's events in feed order, as their bodies."""
    events = WebhookEvent.objects.filter(organization=organization).exclude(kind=EventKind.TEST)
    if kind:
        events = events.filter(kind=kind)
    return [json.loads(body) for body in events.order_by("change_tx", "change_seq").values_list("body", flat=True)]


def kinds(organization) -> list[str]:
    return [body["evento"] for body in bodies(organization)]


def as_agent(agent) -> dict:
    return {"tipo": "agente", "id": str(agent.pk), "nome": agent.name}


def shown_without_replies(partner, ticket) -> dict:
    shown = partner.get(f"/api/v1/tickets/{ticket.pk}").json()["data"]
    return {key: value for key, value in shown.items() if key != "respostas"}


# --- ticket.status_alterado, ticket.prioridade_alterada, ticket.atribuido ---------------------------


def test_a_status_change_tells_the_status_before_and_after(organization, agent, ticket, webhook, partner):
    agent_client = panel_client(agent.user.email)
    waiting = status_of(organization, StatusCategory.WAITING)

    response = agent_client.patch(f"/api/tickets/{ticket.pk}", {"status_id": str(waiting.pk)}, format="json")

    assert response.status_code == 200
    [body] = bodies(organization)
    assert body["evento"] == "ticket.status_alterado"
    assert set(body["data"]) == {"ticket", "alteracoes", "ator"}
    assert body["data"]["alteracoes"] == {
        "status": {
            "anterior": {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"},
            "atual": {"nome": "Aguardando cliente", "categoria": "aguardando", "cor": "#8B5CF6"},
        }
    }
    assert body["data"]["ator"] == as_agent(agent)
    assert body["data"]["ticket"] == shown_without_replies(partner, ticket)
    delivery = WebhookDelivery.objects.get(webhook=webhook)
    assert json.loads(delivery.event.body) == body


def test_a_priority_change_tells_the_priority_before_and_after(organization, agent, ticket, webhook):
    panel_client(agent.user.email).patch(f"/api/tickets/{ticket.pk}", {"prioridade": "urgente"}, format="json")

    [body] = bodies(organization)
    assert body["evento"] == "ticket.prioridade_alterada"
    assert body["data"]["alteracoes"] == {"prioridade": {"anterior": "media", "atual": "urgente"}}
    assert body["data"]["ticket"]["prioridade"] == "urgente"
    assert body["data"]["ator"] == as_agent(agent)


def test_an_assignment_set_changed_and_cleared_each_tell_who_before_and_after(organization, agent, ticket, webhook):
    colleague = make_agent(organization, name="Carla Colega")
    client = panel_client(agent.user.email)

    for atendente_id in (str(agent.pk), str(colleague.pk), None):
        response = client.patch(f"/api/tickets/{ticket.pk}", {"atendente_id": atendente_id}, format="json")
        assert response.status_code == 200

    changes = [body["data"]["alteracoes"]["atendente"] for body in bodies(organization, EventKind.ASSIGNED)]
    beatriz = {"id": str(agent.pk), "nome": "Beatriz Atendente"}
    carla = {"id": str(colleague.pk), "nome": "Carla Colega"}
    assert changes == [
        {"anterior": None, "atual": beatriz},
        {"anterior": beatriz, "atual": carla},
        {"anterior": carla, "atual": None},
    ]
    assert set(bodies(organization)[0]["data"]["ticket"]) == TICKET_SUMMARY_FIELDS  # the public shape only


def test_one_panel_patch_that_changes_three_things_emits_one_event_per_kind_in_a_stable_order(
    organization, agent, ticket, webhook
):
    resolved = status_of(organization, StatusCategory.RESOLVED)
    body = {"status_id": str(resolved.pk), "prioridade": "alta", "atendente_id": str(agent.pk)}

    response = panel_client(agent.user.email).patch(f"/api/tickets/{ticket.pk}", body, format="json")

    assert response.status_code == 200
    assert kinds(organization) == [
        "ticket.status_alterado",
        "ticket.resolvido",
        "ticket.prioridade_alterada",
        "ticket.atribuido",
    ]
    events = WebhookEvent.objects.filter(organization=organization)
    assert len({event.change_tx for event in events}) == 1  # one transaction
    final = {key: value for key, value in bodies(organization)[-1]["data"]["ticket"].items() if key != "atualizado_em"}
    for event in bodies(organization):  # every event shows the ticket as the action left it
        assert {k: v for k, v in event["data"]["ticket"].items() if k != "atualizado_em"} == final
        assert event["data"]["ator"] == as_agent(agent)
    assert WebhookDelivery.objects.filter(webhook=webhook).count() == 4


def test_a_patch_that_changes_nothing_emits_nothing(organization, agent, ticket, webhook, queued):
    ticket_update(ticket=ticket, assignee=agent, priority="alta")
    before = WebhookEvent.objects.count()
    body = {"status_id": str(ticket.status_id), "prioridade": "alta", "atendente_id": str(agent.pk)}

    response = panel_client(agent.user.email).patch(f"/api/tickets/{ticket.pk}", body, format="json")

    assert response.status_code == 200
    assert WebhookEvent.objects.count() == before


def test_changes_made_by_the_system_say_so(organization, ticket, webhook):
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.IN_PROGRESS), priority="baixa")

    assert [body["data"]["ator"] for body in bodies(organization)] == [SYSTEM, SYSTEM]


def test_a_customer_reply_that_reopens_a_ticket_is_not_told_back(organization, ticket, webhook, partner):
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.WAITING))
    before = kinds(organization)

    response = partner.post(f"/api/v1/tickets/{ticket.pk}/respostas", {"mensagem": "Ainda não"}, format="json")

    assert response.status_code == 201
    assert Ticket.objects.get(pk=ticket.pk).status.category == StatusCategory.OPEN
    assert kinds(organization) == before == ["ticket.status_alterado"]


# --- ticket.criado ----------------------------------------------------------------------------------


def test_an_agent_opens_a_ticket_through_the_panel(organization, agent, webhook, partner):
    client = panel_client(agent.user.email)
    body = {
        "assunto": "Troca de produto",
        "descricao": "Cliente ligou pedindo a troca.",
        "prioridade": "alta",
        "solicitante": {"nome": "Maria", "email": "Maria@Example.test", "telefone": "1234", "external_id": "cli-9"},
    }

    response = client.post("/api/tickets", body, format="json")

    data = assert_success(response, 201, "Ticket criado.")
    assert set(data) == PANEL_TICKET_FIELDS
    assert (data["canal_origem"], data["origem_sistema"], data["external_id"]) == ("painel", "painel", None)
    assert (data["assunto"], data["prioridade"], data["atendente"], data["respostas"]) == (
        "Troca de produto",
        "alta",
        None,
        [],
    )
    assert data["solicitante"] == {
        "nome": "Maria",
        "email": "maria@example.test",
        "telefone": "1234",
        "external_id": "cli-9",
    }
    assert data["status"]["categoria"] == "aberto"
    ticket = Ticket.objects.get(pk=data["id"])
    assert (ticket.organization_id, ticket.channel) == (organization.pk, Channel.PANEL)
    [event] = bodies(organization)
    assert event["evento"] == "ticket.criado"
    assert set(event["data"]) == {"ticket", "ator"}
    assert event["data"]["ator"] == as_agent(agent)
    assert event["data"]["ticket"] == shown_without_replies(partner, ticket)


def test_a_panel_ticket_reuses_the_partners_contact_as_a_partner_ticket_would(organization, agent, partner):
    partner.post(
        "/api/v1/tickets",
        {"assunto": "A", "descricao": "a", "solicitante": {"nome": "Maria", "external_id": "cli-9"}},
        format="json",
    )
    body = {
        "assunto": "B",
        "descricao": "b",
        "solicitante": {"nome": "M.", "email": "m@example.test", "external_id": "cli-9"},
    }

    data = assert_success(
        panel_client(agent.user.email).post("/api/tickets", body, format="json"), 201, "Ticket criado."
    )

    assert Contact.objects.filter(organization=organization).count() == 1
    assert data["solicitante"] == {"nome": "Maria", "email": "m@example.test", "telefone": None, "external_id": "cli-9"}


def test_a_panel_ticket_with_an_assignee_is_created_then_assigned(organization, agent, webhook):
    colleague = make_agent(organization, name="Carla Colega")
    body = {"assunto": "A", "descricao": "a", "solicitante": {"nome": "Ana"}, "atendente_id": str(colleague.pk)}

    data = assert_success(
        panel_client(agent.user.email).post("/api/tickets", body, format="json"), 201, "Ticket criado."
    )

    assert data["atendente"] == {"id": str(colleague.pk), "nome": "Carla Colega"}
    assert kinds(organization) == ["ticket.criado", "ticket.atribuido"]
    assert bodies(organization)[1]["data"]["alteracoes"] == {
        "atendente": {"anterior": None, "atual": {"id": str(colleague.pk), "nome": "Carla Colega"}}
    }


def test_a_panel_ticket_refuses_bad_input_and_writes_nothing(organization, other_organization, agent, webhook):
    client = panel_client(agent.user.email)
    valid = {"assunto": "A", "descricao": "a", "solicitante": {"nome": "Ana"}}
    inactive = make_agent(organization, name="Inativa", is_active=False)

    assert_validation_error(client.post("/api/tickets", {**valid, "assunto": ""}, format="json"), "assunto")
    assert_validation_error(
        client.post("/api/tickets", {**valid, "solicitante": {}}, format="json"), "solicitante.nome"
    )
    assert_validation_error(client.post("/api/tickets", {**valid, "prioridade": "x"}, format="json"), "prioridade")
    bad_email = {**valid, "solicitante": {"nome": "Ana", "email": "não"}}
    assert_validation_error(client.post("/api/tickets", bad_email, format="json"), "solicitante.email")
    assert_validation_error(client.post("/api/tickets", {**valid, "atendente_id": "x"}, format="json"), "atendente_id")
    foreign = make_agent(other_organization)
    missing = client.post("/api/tickets", {**valid, "atendente_id": str(foreign.pk)}, format="json")
    assert_error(missing, 404, "Atendente não encontrado.", "atendente_id")
    refused = client.post("/api/tickets", {**valid, "atendente_id": str(inactive.pk)}, format="json")
    assert_validation_error(refused, "atendente_id")

    assert not Ticket.objects.exists()
    assert not WebhookEvent.objects.exists()


def test_tickets_created_through_the_partner_api_never_emit(organization, webhook, partner, queued):
    response = partner.post(
        "/api/v1/tickets", {"assunto": "A", "descricao": "a", "solicitante": {"nome": "Ana"}}, format="json"
    )

    assert response.status_code == 201
    assert not WebhookEvent.objects.exists()
    assert queued == []


def test_a_partner_reply_to_a_waiting_ticket_and_its_edit_never_emit(organization, ticket, webhook):
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))
    before = WebhookEvent.objects.count()

    make_customer_reply(ticket, body="Voltou")

    assert WebhookEvent.objects.count() == before


def test_ticket_created_events_are_also_in_the_feed_and_filterable(organization, agent, partner):
    panel_client(agent.user.email).post(
        "/api/tickets", {"assunto": "A", "descricao": "a", "solicitante": {"nome": "Ana"}}, format="json"
    )
    make_ticket(organization)  # a partner's ticket: not an event

    page = assert_success(partner.get("/api/v1/eventos", {"tipo": "ticket.criado"}), 200, "Eventos listados.")

    assert [item["evento"] for item in page["itens"]] == ["ticket.criado"]
    assert page["itens"][0]["data"]["ticket"]["canal_origem"] == "painel"


@pytest.mark.parametrize("kind", ["ticket.status_alterado", "ticket.prioridade_alterada", "ticket.atribuido"])
def test_a_webhook_may_subscribe_to_each_new_kind_alone(organization, agent, ticket, kind):
    only = make_webhook(organization, name="Só um", events=[kind])
    body = {
        "status_id": str(status_of(organization, StatusCategory.IN_PROGRESS).pk),
        "prioridade": "alta",
        "atendente_id": str(agent.pk),
    }

    panel_client(agent.user.email).patch(f"/api/tickets/{ticket.pk}", body, format="json")

    assert list(WebhookDelivery.objects.filter(webhook=only).values_list("event__kind", flat=True)) == [kind]
