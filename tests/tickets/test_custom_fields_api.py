"""Custom fields of tickets (issue 22): definitions through the panel (`/api/campos`), values on the partner's
create and PATCH /api/v1/tickets/{id}/campos and the panel's ticket PATCH, the `campos` block, the list's
`campo.<chave>` filters, events, the change list and tenancy."""

import pytest

from helpdesk.models import AuditRecord
from integrations.models import WebhookEvent
from tests.assertions import (
    assert_error,
    assert_exact_validation_error,
    assert_success,
    assert_ticket_not_found,
    bearer_client,
    panel_client,
)
from tests.contract import error_envelope
from tests.factories import admin_of, make_key, make_ticket
from tickets.models import CustomField, Ticket, TicketFieldValue

FIELDS = "/api/campos"
TICKETS = "/api/v1/tickets"
NUMBER = 'Informe um número decimal (por exemplo, 12 ou "12.50"), com até 18 dígitos antes do ponto e 6 depois.'
UNKNOWN = ["Campo desconhecido nesta organização."]
NOT_FOUND = error_envelope(404, "Campo não encontrado.", "id", "Campo inexistente nesta organização.")

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def define(client, key, field_type, **more):
    body = {"chave": key, "nome": key.title(), "tipo": field_type, **more}
    response = client.post(FIELDS, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


@pytest.fixture
def fields(manager):
    """One field of each type, and a hidden one and a read-only one."""
    return {
        "pedido": define(manager, "pedido", "texto"),
        "valor": define(manager, "valor", "numero"),
        "entrega": define(manager, "entrega", "data"),
        "vip": define(manager, "vip", "booleano"),
        "loja": define(manager, "loja", "lista", opcoes=["centro", "norte", "sul"]),
        "tags": define(manager, "tags", "multilista", opcoes=["a", "b", "c"]),
        "interno": define(manager, "interno", "texto", visivel_parceiro=False),
        "plano": define(manager, "plano", "texto", editavel_parceiro=False),
    }


def create(partner, campos, query=""):
    body = {"assunto": "Pedido", "descricao": "x", "solicitante": {"nome": "Ana"}, "campos": campos}
    return partner.post(TICKETS + query, body, format="json")


# --- definitions (panel) ----------------------------------------------------------------------------


def test_a_field_is_created_listed_and_audited(manager, organization):
    response = manager.post(
        FIELDS, {"chave": "loja", "nome": "Loja", "tipo": "lista", "opcoes": ["centro", "norte"]}, format="json"
    )

    data = assert_success(response, 201, "Campo criado.")
    assert {key: value for key, value in data.items() if key not in ("id", "criado_em", "atualizado_em")} == {
        "chave": "loja",
        "nome": "Loja",
        "tipo": "lista",
        "opcoes": ["centro", "norte"],
        "visivel_parceiro": True,
        "editavel_parceiro": True,
        "ativo": True,
    }
    assert assert_success(manager.get(FIELDS), 200, "Campos listados.") == [data]
    record = AuditRecord.objects.get(action="campo.criado")
    assert (record.organization_id, record.resource_type, record.resource_id) == (organization.pk, "campo", data["id"])
    assert record.changes["campo"] == {"antes": None, "depois": "loja"}
    assert record.changes["opcoes"] == {"antes": None, "depois": ["centro", "norte"]}


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        (
            {"chave": "Loja X", "nome": "Loja", "tipo": "texto"},
            {"chave": ["Use de 1 a 40 letras minúsculas sem acento, dígitos ou _ (por exemplo, numero_pedido)."]},
        ),
        ({"chave": "loja", "nome": "Loja", "tipo": "lista"}, {"opcoes": ["Informe ao menos uma opção."]}),
        (
            {"chave": "loja", "nome": "Loja", "tipo": "texto", "opcoes": ["a"]},
            {"opcoes": ["Só campos do tipo lista ou multilista têm opções."]},
        ),
        (
            {"chave": "loja", "nome": "Loja", "tipo": "lista", "opcoes": ["a", "a"]},
            {"opcoes": ["As opções não podem se repetir."]},
        ),
        ({"chave": "loja", "nome": " ", "tipo": "texto"}, {"nome": ["Este campo não pode estar em branco."]}),
    ],
)
def test_a_bad_definition_is_a_422_and_creates_nothing(manager, body, errors):
    assert_exact_validation_error(manager.post(FIELDS, body, format="json"), errors)
    assert not CustomField.objects.exists()


