"""`incluir` on the partner's tickets (issue 21): optional blocks after TicketPublico's own keys, asked for by
name on the list, a read, the change list and the create; without it, the very bytes of before."""

import copy
import uuid

import pytest
import schemathesis
from django.test import Client

from api_framework.envelope import json_bytes
from helpdesk.actors import SYSTEM
from tests.assertions import assert_exact_validation_error, assert_success, assert_ticket_not_found, row_counts
from tests.contract import TICKET_BODY, TICKET_FIELDS, TICKET_SUMMARY_ORDER
from tests.factories import make_agent, make_agent_reply, make_ticket
from tests.test_openapi_conformance import assert_conforms
from tickets.models import Ticket
from tickets.services import RequesterData, ticket_delete, ticket_update

TICKETS = "/api/v1/tickets"
CHANGES = "/api/v1/tickets/alteracoes"
ACCEPTED = "Blocos aceitos: atendente, contato, tags, campos, sla, metricas, avaliacao, mesclagem."
UNKNOWN_NAME = f"Bloco desconhecido: inexistente. {ACCEPTED}"

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


@pytest.fixture
def assigned(organization):
    """A ticket with an assignee, and one without (newest first: the one without)."""
    agent = make_agent(organization, name="Carla Suporte")
    first = ticket_update(ticket=make_ticket(organization, subject="Com atendente"), assignee=agent)
    second = make_ticket(organization, subject="Sem atendente")
    return agent, first, second


def blocks_of(ticket: Ticket, agent=None) -> dict:
    """What `incluir=atendente,contato` adds to a ticket, in that order."""
    return {
        "atendente": {"id": str(agent.pk), "nome": agent.name} if agent else None,
        "contato_id": str(ticket.requester_id),
    }


def without_blocks(item: dict) -> dict:
    return {key: value for key, value in item.items() if key not in ("atendente", "contato_id")}


# --- the default shape does not move ---------------------------------------------------------------


@pytest.mark.parametrize("path", [TICKETS, "one"])
def test_an_empty_incluir_answers_the_very_bytes_of_no_incluir(partner, assigned, path):
    _agent, ticket, _other = assigned
    path = f"{TICKETS}/{ticket.pk}" if path == "one" else path

    plain = partner.get(path)
    empty = partner.get(path, {"incluir": ""})
    commas = partner.get(path, {"incluir": ","})

    assert plain.status_code == 200
    assert empty.content == plain.content
    assert commas.content == plain.content
    data = plain.json()["data"]
    for item in data["data"] if path == TICKETS else [data]:
        assert set(item) == TICKET_FIELDS


def test_an_empty_incluir_answers_the_change_list_of_no_incluir(partner, assigned):
    def answer(params):
        # The cursor is encrypted afresh on every answer: the rest is compared byte for byte.
        data = assert_success(partner.get(CHANGES, params), 200, "Alterações listadas.")
        return json_bytes({key: value for key, value in data.items() if key != "proximo_cursor"})

    assert answer({"incluir": ""}) == answer({}) == answer({"incluir": ","})
    assert all(set(item) == TICKET_FIELDS for item in partner.get(CHANGES).json()["data"]["itens"])


def test_the_list_with_every_block_is_the_list_without_them_plus_their_keys_after_respostas(partner, assigned):
    agent, first, second = assigned

    plain = assert_success(partner.get(TICKETS), 200, "Tickets listados.")
    full = assert_success(partner.get(TICKETS, {"incluir": "atendente,contato"}), 200, "Tickets listados.")

    assert {key: value for key, value in full.items() if key != "data"} == {
        key: value for key, value in plain.items() if key != "data"
    }
    assert full["data"] == [
        {**plain["data"][0], **blocks_of(second)},
        {**plain["data"][1], **blocks_of(first, agent)},
    ]
    assert [list(item)[-3:] for item in full["data"]] == [["respostas", "atendente", "contato_id"]] * 2


@pytest.mark.parametrize(
    ("incluir", "keys"),
    [
        ("atendente", ["atendente"]),
        ("contato", ["contato_id"]),
        ("contato,atendente", ["atendente", "contato_id"]),
        ("contato,contato,atendente,", ["atendente", "contato_id"]),
    ],
)
def test_each_block_brings_only_its_keys_once_in_the_blocks_order(partner, assigned, incluir, keys):
    agent, first, _second = assigned

    data = assert_success(partner.get(f"{TICKETS}/{first.pk}", {"incluir": incluir}), 200, "Ticket encontrado.")

    assert list(data) == [*[key for key in data if key in TICKET_FIELDS], *keys]
    assert {key: data[key] for key in keys} == {key: blocks_of(first, agent)[key] for key in keys}


