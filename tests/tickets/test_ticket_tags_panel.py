"""Tags from the agents' side (issue 22): `tags` on PATCH /api/tickets/{id}, GET /api/tags, and the event
`ticket.tags_alteradas` in the feed and in webhooks."""

import json

import pytest

from helpdesk.models import AuditRecord
from integrations.models import WebhookDelivery, WebhookEvent
from integrations.services import webhook_update
from tests.assertions import assert_exact_validation_error, assert_success, assert_ticket_not_found
from tests.factories import make_ticket, make_webhook, status_of
from tickets.models import Ticket
from tickets.services import ticket_update

EVENTS = "/api/v1/eventos"


def panel_url(ticket) -> str:
    return f"/api/tickets/{ticket.pk}"


@pytest.fixture
def ticket(organization):
    return make_ticket(organization)


def stored(ticket: Ticket) -> dict:
    return Ticket.objects.filter(pk=ticket.pk).values().get()


def test_an_agent_adds_and_removes_tags_with_the_panels_patch(manager, ticket):
    ticket_update(ticket=ticket, tags_add=["antiga"])

    response = manager.patch(
        panel_url(ticket), {"tags": {"adicionar": ["Cliente VIP"], "remover": ["antiga"]}}, format="json"
    )

    data = assert_success(response, 200, "Ticket atualizado.")
    assert data["tags"] == ["cliente-vip"]
    assert list(data)[-4:] == ["atendente", "campos", "tags", "respostas"]
    assert Ticket.objects.get(pk=ticket.pk).tags == ["cliente-vip"]


def test_the_panels_errors_are_named_inside_tags(manager, ticket):
    before = stored(ticket)

    empty = manager.patch(panel_url(ticket), {"tags": {}}, format="json")
    bad = manager.patch(panel_url(ticket), {"tags": {"adicionar": [""], "remover": ["a"]}}, format="json")
    both = manager.patch(panel_url(ticket), {"tags": {"adicionar": ["a"], "remover": ["A"]}}, format="json")
    many = manager.patch(panel_url(ticket), {"tags": {"adicionar": [f"t{n}" for n in range(21)]}}, format="json")

    assert_exact_validation_error(empty, {"tags": ["Informe adicionar, remover ou os dois."]})
    assert_exact_validation_error(
        bad, {"tags.adicionar": ['Tag inválida: "" (de 1 a 50 caracteres depois de normalizada).']}
    )
    assert_exact_validation_error(both, {"tags.remover": ['Tag em adicionar e em remover ao mesmo tempo: "a".']})
    assert_exact_validation_error(many, {"tags": ["Um ticket tem no máximo 20 tags."]})
    assert stored(ticket) == before


def test_a_status_and_tags_change_at_once_is_one_write_with_its_events_in_order(manager, organization, ticket):
    response = manager.patch(
        panel_url(ticket),
        {"status_id": str(status_of(organization, "em_andamento").pk), "tags": {"adicionar": ["vip"]}},
        format="json",
    )

    assert_success(response, 200, "Ticket atualizado.")
    kinds = list(WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("kind", flat=True))
    assert kinds == ["ticket.status_alterado", "ticket.tags_alteradas"]


def test_an_agents_change_emits_ticket_tags_alteradas_with_what_came_and_went(
    manager, partner, admin, organization, ticket, example_dns
):
    webhook = make_webhook(organization, events=["ticket.tags_alteradas"])
    webhook_update(webhook=webhook, blocks=["tags"])
    ticket_update(ticket=ticket, tags_add=["atrasado", "entrega"])
    WebhookEvent.objects.all().delete()

    manager.patch(panel_url(ticket), {"tags": {"adicionar": ["VIP"], "remover": ["atrasado"]}}, format="json")

    [event] = WebhookEvent.objects.all()
    body = json.loads(event.body)
    assert body["evento"] == "ticket.tags_alteradas"
    assert body["data"]["alteracoes"] == {"tags": {"adicionadas": ["vip"], "removidas": ["atrasado"]}}
    assert body["data"]["ator"] == {"tipo": "agente", "id": str(admin.agent.pk), "nome": admin.agent.name}
    assert "tags" not in body["data"]["ticket"]  # the stored body is the one without blocks
    [delivery] = WebhookDelivery.objects.filter(event=event)
    assert delivery.blocks
    feed = assert_success(
        partner.get(EVENTS, {"incluir": "tags", "tipo": "ticket.tags_alteradas"}), 200, "Eventos listados."
    )
    [item] = feed["itens"]
    assert item["data"]["ticket"]["tags"] == ["entrega", "vip"]
    assert list(item["data"]["ticket"])[-1] == "tags"
    plain = assert_success(partner.get(EVENTS, {"tipo": "ticket.tags_alteradas"}), 200, "Eventos listados.")
    assert "tags" not in plain["itens"][0]["data"]["ticket"]


def test_an_agents_change_that_changes_nothing_emits_nothing_and_writes_nothing(manager, ticket):
    ticket_update(ticket=ticket, tags_add=["vip"])
    events = WebhookEvent.objects.count()
    before = stored(ticket)

    response = manager.patch(panel_url(ticket), {"tags": {"adicionar": ["VIP"], "remover": ["outra"]}}, format="json")

    assert_success(response, 200, "Ticket atualizado.")
    assert WebhookEvent.objects.count() == events
    assert stored(ticket) == before


def test_an_agents_change_is_audited_with_the_user(manager, admin, ticket):
    manager.patch(panel_url(ticket), {"tags": {"adicionar": ["vip"]}}, format="json")

    record = AuditRecord.objects.get(action="ticket.tags_alteradas")
    assert (record.actor_type, record.actor_id) == (AuditRecord.ACTOR_USER, str(admin.pk))
    assert record.changes == {"tags": {"antes": [], "depois": ["vip"]}}


def test_another_organizations_ticket_is_a_404_on_the_panel(manager, other_organization):
    theirs = make_ticket(other_organization)

    assert_ticket_not_found(manager.patch(panel_url(theirs), {"tags": {"adicionar": ["a"]}}, format="json"))
    assert Ticket.objects.get(pk=theirs.pk).tags == []


# --- GET /api/tags --------------------------------------------------------------------------------


def test_the_organizations_tags_with_their_ticket_counts_by_name(manager, organization, other_organization):
    ticket_update(ticket=make_ticket(organization), tags_add=["vip", "entrega", "Zebra"])
    ticket_update(ticket=make_ticket(organization), tags_add=["vip", "ágil"])
    make_ticket(organization)
    ticket_update(ticket=make_ticket(other_organization), tags_add=["vip", "segredo-globex"])

    response = manager.get("/api/tags")

    assert response.json() == {
        "success": True,
        "message": "Tags listadas.",
        "data": [
            {"nome": "entrega", "tickets": 1},
            {"nome": "vip", "tickets": 2},
            {"nome": "zebra", "tickets": 1},
            {"nome": "ágil", "tickets": 1},  # code-point order: after every ASCII letter
        ],
        "errors": [],
    }


def test_an_organization_without_tags_lists_none(manager, organization):
    make_ticket(organization)

    assert assert_success(manager.get("/api/tags"), 200, "Tags listadas.") == []


def test_the_tags_list_needs_an_agent(client):
    response = client.get("/api/tags")

    assert response.status_code == 401