def test_a_key_is_unique_in_the_organization_only(manager, other_organization):
    define(manager, "loja", "texto")
    other = panel_client(admin_of(other_organization).email)

    assert_exact_validation_error(
        manager.post(FIELDS, {"chave": "loja", "nome": "Outra", "tipo": "texto"}, format="json"),
        {"chave": ["Já existe um campo com esta chave."]},
    )
    define(other, "loja", "texto")


def test_the_51st_field_is_a_422_on_campo(manager, organization):
    for n in range(50):
        define(manager, f"campo_{n}", "texto")

    assert_exact_validation_error(
        manager.post(FIELDS, {"chave": "mais_um", "nome": "Mais um", "tipo": "texto"}, format="json"),
        {"campo": ["Limite de 50 campos por organização atingido."]},
    )
    assert CustomField.objects.filter(organization=organization).count() == 50


def test_key_and_type_never_change(manager, fields):
    url = f"{FIELDS}/{fields['loja']['id']}"

    assert_exact_validation_error(
        manager.patch(url, {"chave": "filial", "tipo": "texto"}, format="json"),
        {
            "chave": ["A chave de um campo não muda: crie outro campo."],
            "tipo": ["O tipo de um campo não muda: crie outro campo."],
        },
    )
    data = assert_success(
        manager.patch(url, {"chave": "loja", "nome": "Filial"}, format="json"), 200, "Campo atualizado."
    )
    assert (data["chave"], data["nome"]) == ("loja", "Filial")


def test_an_option_tickets_use_is_not_removed(manager, partner, fields):
    for _ in range(2):
        assert create(partner, {"loja": "norte"}).status_code == 201
    url = f"{FIELDS}/{fields['loja']['id']}"

    response = manager.patch(url, {"opcoes": ["centro", "sul"]}, format="json")

    assert response.json() == error_envelope(
        409,
        "Opção em uso.",
        "opcoes",
        "2 tickets usam a opção norte: troque o valor desses tickets antes de removê-la.",
    )
    assert CustomField.objects.get(key="loja").options == ["centro", "norte", "sul"]
    assert_success(manager.patch(url, {"opcoes": ["norte", "oeste"]}, format="json"), 200, "Campo atualizado.")


def test_deleting_a_field_removes_its_values_and_moves_the_tickets_that_showed_them(manager, partner, fields):
    ticket_id = create(partner, {"loja": "norte", "pedido": "A-1"}).json()["data"]["id"]
    before = Ticket.objects.get(pk=ticket_id).updated_at

    assert_success(manager.delete(f"{FIELDS}/{fields['loja']['id']}"), 200, "Campo excluído.")

    ticket = Ticket.objects.get(pk=ticket_id)
    assert ticket.custom_fields == {"pedido": "A-1"}
    assert ticket.updated_at > before
    assert not TicketFieldValue.objects.filter(field_id=fields["loja"]["id"]).exists()
    assert AuditRecord.objects.filter(action="campo.excluido").count() == 1


def test_another_organizations_field_is_not_found_and_a_plain_agent_is_refused(
    manager, agent_client, other_organization, fields
):
    other = panel_client(admin_of(other_organization).email)
    url = f"{FIELDS}/{fields['loja']['id']}"

    for response in (other.patch(url, {"nome": "X"}, format="json"), other.delete(url), manager.delete(f"{FIELDS}/x")):
        assert response.json() == error_envelope(
            404, "Campo não encontrado.", "id", "Campo inexistente nesta organização."
        )
    assert_error(agent_client.get(FIELDS), 403, "Acesso negado.", "permissao")
    assert CustomField.objects.get(pk=fields["loja"]["id"]).name == "Loja"


# --- values -----------------------------------------------------------------------------------------


def test_a_partner_creates_a_ticket_with_its_fields_in_their_kept_form(partner, fields):
    campos = {
        "tags": ["c", "a", "c"],
        "valor": 10.50,
        "pedido": "A-1",
        "entrega": "2026-01-31",
        "vip": False,
        "loja": "sul",
    }

    data = assert_success(create(partner, campos, "?incluir=campos"), 201, "Ticket criado.")

    expected = {
        "pedido": "A-1",
        "valor": "10.5",
        "entrega": "2026-01-31",
        "vip": False,
        "loja": "sul",
        "tags": ["a", "c"],
    }
    assert data["campos"] == expected
    assert list(data["campos"]) == list(expected)  # in the fields' order
    assert "campos" not in create(partner, {"pedido": "B"}).json()["data"]  # without incluir, TicketPublico