def test_a_repeated_incluir_parameter_counts_every_value(partner, assigned):
    agent, first, _second = assigned

    response = partner.get(f"{TICKETS}/{first.pk}?incluir=atendente&incluir=contato")

    data = assert_success(response, 200, "Ticket encontrado.")
    assert list(data)[-2:] == ["atendente", "contato_id"]
    assert {key: data[key] for key in ("atendente", "contato_id")} == blocks_of(first, agent)


def test_a_read_with_blocks_is_the_read_without_them_plus_their_keys(partner, assigned):
    agent, first, second = assigned
    make_agent_reply(first, agent, body="Já estamos vendo.")

    for ticket, assignee in ((first, agent), (second, None)):
        plain = partner.get(f"{TICKETS}/{ticket.pk}").json()["data"]
        full = partner.get(f"{TICKETS}/{ticket.pk}", {"incluir": "atendente,contato"}).json()["data"]
        assert full == {**plain, **blocks_of(ticket, assignee)}
        assert without_blocks(full) == plain


def test_the_assignee_block_follows_the_ticket(partner, assigned):
    agent, first, _second = assigned
    colleague = make_agent(first.organization, name="Davi Plantão")
    path = f"{TICKETS}/{first.pk}"

    assert partner.get(path, {"incluir": "atendente"}).json()["data"]["atendente"] == {
        "id": str(agent.pk),
        "nome": "Carla Suporte",
    }
    ticket_update(ticket=Ticket.objects.get(pk=first.pk), assignee=colleague)
    assert partner.get(path, {"incluir": "atendente"}).json()["data"]["atendente"] == {
        "id": str(colleague.pk),
        "nome": "Davi Plantão",
    }
    ticket_update(ticket=Ticket.objects.get(pk=first.pk), unassign=True)
    assert partner.get(path, {"incluir": "atendente"}).json()["data"]["atendente"] is None


def test_the_contact_block_names_the_same_contact_for_the_same_requester(partner, organization):
    requester = RequesterData(name="Ana", email="ana@example.test", external_id="cli-ana")
    first, second = make_ticket(organization, requester=requester), make_ticket(organization, requester=requester)
    other = make_ticket(organization)

    items = partner.get(TICKETS, {"incluir": "contato"}).json()["data"]["data"]

    by_id = {item["id"]: item["contato_id"] for item in items}
    assert by_id[str(first.pk)] == by_id[str(second.pk)] == str(first.requester_id)
    assert by_id[str(other.pk)] == str(other.requester_id) != by_id[str(first.pk)]


def test_the_change_list_carries_the_blocks_and_leaves_deletions_alone(partner, organization, assigned):
    agent, first, second = assigned
    gone = make_ticket(organization)
    ticket_delete(ticket=gone, actor=SYSTEM)

    plain = assert_success(partner.get(CHANGES), 200, "Alterações listadas.")
    full = assert_success(partner.get(CHANGES, {"incluir": "atendente,contato"}), 200, "Alterações listadas.")

    assert full["itens"] == [
        {**plain["itens"][0], **blocks_of(first, agent)},
        {**plain["itens"][1], **blocks_of(second)},
    ]
    assert full["excluidos"] == plain["excluidos"] and [item["id"] for item in full["excluidos"]] == [str(gone.pk)]
    assert full["tem_mais"] is plain["tem_mais"] is False


# --- the create answers ------------------------------------------------------------------------------


def test_a_create_answers_the_blocks_asked_for(partner, organization):
    plain = assert_success(partner.post(TICKETS, TICKET_BODY, format="json"), 201, "Ticket criado.")
    response = partner.post(f"{TICKETS}?incluir=atendente,contato", TICKET_BODY, format="json")

    data = assert_success(response, 201, "Ticket criado.")
    ticket = Ticket.objects.get(pk=data["id"])
    assert without_blocks(data) == {
        **plain,
        "id": data["id"],
        "numero": 2,
        "criado_em": data["criado_em"],
        "atualizado_em": data["atualizado_em"],
    }
    assert list(data)[-2:] == ["atendente", "contato_id"]
    assert (data["atendente"], data["contato_id"]) == (None, str(ticket.requester_id))


