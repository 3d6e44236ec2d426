"""`incluir` in push and pull (issue 21): the event feed takes it, a webhook keeps it as a setting. The blocks
are the ticket's when the event was written; without them, the bytes of before."""

import json

import pytest

from helpdesk.actors import SYSTEM
from helpdesk.models import AuditRecord
from integrations.models import EventKind, Webhook, WebhookDelivery, WebhookEvent
from tests.assertions import assert_exact_validation_error, assert_success, row_counts
from tests.factories import make_agent, make_agent_reply, make_ticket, make_webhook, status_of
from tickets.models import Ticket
from tickets.services import ticket_delete, ticket_update

EVENTS = "/api/v1/eventos"
WEBHOOKS = "/api/webhooks"
UNKNOWN = (
    "Bloco desconhecido: xyz, SLA. Blocos aceitos: atendente, contato, tags, campos, sla, metricas, avaliacao, "
    "mesclagem."
)

pytestmark = pytest.mark.usefixtures("generous_rate_limits", "example_dns", "queued")


@pytest.fixture
def history(organization, agent):
    """A ticket answered (no assignee yet), assigned to Carla, resolved, then another one deleted."""
    carla = make_agent(organization, name="Carla Suporte")
    ticket = make_ticket(organization, subject="Pedido")
    make_agent_reply(ticket, agent, body="Sai hoje.")
    ticket = ticket_update(ticket=Ticket.objects.get(pk=ticket.pk), assignee=carla)
    ticket_update(ticket=ticket, status=status_of(organization, "resolvido"))
    ticket_delete(ticket=make_ticket(organization), actor=SYSTEM)
    return Ticket.objects.get(pk=ticket.pk), carla


def items(client, **params) -> list[dict]:
    return assert_success(client.get(EVENTS, params), 200, "Eventos listados.")["itens"]


# --- the feed --------------------------------------------------------------------------------------


def test_the_feed_adds_the_blocks_asked_for_to_each_events_ticket_as_it_was_then(partner, history):
    ticket, carla = history
    carla_ref = {"id": str(carla.pk), "nome": "Carla Suporte"}
    contact = str(ticket.requester_id)

    plain = items(partner)
    full = items(partner, incluir="atendente,contato")
    assignee_only = items(partner, incluir="atendente")

    assert [item["evento"] for item in full] == [
        "ticket.resposta_publica",
        "ticket.atribuido",
        "ticket.status_alterado",
        "ticket.resolvido",
        "ticket.excluido",
    ]
    assert [item["data"]["ticket"].get("atendente", "-") for item in full] == [None, *[carla_ref] * 3, "-"]
    for before, after, one in zip(plain, full, assignee_only, strict=True):
        if after["evento"] == "ticket.excluido":  # only what identifies the ticket: nothing to add
            assert after == one == before
            continue
        blocks = {"atendente": after["data"]["ticket"]["atendente"], "contato_id": contact}
        assert after["data"]["ticket"] == {**before["data"]["ticket"], **blocks}
        assert list(after["data"]["ticket"])[-2:] == ["atendente", "contato_id"]
        assert {key: value for key, value in after.items() if key != "data"} == {
            key: value for key, value in before.items() if key != "data"
        }
        assert one["data"]["ticket"] == {**before["data"]["ticket"], "atendente": blocks["atendente"]}


def test_the_feed_without_blocks_is_the_stored_bodies_byte_for_byte(partner, history):
    plain = partner.get(EVENTS)

    assert partner.get(EVENTS, {"incluir": ""}).content == plain.content
    stored = WebhookEvent.objects.exclude(kind=EventKind.TEST).order_by("change_tx", "change_seq")
    assert plain.json()["data"]["itens"] == [json.loads(body) for body in stored.values_list("body", flat=True)]


def test_an_unknown_block_on_the_feed_is_a_422_on_incluir(partner, history):
    assert_exact_validation_error(partner.get(EVENTS, {"incluir": "atendente,xyz,SLA"}), {"incluir": [UNKNOWN]})


def test_an_event_written_before_blocks_existed_comes_as_it_was(partner, history):
    WebhookEvent.objects.update(ticket_blocks="")

    assert items(partner, incluir="atendente,contato") == items(partner)


def test_the_feed_shows_another_organization_none_of_these_blocks(partner, other_partner, history, other_organization):
    theirs = ticket_update(ticket=make_ticket(other_organization), assignee=make_agent(other_organization))

    seen = items(other_partner, incluir="atendente,contato")

    assert [item["data"]["ticket"]["id"] for item in seen] == [str(theirs.pk)]
    assert seen[0]["data"]["ticket"]["contato_id"] == str(theirs.requester_id)
    assert str(history[0].requester_id) not in json.dumps(seen)


# --- the webhook's setting -------------------------------------------------------------------------


def valid_body(**overrides) -> dict:
    return {"nome": "CRM", "url": "https://hooks.example.com/helpdesk", "eventos": ["ticket.resolvido"], **overrides}


