"""GET /api/v1/eventos: the organization's events in order, each the body a webhook delivery carries,
recorded whether or not a webhook subscribes.

What never skipping an event under concurrent writers takes is proven on PostgreSQL in
tests/test_change_feeds_postgres.py.
"""

import json
import uuid

import pytest
import schemathesis
from django.test import Client

from integrations.models import EventKind, WebhookDelivery, WebhookEvent
from tests.assertions import assert_error, assert_success, assert_validation_error, queries_of
from tests.factories import (
    make_agent,
    make_agent_reply,
    make_customer_reply,
    make_test_delivery,
    make_ticket,
    make_webhook,
    status_of,
)
from tests.test_openapi_conformance import assert_conforms
from tickets.services import reply_edit_as_agent, reply_edit_as_customer, ticket_update

EVENTS = "/api/v1/eventos"

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def feed(client, **params) -> dict:
    return assert_success(client.get(EVENTS, params), 200, "Eventos listados.")


def stored(organization) -> list[dict]:
    """The organization's feed events as the table holds them, in feed order."""
    events = WebhookEvent.objects.filter(organization=organization).exclude(kind=EventKind.TEST)
    return [json.loads(body) for body in events.order_by("change_tx", "change_seq").values_list("body", flat=True)]


def kinds(items) -> list[str]:
    return [item["evento"] for item in items]


def assert_event_not_found(response) -> None:
    assert_error(response, 404, "Evento não encontrado.", "depois_de")
    assert response.json()["errors"]["message"] == "Evento inexistente no feed desta organização."


@pytest.fixture
def history(organization, agent):
    """A reply, its edit and a resolution, with no webhook at all; plus what emits nothing."""
    ticket = make_ticket(organization, subject="Pedido")
    reply = make_agent_reply(ticket, agent, body="Sai hoje.")
    reply_edit_as_agent(reply=reply, agent=agent, body="Sai amanhã.")
    make_agent_reply(ticket, agent, body="NOTA-INTERNA", internal=True)
    customer = make_customer_reply(ticket, body="Obrigado")
    reply_edit_as_customer(reply=customer, body="Obrigado!")
    ticket_update(ticket=ticket, status=status_of(organization, "resolvido"))
    return ticket


# --- what it answers -----------------------------------------------------------------------------


def test_events_are_recorded_and_listed_in_order_without_any_webhook(partner, organization, history):
    response = partner.get(EVENTS)

    data = assert_success(response, 200, "Eventos listados.")
    assert response.json()["data"] == {
        "itens": stored(organization),
        "proximo": data["itens"][-1]["id"],
        "tem_mais": False,
    }
    assert kinds(data["itens"]) == [
        "ticket.resposta_publica",
        "ticket.resposta_editada",
        "ticket.status_alterado",
        "ticket.resolvido",
    ]
    assert not WebhookDelivery.objects.exists()
    assert "NOTA-INTERNA" not in response.content.decode()
    first = data["itens"][0]
    assert set(first) == {"id", "evento", "criado_em", "data"}
    assert first["data"]["resposta"]["mensagem"] == "Sai hoje."
    assert data["itens"][1]["data"]["mensagem_anterior"] == "Sai hoje."
    assert data["itens"][2]["data"]["alteracoes"]["status"]["atual"]["categoria"] == "resolvido"
    assert data["itens"][3]["data"]["ticket"]["status"]["categoria"] == "resolvido"


def test_each_event_is_the_body_a_webhook_delivery_carries(partner, organization, agent, example_dns):
    webhook = make_webhook(organization)
    make_agent_reply(make_ticket(organization), agent, body="Olá")

    item = feed(partner)["itens"][0]

    delivery = WebhookDelivery.objects.select_related("event").get(webhook=webhook)
    assert item == json.loads(delivery.event.body)
    assert item["id"] == str(delivery.event_id)