def test_an_existing_external_id_answers_its_ticket_with_its_assignee(partner, organization):
    body = {**TICKET_BODY, "external_id": "pedido-7"}
    created = assert_success(partner.post(TICKETS, body, format="json"), 201, "Ticket criado.")
    agent = make_agent(organization, name="Carla Suporte")
    ticket_update(ticket=Ticket.objects.get(pk=created["id"]), assignee=agent)
    plain = partner.post(TICKETS, body, format="json").json()["data"]

    response = partner.post(f"{TICKETS}?incluir=atendente,contato", body, format="json")

    data = assert_success(response, 200, "Ticket já existente para este external_id.")
    assert data == {**plain, **blocks_of(Ticket.objects.get(pk=created["id"]), agent)}


def test_an_idempotency_key_replays_the_answer_of_the_same_incluir_and_refuses_another(partner):
    headers = {"HTTP_IDEMPOTENCY_KEY": "pedido-incluir-1"}
    first = partner.post(f"{TICKETS}?incluir=contato", TICKET_BODY, format="json", **headers)
    again = partner.post(f"{TICKETS}?incluir=contato", TICKET_BODY, format="json", **headers)
    other = partner.post(f"{TICKETS}?incluir=atendente", TICKET_BODY, format="json", **headers)

    assert first.status_code == again.status_code == 201
    # The same JSON (PostgreSQL's jsonb keeps a stored answer's keys in its own order: decisions.md).
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert "contato_id" in first.json()["data"]
    assert_exact_validation_error(other, {"Idempotency-Key": ["Esta chave já foi usada com outra requisição."]})
    assert Ticket.objects.count() == 1


# --- a contact's tickets, the customer's resolve and reopen (the other answers with tickets) --------------


def test_a_contacts_tickets_carry_the_blocks_asked_for(partner, organization, assigned):
    agent, ticket, _other = assigned
    path = f"/api/v1/contatos/{ticket.requester_id}/tickets"

    plain = partner.get(path)
    with_blocks = partner.get(path, {"incluir": "contato,atendente"})

    assert with_blocks.status_code == 200, with_blocks.content
    items = with_blocks.json()["data"]["data"]
    assert [without_blocks(item) for item in items] == plain.json()["data"]["data"]
    assert [list(item)[-2:] for item in items] == [["atendente", "contato_id"]] * len(items)
    assert {item["id"]: (item["atendente"], item["contato_id"]) for item in items}[str(ticket.pk)] == (
        {"id": str(agent.pk), "nome": "Carla Suporte"},
        str(ticket.requester_id),
    )
    assert partner.get(path, {"incluir": ""}).content == plain.content


@pytest.mark.parametrize(("action", "message"), [("resolver", "Ticket resolvido."), ("reabrir", "Ticket reaberto.")])
def test_the_customers_resolve_and_reopen_answer_the_blocks_asked_for(partner, assigned, action, message):
    agent, ticket, _other = assigned
    path = f"{TICKETS}/{ticket.pk}/{action}"

    response = partner.post(f"{path}?incluir=atendente,contato")

    body = assert_success(response, 200, message)
    assert {key: body[key] for key in ("atendente", "contato_id")} == blocks_of(ticket, agent)
    assert list(body)[-2:] == ["atendente", "contato_id"]
    plain = partner.post(path).json()["data"]  # the ticket is where the first call left it: nothing moves
    assert "atendente" not in plain and "contato_id" not in plain
    assert without_blocks(body) == plain


@pytest.mark.parametrize("action", ["resolver", "reabrir"])
def test_a_bad_incluir_on_resolve_or_reopen_is_a_422_and_moves_nothing(partner, organization, assigned, action):
    _agent, ticket, _other = assigned
    before = Ticket.objects.values("status_id", "updated_at").get(pk=ticket.pk)

    response = partner.post(f"{TICKETS}/{ticket.pk}/{action}?incluir=inexistente")

    assert_exact_validation_error(response, {"incluir": [UNKNOWN_NAME]})
    assert Ticket.objects.values("status_id", "updated_at").get(pk=ticket.pk) == before


@pytest.mark.parametrize("action", ["resolver", "reabrir"])
def test_resolve_or_reopen_of_another_organizations_ticket_is_a_404_before_a_bad_incluir(
    partner, other_organization, action
):
    theirs = make_ticket(other_organization)

    for query in ("", "?incluir=atendente", "?incluir=inexistente"):
        assert_ticket_not_found(partner.post(f"{TICKETS}/{theirs.pk}/{action}{query}"))