def test_a_webhook_is_created_without_blocks_by_default(manager):
    data = assert_success(manager.post(WEBHOOKS, valid_body(), format="json"), 200, CREATED)

    assert data["incluir"] == []
    assert Webhook.objects.get().blocks == []


CREATED = "Webhook criado. Guarde o segredo: ele não será exibido novamente."


def test_a_webhook_keeps_its_blocks_once_in_the_blocks_order(manager, organization):
    response = manager.post(WEBHOOKS, valid_body(incluir=["contato", "atendente", "contato"]), format="json")

    data = assert_success(response, 200, CREATED)
    assert data["incluir"] == ["atendente", "contato"]
    assert list(data)[:5] == ["id", "nome", "url", "eventos", "incluir"]
    webhook = Webhook.objects.get()
    assert webhook.blocks == ["atendente", "contato"]
    assert assert_success(manager.get(f"{WEBHOOKS}/{webhook.pk}"), 200, "Webhook encontrado.")["incluir"] == [
        "atendente",
        "contato",
    ]
    assert assert_success(manager.get(WEBHOOKS), 200, "Webhooks listados.")[0]["incluir"] == ["atendente", "contato"]
    record = AuditRecord.objects.get(action="webhook.criado")
    assert record.changes["incluir"] == {"antes": None, "depois": ["atendente", "contato"]}


def test_patch_sets_and_clears_the_blocks_and_leaves_them_when_absent(manager, organization):
    webhook = make_webhook(organization)
    path = f"{WEBHOOKS}/{webhook.pk}"

    set_ = assert_success(manager.patch(path, {"incluir": ["contato"]}, format="json"), 200, "Webhook atualizado.")
    kept = assert_success(manager.patch(path, {"nome": "Outro"}, format="json"), 200, "Webhook atualizado.")
    cleared = assert_success(manager.patch(path, {"incluir": []}, format="json"), 200, "Webhook atualizado.")

    assert (set_["incluir"], kept["incluir"], cleared["incluir"]) == (["contato"], ["contato"], [])
    assert Webhook.objects.get(pk=webhook.pk).blocks == []
    records = AuditRecord.objects.filter(action="webhook.atualizado").order_by("created_at", "id")
    assert [record.changes["incluir"] for record in records if "incluir" in record.changes] == [
        {"antes": [], "depois": ["contato"]},
        {"antes": ["contato"], "depois": []},
    ]


@pytest.mark.parametrize(
    ("incluir", "errors"),
    [
        (["atendente", "xyz", "SLA"], {"incluir": [UNKNOWN]}),
        ("atendente", {"incluir": ['Esperava uma lista de itens, mas recebeu tipo "str".']}),
        ([1], {"incluir.0": ["Informe um texto."]}),
        (None, {"incluir": ["Este campo não pode ser nulo."]}),
    ],
)
def test_bad_blocks_are_a_422_on_incluir_and_nothing_is_written(manager, organization, incluir, errors):
    webhook = make_webhook(organization, blocks=["contato"])
    before = row_counts()

    created = manager.post(WEBHOOKS, valid_body(incluir=incluir), format="json")
    patched = manager.patch(f"{WEBHOOKS}/{webhook.pk}", {"incluir": incluir, "nome": "Novo"}, format="json")

    assert_exact_validation_error(created, errors)
    assert_exact_validation_error(patched, errors)
    assert row_counts() == before
    webhook.refresh_from_db()
    assert (webhook.name, webhook.blocks) == ("ERP", ["contato"])


def test_another_organizations_webhook_is_a_404_and_keeps_its_blocks(manager, other_organization):
    theirs = make_webhook(other_organization, blocks=["contato"])

    response = manager.patch(f"{WEBHOOKS}/{theirs.pk}", {"incluir": ["atendente"]}, format="json")

    assert response.status_code == 404
    assert Webhook.objects.get(pk=theirs.pk).blocks == ["contato"]


# --- what each delivery keeps ---------------------------------------------------------------------


def test_each_delivery_keeps_the_blocks_its_webhook_asked_for_when_the_event_was_written(organization, agent):
    both = make_webhook(organization, name="Com blocos", blocks=["contato", "atendente"])
    plain = make_webhook(organization, name="Sem blocos")
    ticket = make_ticket(organization)

    make_agent_reply(ticket, agent, body="Primeira")
    Webhook.objects.filter(pk=both.pk).update(blocks=["contato"])
    make_agent_reply(ticket, agent, body="Segunda")
    ticket_delete(ticket=Ticket.objects.get(pk=ticket.pk), actor=SYSTEM)

    kept = {
        (delivery.webhook_id, delivery.event.kind, delivery.event.body.count("Primeira")): delivery.blocks
        for delivery in WebhookDelivery.objects.select_related("event")
    }
    assert kept == {
        (both.pk, "ticket.resposta_publica", 1): "atendente,contato",
        (both.pk, "ticket.resposta_publica", 0): "contato",
        (both.pk, "ticket.excluido", 0): "",  # nothing to add to a deleted ticket
        (plain.pk, "ticket.resposta_publica", 1): "",
        (plain.pk, "ticket.resposta_publica", 0): "",
        (plain.pk, "ticket.excluido", 0): "",
    }