def test_following_proximo_pages_through_every_event_once_then_waits_for_the_next(partner, organization, agent):
    ticket = make_ticket(organization)
    for n in range(5):
        make_agent_reply(ticket, agent, body=f"Resposta {n}")

    pages, page = [], feed(partner, limite=2)
    pages.append(([item["data"]["resposta"]["mensagem"] for item in page["itens"]], page["tem_mais"]))
    while page["tem_mais"]:
        page = feed(partner, limite=2, depois_de=page["proximo"])
        pages.append(([item["data"]["resposta"]["mensagem"] for item in page["itens"]], page["tem_mais"]))
    idle = feed(partner, depois_de=page["proximo"])
    make_agent_reply(ticket, agent, body="Depois")
    after = feed(partner, depois_de=idle["proximo"])

    assert pages == [
        (["Resposta 0", "Resposta 1"], True),
        (["Resposta 2", "Resposta 3"], True),
        (["Resposta 4"], False),
    ]
    assert idle == {"itens": [], "proximo": page["proximo"], "tem_mais": False}
    assert [item["data"]["resposta"]["mensagem"] for item in after["itens"]] == ["Depois"]
    assert after["proximo"] == after["itens"][0]["id"]


def test_an_organization_without_events_answers_an_empty_page_and_a_null_proximo(partner, organization):
    make_customer_reply(make_ticket(organization))  # the partner's own action: no event

    assert feed(partner) == {"itens": [], "proximo": None, "tem_mais": False}


def test_depois_de_is_read_in_any_uuid_spelling(partner, organization, history):
    first = feed(partner)["itens"][0]["id"]

    upper = feed(partner, depois_de=first.upper())

    assert kinds(upper["itens"]) == ["ticket.resposta_editada", "ticket.status_alterado", "ticket.resolvido"]


@pytest.mark.parametrize(
    ("tipo", "expected"),
    [
        (["ticket.resolvido"], ["ticket.resolvido"]),
        (["ticket.resposta_publica", "ticket.resolvido"], ["ticket.resposta_publica", "ticket.resolvido"]),
        (
            [""],
            ["ticket.resposta_publica", "ticket.resposta_editada", "ticket.status_alterado", "ticket.resolvido"],
        ),
    ],
)
def test_tipo_narrows_the_feed_to_those_kinds(partner, organization, history, tipo, expected):
    page = feed(partner, tipo=tipo)

    assert kinds(page["itens"]) == expected


def test_tipo_with_depois_de_continues_after_an_event_of_another_kind(partner, organization, history):
    first = feed(partner)["itens"][0]

    page = feed(partner, tipo=["ticket.resposta_editada", "ticket.resolvido"], depois_de=first["id"], limite=1)

    assert (kinds(page["itens"]), page["tem_mais"]) == (["ticket.resposta_editada"], True)


def test_the_webhook_test_event_is_not_in_the_feed(partner, organization, agent, example_dns):
    delivery = make_test_delivery(make_webhook(organization))
    make_agent_reply(make_ticket(organization), agent)

    page = feed(partner)

    assert kinds(page["itens"]) == ["ticket.resposta_publica"]
    assert_event_not_found(partner.get(EVENTS, {"depois_de": str(delivery.event_id)}))


def test_partner_actions_and_internal_notes_record_no_event(partner, organization, agent):
    ticket = make_ticket(organization)
    created = partner.post(f"/api/v1/tickets/{ticket.pk}/respostas", {"mensagem": "Oi"}, format="json")
    partner.patch(
        f"/api/v1/tickets/{ticket.pk}/respostas/{created.json()['data']['id']}", {"mensagem": "Olá"}, format="json"
    )
    note = make_agent_reply(ticket, agent, body="Nota", internal=True)
    reply_edit_as_agent(reply=note, agent=agent, body="Nota editada")

    assert feed(partner)["itens"] == []
    assert not WebhookEvent.objects.exists()


# --- what it refuses -----------------------------------------------------------------------------


@pytest.mark.parametrize("limite", ["0", "101", "abc"])
def test_limite_outside_1_to_100_is_a_422_on_limite(partner, organization, limite):
    assert_validation_error(partner.get(EVENTS, {"limite": limite}), "limite")