def test_another_organizations_contact_is_a_404_before_a_bad_incluir(partner, other_organization):
    theirs = make_ticket(other_organization)

    for query in ("", "?incluir=atendente", "?incluir=inexistente"):
        response = partner.get(f"/api/v1/contatos/{theirs.requester_id}/tickets{query}")
        assert response.status_code == 404, response.content
        assert response.json()["message"] == "Contato não encontrado."


# --- unknown names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("incluir", "message"),
    [
        ("inexistente", UNKNOWN_NAME),
        (
            "atendente,xyz,SLA,xyz",
            f"Bloco desconhecido: xyz, SLA. {ACCEPTED}",
        ),
        (
            "Atendente",
            f"Bloco desconhecido: Atendente. {ACCEPTED}",
        ),
        (
            "atendente, contato",
            f"Bloco desconhecido:  contato. {ACCEPTED}",
        ),
        (
            "contato_id",
            f"Bloco desconhecido: contato_id. {ACCEPTED}",
        ),
        (
            "Tags",
            f"Bloco desconhecido: Tags. {ACCEPTED}",
        ),
    ],
)
@pytest.mark.parametrize("path", [TICKETS, CHANGES, "one"])
def test_an_unknown_name_is_a_422_on_incluir_that_names_it(partner, organization, path, incluir, message):
    ticket = make_ticket(organization)
    path = f"{TICKETS}/{ticket.pk}" if path == "one" else path

    assert_exact_validation_error(partner.get(path, {"incluir": incluir}), {"incluir": [message]})


def test_an_incluir_past_255_characters_is_a_422(partner, organization):
    response = partner.get(TICKETS, {"incluir": ",".join(["contato"] * 40)})

    assert_exact_validation_error(
        response, {"incluir": ["Certifique-se de que este campo não tenha mais de 255 caracteres."]}
    )


def test_a_create_with_an_unknown_block_writes_nothing(partner, organization):
    before = row_counts()

    response = partner.post(f"{TICKETS}?incluir=inexistente", TICKET_BODY, format="json")

    assert_exact_validation_error(response, {"incluir": [UNKNOWN_NAME]})
    assert row_counts() == before


def test_an_unknown_block_is_named_with_the_list_filters_errors(partner, organization):
    response = partner.get(TICKETS, {"incluir": "inexistente", "prioridade": "x", "por_pagina": 0})

    assert response.status_code == 422
    assert response.json()["errors"]["incluir"] == [UNKNOWN_NAME]
    assert set(response.json()["errors"]) == {"incluir", "prioridade", "por_pagina"}


# --- tenancy ---------------------------------------------------------------------------------------


def test_another_organizations_ticket_is_a_404_with_or_without_blocks_even_with_a_bad_incluir(
    partner, other_organization
):
    theirs = make_ticket(other_organization)

    for params in ({}, {"incluir": "atendente,contato"}, {"incluir": "inexistente"}):
        assert_ticket_not_found(partner.get(f"{TICKETS}/{theirs.pk}", params))
        assert_ticket_not_found(partner.get(f"{TICKETS}/{uuid.uuid4()}", params))


def test_blocks_never_bring_another_organizations_tickets_or_contacts(partner, organization, other_organization):
    requester = RequesterData(name="Ana", email="ana@example.test", external_id="cli-ana")
    ours = make_ticket(organization, requester=requester)
    theirs = ticket_update(
        ticket=make_ticket(other_organization, requester=requester),
        assignee=make_agent(other_organization, name="Agente Globex"),
    )

    listed = partner.get(TICKETS, {"incluir": "atendente,contato"}).json()["data"]["data"]
    changed = partner.get(CHANGES, {"incluir": "atendente,contato"}).json()["data"]["itens"]

    for items in (listed, changed):
        assert [(item["id"], item["contato_id"], item["atendente"]) for item in items] == [
            (str(ours.pk), str(ours.requester_id), None)
        ]
    assert str(theirs.requester_id) != str(ours.requester_id)


