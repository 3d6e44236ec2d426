"""Published, guarded event schemas: every kind, raised by real actions through the doors agents use, has a
body that validates against the component the OpenAPI document publishes for it (strictly: no key the
schema does not name), and the published bodies stay compatible with docs/event-schemas.json (they only
grow: `make event-schemas` refreshes it after an addition)."""

import copy
import json
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from integrations.api.event_schemas import incompatible_changes, incompatible_kinds, shapes
from integrations.models import EventKind, WebhookEvent
from tests.assertions import assert_success, panel_client
from tests.contract import ALL_EVENTS
from tests.factories import make_agent, make_webhook, status_of
from tickets.models import Ticket
from tickets.service_levels import sla_announcements_run

SNAPSHOT = Path(__file__).resolve().parents[2] / "docs" / "event-schemas.json"
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
SYNC_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "sync.md"

pytestmark = pytest.mark.usefixtures("example_dns", "generous_rate_limits")


@pytest.fixture(scope="module")
def document() -> dict:
    response = Client().get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def strict(schema, components):
    """The OpenAPI 3.0 schema as JSON Schema (nullable as a type), closed: a key the schema does not name fails."""
    if isinstance(schema, list):
        return [strict(item, components) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return strict(components[schema["$ref"].rsplit("/", 1)[1]], components)
    if len(schema.get("allOf", [])) > 1:  # a composition (a ticket and its blocks): one object, closed
        parts = [strict(part, components) for part in schema["allOf"]]
        return {
            "type": "object",
            "properties": {name: value for part in parts for name, value in part.get("properties", {}).items()},
            "required": [name for part in parts for name in part.get("required", [])],
            "additionalProperties": False,
        }
    converted = {key: strict(value, components) for key, value in schema.items() if key not in ("nullable",)}
    if converted.get("type") == "object" and "properties" in converted:
        converted["additionalProperties"] = False
    if schema.get("nullable"):
        converted = {"anyOf": [converted, {"type": "null"}]}
    return converted


def validate(document: dict, body: dict) -> None:
    operation = document["x-webhooks"][body["evento"]]["post"]
    schema = strict(
        operation["requestBody"]["content"]["application/json"]["schema"], document["components"]["schemas"]
    )
    jsonschema.validate(body, schema, format_checker=jsonschema.FormatChecker())


def every_kind_through_the_doors(organization, admin, partner) -> None:
    """Each kind, by an agent at the panel API (or the system for the test event), as partners see them."""
    make_webhook(organization)
    agent = panel_client(admin.email)
    policies = {"politicas": [{"prioridade": "media", "primeira_resposta": 30, "resolucao": 60}]}
    assert_success(agent.put("/api/sla", policies, format="json"), 200, "Políticas de SLA atualizadas.")
    colleague = make_agent(organization, name="Carla Colega")
    created = agent.post(
        "/api/tickets",
        {
            "assunto": "Pedido",
            "descricao": "Atrasado",
            "solicitante": {"nome": "Ana"},
            "atendente_id": str(colleague.pk),
        },
        format="json",
    )
    ticket = assert_success(created, 201, "Ticket criado.")["id"]
    assert (
        partner.post(f"/api/v1/tickets/{ticket}/respostas", {"mensagem": "Novidades?"}, format="json").status_code
        == 201
    )
    # The beat, a day later: both targets at risk, then breached.
    assert sla_announcements_run(now=timezone.now() + timedelta(days=1)) == 4
    reply = agent.post(
        f"/api/tickets/{ticket}/respostas",
        {"mensagem": "Segue o comprovante.", "arquivo": SimpleUploadedFile("c.txt", b"Comprovante\n", "text/plain")},
        format="multipart",
    )
    reply_id = assert_success(reply, 201, "Resposta enviada.")["id"]
    agent.patch(
        f"/api/tickets/{ticket}/respostas/{reply_id}", {"mensagem": "Segue o comprovante (PDF)."}, format="json"
    )
    resolved = status_of(organization, "resolvido")
    agent.patch(f"/api/tickets/{ticket}", {"status_id": str(resolved.pk), "prioridade": "alta"}, format="json")
    agent.patch(f"/api/tickets/{ticket}", {"atendente_id": None}, format="json")
    for field in (
        {"chave": "pedido", "nome": "Pedido", "tipo": "texto"},
        {"chave": "itens", "nome": "Itens", "tipo": "multilista", "opcoes": ["a", "b"]},
        {"chave": "valor", "nome": "Valor", "tipo": "numero"},
        {"chave": "pago", "nome": "Pago", "tipo": "booleano"},
    ):
        assert_success(agent.post("/api/campos", field, format="json"), 201, "Campo criado.")
    values = {"pedido": "A-1", "itens": ["b"], "valor": 9.9, "pago": True}
    assert_success(agent.patch(f"/api/tickets/{ticket}", {"campos": values}, format="json"), 200, "Ticket atualizado.")
    assert_success(
        agent.patch(f"/api/tickets/{ticket}", {"tags": {"adicionar": ["vip", "entrega"]}}, format="json"),
        200,
        "Ticket atualizado.",
    )
    duplicate = agent.post(
        "/api/tickets",
        {"assunto": "Pedido (de novo)", "descricao": "Atrasado", "solicitante": {"nome": "Ana"}},
        format="json",
    )
    merged = agent.post(
        f"/api/tickets/{ticket}/mesclar",
        {"origens": [assert_success(duplicate, 201, "Ticket criado.")["id"]]},
        format="json",
    )
    assert_success(merged, 200, "Tickets mesclados.")
    webhook = organization.webhooks.get()
    assert_success(
        panel_client(admin.email).post(f"/api/webhooks/{webhook.pk}/testar"), 200, "Evento de teste enfileirado."
    )
    contact = Ticket.objects.get(pk=ticket).requester_id
    assert_success(panel_client(admin.email).post(f"/api/contatos/{contact}/anonimizar"), 200, "Contato anonimizado.")
    assert_success(agent.delete(f"/api/tickets/{ticket}"), 200, "Ticket excluído.")


def test_every_kind_raised_by_real_actions_validates_against_its_published_schema(
    document, organization, admin, partner
):
    every_kind_through_the_doors(organization, admin, partner)

    bodies = [
        json.loads(body)
        for body in WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("body", flat=True)
    ]
    assert {body["evento"] for body in bodies} == {kind.value for kind in EventKind}
    for body in bodies:
        validate(document, body)
    feed = partner.get("/api/v1/eventos").json()["data"]["itens"]
    assert [item["evento"] for item in feed] == [body["evento"] for body in bodies if body["evento"] != "webhook.teste"]


def test_a_body_the_schema_does_not_describe_fails_the_validation(document, organization, admin, partner):
    every_kind_through_the_doors(organization, admin, partner)
    body = json.loads(WebhookEvent.objects.filter(kind=EventKind.ASSIGNED).first().body)

    for broken in (
        {**body, "data": {**body["data"], "novo_campo": 1}},
        {**body, "data": {key: value for key, value in body["data"].items() if key != "ator"}},
        {**body, "data": {**body["data"], "alteracoes": {"atendente": {"anterior": 1, "atual": None}}}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validate(document, broken)


def test_the_document_publishes_a_schema_and_a_webhook_per_kind(document):
    assert set(document["x-webhooks"]) == {*ALL_EVENTS, "webhook.teste"}
    feed_item = document["components"]["schemas"]["EventoDoFeed"]
    assert set(feed_item["discriminator"]["mapping"]) == set(ALL_EVENTS)


def test_the_published_event_bodies_are_compatible_with_the_snapshot(document):
    snapshot = json.loads(SNAPSHOT.read_text())

    assert incompatible_kinds(snapshot, shapes(document)) == [], "run `make event-schemas` only after an addition"
    assert set(snapshot) == {*ALL_EVENTS, "webhook.teste"}


BEFORE = {
    "type": "object",
    "required": ["ticket", "ator"],
    "properties": {
        "ticket": {"type": "object", "properties": {"numero": {"type": "integer"}}},
        "ator": {"type": "object", "properties": {"tipo": {"type": "string", "enum": ["agente", "sistema"]}}},
    },
}


def changed(edit) -> dict:
    after = copy.deepcopy(BEFORE)
    edit(after)
    return after


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda s: s["properties"].pop("ator"), "/ator: removed"),
        (lambda s: s["properties"].__setitem__("actor", s["properties"].pop("ator")), "/ator: removed"),
        (lambda s: s["properties"]["ticket"]["properties"]["numero"].update(type="string"), "type 'integer'"),
        (lambda s: s["properties"]["ticket"]["properties"]["numero"].update(nullable=True), "became nullable"),
        (lambda s: s["properties"]["ator"]["properties"]["tipo"].update(enum=["agente"]), "enum values gone"),
        (lambda s: s["required"].remove("ator"), "/ator: no longer always sent"),
    ],
    ids=["removed", "renamed", "retyped", "nullable", "enum-value-gone", "no-longer-required"],
)
def test_the_guard_refuses_a_removed_renamed_or_retyped_field(edit, problem):
    problems = incompatible_changes(BEFORE, changed(edit))

    assert any(problem in found for found in problems), problems


def test_the_guard_lets_additions_pass():
    def add(s):
        s["properties"]["sla"] = {"type": "object"}
        s["properties"]["ator"]["properties"]["tipo"]["enum"].append("parceiro")
        s["required"].append("sla")

    assert incompatible_changes(BEFORE, changed(add)) == []
    assert incompatible_kinds({"ticket.criado": BEFORE}, {"ticket.criado": BEFORE, "ticket.mesclado": BEFORE}) == []
    assert incompatible_kinds({"ticket.criado": BEFORE}, {}) == ["ticket.criado: removed"]


@pytest.mark.parametrize(("guide", "kinds"), [(GUIDE, [*ALL_EVENTS, "webhook.teste"]), (SYNC_GUIDE, ALL_EVENTS)])
def test_the_guides_list_every_kind(guide, kinds):
    text = guide.read_text()

    assert [kind for kind in kinds if f"`{kind}`" not in text] == []