def test_an_unknown_tipo_is_a_422_on_tipo(partner, organization, history):
    response = partner.get(EVENTS, {"tipo": ["ticket.resolvido", "ticket.mesclado_por_engano", "webhook.teste"]})

    known = (
        "ticket.criado, ticket.resposta_publica, ticket.resposta_editada, ticket.status_alterado, ticket.resolvido, "
        "ticket.prioridade_alterada, ticket.atribuido, ticket.tags_alteradas, ticket.anexo_adicionado, "
        "ticket.excluido, contato.anonimizado, ticket.campos_alterados, ticket.sla_em_risco, ticket.sla_violado, "
        "ticket.mesclado"
    )
    assert response.status_code == 422
    assert response.json() == {
        "success": False,
        "message": "Erro de validação",
        "errors": {
            "tipo": [
                f"Tipo de evento desconhecido: ticket.mesclado_por_engano. Use um de: {known}.",
                f"Tipo de evento desconhecido: webhook.teste. Use um de: {known}.",
            ]
        },
    }


def test_an_unknown_depois_de_is_a_404_on_depois_de(partner, organization, history):
    assert_event_not_found(partner.get(EVENTS, {"depois_de": str(uuid.uuid4())}))


@pytest.mark.parametrize("depois_de", ["nao-e-um-uuid", "123", "0190f3a2-0000-7000-8000-00000000000"])
def test_a_depois_de_that_is_not_a_uuid_is_a_422_on_depois_de(partner, organization, history, depois_de):
    response = partner.get(EVENTS, {"depois_de": depois_de})

    assert response.status_code == 422
    assert response.json() == {
        "success": False,
        "message": "Erro de validação",
        "errors": {"depois_de": ["Informe o `proximo` de uma resposta anterior: o id (UUID) de um evento."]},
    }


def test_another_organizations_event_is_the_same_404(partner, organization, other_organization, agent):
    theirs = make_agent_reply(make_ticket(other_organization), make_agent(other_organization))
    event = WebhookEvent.objects.get(organization=other_organization)

    response = partner.get(EVENTS, {"depois_de": str(event.pk)})

    assert_event_not_found(response)
    assert str(theirs.pk) not in response.content.decode()


# --- tenancy and cost ----------------------------------------------------------------------------


def test_only_the_callers_events_come(partner, other_partner, organization, other_organization, agent):
    make_agent_reply(make_ticket(organization, subject="Meu"), agent, body="Nosso")
    make_agent_reply(make_ticket(other_organization, subject="Deles"), make_agent(other_organization), body="Deles")

    mine, theirs = feed(partner), feed(other_partner)

    assert [item["data"]["ticket"]["assunto"] for item in mine["itens"]] == ["Meu"]
    assert [item["data"]["ticket"]["assunto"] for item in theirs["itens"]] == ["Deles"]
    assert mine["itens"] == stored(organization)


@pytest.mark.parametrize("after", [False, True])
def test_the_same_statements_for_1_and_100_events(partner, organization, agent, after):
    ticket = make_ticket(organization)
    make_agent_reply(ticket, agent, body="Primeira")
    make_agent_reply(ticket, agent, body="Segunda")
    first = WebhookEvent.objects.order_by("change_tx", "change_seq").first()
    params = {"depois_de": str(first.pk)} if after else {}
    one_queries, one_page = queries_of(partner, EVENTS, {**params, "limite": 1})
    for n in range(100):
        make_agent_reply(ticket, agent, body=f"Resposta {n}")

    hundred_queries, hundred_page = queries_of(partner, EVENTS, {**params, "limite": 100})

    assert (len(one_page["itens"]), len(hundred_page["itens"])) == (1, 100)
    assert len(hundred_queries) == len(one_queries), "\n".join(hundred_queries)
    # The key, the event named by depois_de, the page.
    assert len(hundred_queries) == (3 if after else 2), "\n".join(hundred_queries)


def test_the_answer_conforms_to_the_published_schema(partner, organization, history):
    documented = schemathesis.openapi.from_dict(Client().get("/api/schema/?format=json").json())

    assert_conforms(documented, "GET", EVENTS, partner.get(EVENTS))
    assert_conforms(documented, "GET", EVENTS, partner.get(EVENTS, {"depois_de": str(uuid.uuid4())}))
    assert_conforms(documented, "GET", EVENTS, partner.get(EVENTS, {"tipo": "x"}))