# --- the schema --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema() -> dict:
    response = Client().get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def test_ticket_publico_is_unchanged_and_the_blocks_are_optional_components_beside_it(schema):
    components = schema["components"]["schemas"]

    ticket = components["TicketPublicOut"]
    assert list(ticket["properties"]) == [*TICKET_SUMMARY_ORDER, "respostas"]
    assert sorted(ticket["required"]) == sorted(TICKET_FIELDS)
    assert components["TicketPublicWithBlocksOut"]["allOf"] == [
        {"$ref": "#/components/schemas/TicketPublicOut"},
        {"$ref": "#/components/schemas/AssigneeBlockOut"},
        {"$ref": "#/components/schemas/ContactBlockOut"},
        {"$ref": "#/components/schemas/TagsBlockOut"},
        {"$ref": "#/components/schemas/CustomFieldsBlockOut"},
        {"$ref": "#/components/schemas/SlaBlockOut"},
        {"$ref": "#/components/schemas/MetricsBlockOut"},
        {"$ref": "#/components/schemas/RatingBlockOut"},
        {"$ref": "#/components/schemas/MergeBlockOut"},
    ]
    assert components["TicketSummaryWithBlocksOut"]["allOf"][0] == {"$ref": "#/components/schemas/TicketSummaryOut"}
    for block, keys in (
        ("AssigneeBlockOut", ["atendente"]),
        ("ContactBlockOut", ["contato_id"]),
        ("TagsBlockOut", ["tags"]),
        ("CustomFieldsBlockOut", ["campos"]),
        ("SlaBlockOut", ["sla"]),
        ("MetricsBlockOut", ["metricas"]),
        ("RatingBlockOut", ["avaliacao"]),
        ("MergeBlockOut", ["mesclado_em"]),
    ):
        assert list(components[block]["properties"]) == keys
        assert "required" not in components[block]  # present exactly when asked for
    assert components["AssigneeBlockOut"]["properties"]["atendente"]["nullable"] is True
    assert components["ContactBlockOut"]["properties"]["contato_id"] == {
        "type": "string",
        "format": "uuid",
        "description": components["ContactBlockOut"]["properties"]["contato_id"]["description"],
    }


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/api/v1/tickets", "get"),
        ("/api/v1/tickets", "post"),
        ("/api/v1/tickets/{id}", "get"),
        ("/api/v1/tickets/alteracoes", "get"),
        ("/api/v1/eventos", "get"),
        ("/api/v1/tickets/{id}/resolver", "post"),
        ("/api/v1/tickets/{id}/reabrir", "post"),
        ("/api/v1/contatos/{id}/tickets", "get"),
    ],
)
def test_every_answer_with_tickets_takes_incluir_with_the_names_it_knows(schema, path, method):
    [parameter] = [p for p in schema["paths"][path][method]["parameters"] if p["name"] == "incluir"]

    assert parameter["in"] == "query" and not parameter.get("required")
    assert parameter["schema"] == {
        "type": "string",
        "maxLength": 255,
        "pattern": (
            "^((atendente|contato|tags|campos|sla|metricas|avaliacao|mesclagem)?,)*"
            "(atendente|contato|tags|campos|sla|metricas|avaliacao|mesclagem)?$"
        ),
    }
    assert "422" in schema["paths"][path][method]["responses"]


def test_the_panel_takes_no_incluir(schema):
    assert "incluir" not in [p["name"] for p in schema["paths"]["/api/tickets"]["get"]["parameters"]]


def test_answers_with_blocks_conform_to_the_published_schema(partner, assigned, schema):
    documented = schemathesis.openapi.from_dict(copy.deepcopy(schema))
    _agent, ticket, _other = assigned
    incluir = "?incluir=atendente,contato,tags"

    for method, path, template, response in [
        ("GET", TICKETS, TICKETS, partner.get(TICKETS + incluir)),
        ("GET", f"{TICKETS}/{ticket.pk}", "/api/v1/tickets/{id}", partner.get(f"{TICKETS}/{ticket.pk}{incluir}")),
        ("GET", CHANGES, CHANGES, partner.get(CHANGES + incluir)),
        ("POST", TICKETS, TICKETS, partner.post(TICKETS + incluir, TICKET_BODY, format="json")),
        ("GET", "/api/v1/eventos", "/api/v1/eventos", partner.get("/api/v1/eventos" + incluir)),
        (
            "GET",
            f"/api/v1/contatos/{ticket.requester_id}/tickets",
            "/api/v1/contatos/{id}/tickets",
            partner.get(f"/api/v1/contatos/{ticket.requester_id}/tickets{incluir}"),
        ),
        (
            "POST",
            f"{TICKETS}/{ticket.pk}/resolver",
            "/api/v1/tickets/{id}/resolver",
            partner.post(f"{TICKETS}/{ticket.pk}/resolver{incluir}"),
        ),
        (
            "POST",
            f"{TICKETS}/{ticket.pk}/reabrir",
            "/api/v1/tickets/{id}/reabrir",
            partner.post(f"{TICKETS}/{ticket.pk}/reabrir{incluir}"),
        ),
    ]:
        assert response.status_code in (200, 201), (path, response.content)
        assert_conforms(documented, method, template, response)