def test_wrong_values_are_422s_on_each_key_and_nothing_is_created(partner, fields):
    campos = {
        "pedido": 12,
        "valor": "doze",
        "entrega": "31/01/2026",
        "vip": "sim",
        "loja": "leste",
        "tags": ["a", "z"],
        "interno": "x",
        "plano": "ouro",
        "nao_existe": 1,
    }

    assert_exact_validation_error(
        create(partner, campos),
        {
            "campos.pedido": ["Informe um texto de até 1000 caracteres."],
            "campos.valor": [NUMBER],
            "campos.entrega": ["Informe uma data no formato AAAA-MM-DD (ISO 8601)."],
            "campos.vip": ["Informe true ou false."],
            "campos.loja": ["Informe uma das opções: centro, norte, sul."],
            "campos.tags": ["Informe uma lista de opções dentre: a, b, c."],
            "campos.interno": UNKNOWN,  # hidden: exactly as an unknown key
            "campos.plano": ["Este campo não pode ser alterado pela API."],
            "campos.nao_existe": UNKNOWN,
        },
    )
    assert not Ticket.objects.exists()


def test_an_inactive_field_takes_no_value(manager, partner, fields):
    manager.patch(f"{FIELDS}/{fields['loja']['id']}", {"ativo": False}, format="json")

    assert_exact_validation_error(
        create(partner, {"loja": "sul"}), {"campos.loja": ["Campo inativo: não aceita valores."]}
    )


def test_the_partner_sets_and_clears_fields_and_never_sees_hidden_ones(partner, agent_client, fields):
    ticket_id = create(partner, {"pedido": "A-1", "loja": "sul"}).json()["data"]["id"]
    agent_client.patch(f"/api/tickets/{ticket_id}", {"campos": {"interno": "segredo", "plano": "ouro"}}, format="json")

    response = partner.patch(f"{TICKETS}/{ticket_id}/campos", {"loja": None, "valor": "3.000"}, format="json")

    assert assert_success(response, 200, "Campos atualizados.") == {
        "campos": {"pedido": "A-1", "valor": "3", "plano": "ouro"}
    }
    read = partner.get(f"{TICKETS}/{ticket_id}", {"incluir": "campos"}).json()["data"]
    assert read["campos"] == {"pedido": "A-1", "valor": "3", "plano": "ouro"}
    panel = agent_client.get(f"/api/tickets/{ticket_id}").json()["data"]
    assert panel["campos"] == {"pedido": "A-1", "valor": "3", "interno": "segredo", "plano": "ouro"}
    assert_exact_validation_error(
        partner.patch(f"{TICKETS}/{ticket_id}/campos", {"interno": None}, format="json"), {"campos.interno": UNKNOWN}
    )


def test_a_patch_that_changes_nothing_writes_nothing(partner, fields):
    ticket_id = create(partner, {"pedido": "A-1", "valor": 3}).json()["data"]["id"]
    before = Ticket.objects.get(pk=ticket_id).updated_at
    records = AuditRecord.objects.count()

    for body in ({}, {"pedido": "A-1", "valor": "3.00"}, {"loja": None}):
        response = partner.patch(f"{TICKETS}/{ticket_id}/campos", body, format="json")
        assert assert_success(response, 200, "Campos atualizados.") == {"campos": {"pedido": "A-1", "valor": "3"}}

    assert Ticket.objects.get(pk=ticket_id).updated_at == before
    assert AuditRecord.objects.count() == records


def test_the_patch_of_another_organizations_ticket_is_a_404_before_its_body(partner, other_organization, fields):
    ticket = make_ticket(other_organization)

    assert_ticket_not_found(partner.patch(f"{TICKETS}/{ticket.pk}/campos", {"pedido": 1}, format="json"))
    assert_ticket_not_found(partner.patch(f"{TICKETS}/nao-e-uuid/campos", {}, format="json"))


# --- the change list and events -----------------------------------------------------------------------


def test_an_agents_change_of_visible_fields_emits_one_event_with_the_visible_changes(partner, agent_client, fields):
    ticket_id = create(partner, {"pedido": "A-1"}).json()["data"]["id"]
    before = Ticket.objects.get(pk=ticket_id).updated_at

    response = agent_client.patch(
        f"/api/tickets/{ticket_id}", {"campos": {"pedido": "A-2", "vip": True, "interno": "x"}}, format="json"
    )

    assert response.status_code == 200, response.content
    assert Ticket.objects.get(pk=ticket_id).updated_at > before
    (event,) = partner.get("/api/v1/eventos", {"incluir": "campos"}).json()["data"]["itens"]
    assert event["evento"] == "ticket.campos_alterados"
    assert event["data"]["alteracoes"] == {
        "campos": {"pedido": {"anterior": "A-1", "atual": "A-2"}, "vip": {"anterior": None, "atual": True}}
    }
    assert event["data"]["ticket"]["campos"] == {"pedido": "A-2", "vip": True}
    assert "campos" not in partner.get("/api/v1/eventos").json()["data"]["itens"][0]["data"]["ticket"]


def test_a_change_of_hidden_fields_alone_emits_nothing_and_moves_nothing(partner, agent_client, fields):
    ticket_id = create(partner, {"pedido": "A-1"}).json()["data"]["id"]
    cursor = partner.get(f"{TICKETS}/alteracoes").json()["data"]["proximo_cursor"]
    before = Ticket.objects.get(pk=ticket_id).updated_at

    response = agent_client.patch(f"/api/tickets/{ticket_id}", {"campos": {"interno": "x"}}, format="json")

    assert response.json()["data"]["campos"] == {"pedido": "A-1", "interno": "x"}
    assert Ticket.objects.get(pk=ticket_id).updated_at == before
    assert partner.get(f"{TICKETS}/alteracoes", {"desde": cursor}).json()["data"]["itens"] == []
    assert not WebhookEvent.objects.exists()


def test_a_partners_own_change_moves_the_ticket_but_never_echoes(partner, fields):
    ticket_id = create(partner, {"pedido": "A-1"}).json()["data"]["id"]
    cursor = partner.get(f"{TICKETS}/alteracoes").json()["data"]["proximo_cursor"]

    partner.patch(f"{TICKETS}/{ticket_id}/campos", {"pedido": "A-2"}, format="json")

    changed = partner.get(f"{TICKETS}/alteracoes", {"desde": cursor, "incluir": "campos"}).json()["data"]["itens"]
    assert [(item["id"], item["campos"]) for item in changed] == [(ticket_id, {"pedido": "A-2"})]
    assert not WebhookEvent.objects.exists()
    assert AuditRecord.objects.filter(action="ticket.campos_alterados").get().changes == {
        "campos": {"antes": None, "depois": ["pedido"]}
    }


def test_hiding_a_field_takes_it_out_of_campos_and_moves_its_tickets(manager, partner, fields):
    ticket_id = create(partner, {"pedido": "A-1", "loja": "sul"}).json()["data"]["id"]
    untouched = create(partner, {"loja": "sul"}).json()["data"]["id"]
    cursor = partner.get(f"{TICKETS}/alteracoes").json()["data"]["proximo_cursor"]

    manager.patch(f"{FIELDS}/{fields['pedido']['id']}", {"visivel_parceiro": False}, format="json")

    changed = partner.get(f"{TICKETS}/alteracoes", {"desde": cursor, "incluir": "campos"}).json()["data"]["itens"]
    assert [(item["id"], item["campos"]) for item in changed] == [(ticket_id, {"loja": "sul"})]
    assert untouched != ticket_id
    assert_exact_validation_error(partner.get(TICKETS, {"campo.pedido": "A-1"}), {"campo.pedido": UNKNOWN})


# --- the list's filters -------------------------------------------------------------------------------


@pytest.fixture
def filled(partner, fields):
    """Four tickets: numbers 1 to 4, with these values."""
    values = [
        {"pedido": "A-1", "valor": 10, "entrega": "2026-01-10", "vip": True, "loja": "sul", "tags": ["a", "b"]},
        {"pedido": "A-2", "valor": "10.0", "entrega": "2026-02-10", "vip": False, "loja": "norte", "tags": ["b"]},
        {"pedido": "A-3", "valor": -2.5, "entrega": "2026-03-10", "loja": "sul", "tags": ["c"]},
        {"pedido": "A" * 1000},
    ]
    for campos in values:
        assert create(partner, campos).status_code == 201


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"campo.loja": "sul"}, [3, 1]),
        ({"campo.tags": "b"}, [2, 1]),
        ({"campo.valor": "10"}, [2, 1]),
        ({"campo.valor__de": "-3", "campo.valor__ate": "9.99"}, [3]),
        ({"campo.entrega__de": "2026-02-01"}, [3, 2]),
        ({"campo.entrega__ate": "2026-02-10", "campo.entrega__de": "2026-02-10"}, [2]),
        ({"campo.vip": "false"}, [2]),
        ({"campo.pedido": "A-3"}, [3]),
        ({"campo.pedido": "A" * 1000}, [4]),
        ({"campo.pedido": "A" * 999}, []),
        ({"campo.loja": "sul", "campo.tags": "c", "prioridade": "media"}, [3]),
        ({"campo.loja": "sul", "campo.tags": "a"}, [1]),  # fields alone: counted on their rows (INTERSECT)
        ({"campo.valor": "10", "campo.valor__de": "10", "campo.valor__ate": "10"}, [2, 1]),
        ({"campo.loja": ""}, [4, 3, 2, 1]),  # an empty parameter counts as absent
    ],
)
def test_the_list_filters_by_custom_fields(partner, filled, query, expected):
    response = partner.get(TICKETS, query)

    assert [ticket["numero"] for ticket in response.json()["data"]["data"]] == expected
    assert response.json()["data"]["total"] == len(expected)


def test_bad_field_filters_are_422s_on_the_parameter(partner, filled):
    response = partner.get(
        TICKETS,
        {
            "campo.interno": "x",
            "campo.nada": "x",
            "campo.loja__de": "a",
            "campo.valor": "dez",
            "campo.entrega__ate": "ontem",
            "campo.loja": "leste",
            "campo.vip": "sim",
        },
    )

    assert_exact_validation_error(
        response,
        {
            "campo.interno": UNKNOWN,
            "campo.nada": UNKNOWN,
            "campo.loja__de": ["Só campos numero e data aceitam intervalo (__de e __ate)."],
            "campo.valor": [NUMBER],
            "campo.entrega__ate": ["Informe uma data no formato AAAA-MM-DD (ISO 8601)."],
            "campo.loja": ["Informe uma das opções: centro, norte, sul."],
            "campo.vip": ["Informe true ou false."],
        },
    )


def test_the_panel_filters_by_hidden_fields_too(partner, agent_client, fields):
    ticket_id = create(partner, {"pedido": "A-1"}).json()["data"]["id"]
    agent_client.patch(f"/api/tickets/{ticket_id}", {"campos": {"interno": "x"}}, format="json")

    listed = agent_client.get("/api/tickets", {"campo.interno": "x"}).json()["data"]["data"]

    assert [ticket["id"] for ticket in listed] == [ticket_id]


def test_another_organizations_keys_never_match_nor_leak(partner, manager, fields, filled, other_organization):
    other_manager = panel_client(admin_of(other_organization).email)
    other_partner = bearer_client(make_key(other_organization))
    define(other_manager, "loja", "lista", opcoes=["sul"])
    assert create(other_partner, {"loja": "sul"}).status_code == 201

    assert [t["numero"] for t in partner.get(TICKETS, {"campo.loja": "sul"}).json()["data"]["data"]] == [3, 1]
    assert [t["numero"] for t in other_partner.get(TICKETS, {"campo.loja": "sul"}).json()["data"]["data"]] == [1]
    assert_exact_validation_error(other_partner.get(TICKETS, {"campo.pedido": "A-1"}), {"campo.pedido": UNKNOWN})
    assert_exact_validation_error(create(other_partner, {"pedido": "A-1"}), {"campos.pedido": UNKNOWN})
    other_ticket = other_partner.get(TICKETS, {"incluir": "campos"}).json()["data"]["data"][0]
    assert other_ticket["campos"] == {"loja": "sul"}
    assert [field["chave"] for field in other_manager.get(FIELDS).json()["data"]] == ["loja"]
