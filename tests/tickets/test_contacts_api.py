"""GET /api/v1/contatos, GET and PATCH /api/v1/contatos/{id}: the organization's contacts (requesters),
read and corrected by the partner. A contact's tickets: tests/tickets/test_contact_tickets_api.py."""

import uuid

import pytest
import schemathesis
from django.test import Client

from helpdesk.actors import SYSTEM
from helpdesk.models import AuditRecord
from integrations.models import WebhookDelivery, WebhookEvent
from tests.assertions import (
    api_timestamp,
    assert_error,
    assert_exact_validation_error,
    assert_success,
    assert_validation_error,
    bearer_client,
    utc,
)
from tests.contract import error_envelope
from tests.factories import make_key, make_ticket, make_webhook
from tests.test_openapi_conformance import assert_conforms
from tickets.models import Contact
from tickets.services import RequesterData, contact_anonymize, ticket_create

URL = "/api/v1/contatos"
CHANGES = "/api/v1/tickets/alteracoes"
CONTACT_FIELDS = {"id", "nome", "email", "telefone", "external_id", "criado_em", "atualizado_em"}
CONTACT_NOT_FOUND = error_envelope(404, "Contato não encontrado.", "id", "Contato inexistente nesta organização.")
EXTERNAL_ID_TAKEN = error_envelope(
    409,
    "Já existe um contato com este external_id.",
    "external_id",
    "Outro contato desta organização já tem este external_id.",
)

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def contact(organization, name="Maria Silva", email="", phone="", external_id=None) -> Contact:
    """A requester, made as partners make them: with a ticket."""
    requester = RequesterData(name=name, email=email, phone=phone, external_id=external_id)
    return make_ticket(organization, requester=requester).requester


def listed(client, **params) -> dict:
    return assert_success(client.get(URL, params), 200, "Contatos listados.")


def names(page: dict) -> list[str]:
    return [item["nome"] for item in page["data"]]


def shown(item: Contact) -> dict:
    """Contato as the API must show it, from the stored row."""
    item.refresh_from_db()
    return {
        "id": str(item.pk),
        "nome": item.name,
        "email": item.email or None,
        "telefone": item.phone or None,
        "external_id": item.external_id,
        "criado_em": api_timestamp(item.created_at),
        "atualizado_em": api_timestamp(item.updated_at),
    }


# --- GET /api/v1/contatos ------------------------------------------------------------------------------


def test_the_list_is_the_paginated_envelope_of_contatos(partner, organization):
    full = contact(organization, "Maria", "maria@example.com", "+55 11 5555-0000", "cliente-42")
    bare = contact(organization, "João")

    response = partner.get(URL)

    assert response.json() == {
        "success": True,
        "message": "Contatos listados.",
        "data": {
            "data": [
                {
                    "id": str(bare.pk),
                    "nome": "João",
                    "email": None,
                    "telefone": None,
                    "external_id": None,
                    "criado_em": api_timestamp(bare.created_at),
                    "atualizado_em": api_timestamp(bare.updated_at),
                },
                {
                    "id": str(full.pk),
                    "nome": "Maria",
                    "email": "maria@example.com",
                    "telefone": "+55 11 5555-0000",
                    "external_id": "cliente-42",
                    "criado_em": api_timestamp(full.created_at),
                    "atualizado_em": api_timestamp(full.updated_at),
                },
            ],
            "total": 2,
            "por_pagina": 15,
            "pagina_atual": 1,
            "ultima_pagina": 1,
        },
        "errors": [],
    }
    for item in response.json()["data"]["data"]:
        assert set(item) == CONTACT_FIELDS
        utc(item["criado_em"])


def test_an_empty_list_has_last_page_1(partner, organization):
    assert listed(partner) == {"data": [], "total": 0, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1}


def test_pages_are_15_newest_first_and_por_pagina_sets_the_size(partner, organization):
    for n in range(17):
        contact(organization, f"Pessoa {n:02}")

    first, second = listed(partner), listed(partner, page=2)
    small = listed(partner, por_pagina=5, page=3)

    assert (first["total"], first["por_pagina"], first["ultima_pagina"]) == (17, 15, 2)
    assert names(first) == [f"Pessoa {n:02}" for n in range(16, 1, -1)]
    assert names(second) == ["Pessoa 01", "Pessoa 00"]
    assert (small["por_pagina"], small["pagina_atual"], small["ultima_pagina"]) == (5, 3, 4)
    assert names(small) == [f"Pessoa {n:02}" for n in range(6, 1, -1)]
    assert listed(partner, page=9)["data"] == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"por_pagina": 0}, "por_pagina"),
        ({"por_pagina": 101}, "por_pagina"),
        ({"page": "abc"}, "page"),
        ({"page": 0}, "page"),
        ({"email": "não-é-email"}, "email"),
        ({"telefone": "1" * 33}, "telefone"),
        ({"external_id": "x" * 256}, "external_id"),
        ({"busca": "x" * 256}, "busca"),
    ],
)
def test_a_bad_query_value_is_a_422_on_its_parameter(partner, organization, params, field):
    assert_validation_error(partner.get(URL, params), field)


def test_the_filters_find_by_external_id_email_phone_and_busca(partner, organization):
    contact(organization, "Maria Conceição", "Maria.Silva@Example.com", "+55 (11) 5555-0000", "cliente-42")
    contact(organization, "João", "joao@example.com", "+55 11 5555-0001", "cliente-4")
    contact(organization, "Ana", "ana@silva.example", "", None)

    assert names(listed(partner, external_id="cliente-42")) == ["Maria Conceição"]
    assert names(listed(partner, external_id="cliente")) == []  # exact, not a prefix
    assert names(listed(partner, email="MARIA.silva@example.COM")) == ["Maria Conceição"]
    assert names(listed(partner, email="silva@example.com")) == []  # exact, not a substring
    assert names(listed(partner, telefone="+55 11 5555-0000")) == ["Maria Conceição"]
    assert names(listed(partner, telefone="+55.11.5555.0000")) == ["Maria Conceição"]
    assert names(listed(partner, telefone="+551155550000")) == ["Maria Conceição"]
    assert names(listed(partner, telefone="5555-0000")) == []  # exact, not a suffix
    assert names(listed(partner, busca="conceição")) == ["Maria Conceição"]
    assert names(listed(partner, busca="SILVA")) == ["Ana", "Maria Conceição"]  # e-mail, either part
    assert names(listed(partner, busca="silva", email="ana@silva.example")) == ["Ana"]  # AND
    assert names(listed(partner, busca="silva", external_id="cliente-4")) == []


def test_a_phone_of_separators_only_finds_no_contact_without_a_phone(partner, organization):
    contact(organization, "Sem telefone")

    assert listed(partner, telefone="( ) - .")["data"] == []


def test_empty_filters_count_as_absent(partner, organization):
    contact(organization, "Maria")

    assert names(listed(partner, external_id="", email="", telefone="", busca="")) == ["Maria"]


def test_another_organizations_contacts_never_appear_under_any_filter(partner, organization, other_organization):
    ours = contact(organization, "Maria Nossa", "maria@example.com", "11 5555", "cliente-42")
    contact(other_organization, "Maria Deles", "maria@example.com", "11 5555", "cliente-42")

    for params in ({}, {"external_id": "cliente-42"}, {"email": "maria@example.com"}, {"telefone": "11 5555"}):
        page = listed(partner, **params)
        assert [item["id"] for item in page["data"]] == [str(ours.pk)], params
        assert page["total"] == 1
    assert names(listed(partner, busca="deles")) == []


def test_an_anonymised_contact_is_listed_with_its_neutral_values_and_found_by_none_of_its_old_ones(
    partner, organization
):
    person = contact(organization, "Maria", "maria@example.com", "11 5555", "cliente-42")
    contact_anonymize(contact=person, actor=SYSTEM)

    [item] = listed(partner)["data"]

    assert item == shown(person)
    assert (item["nome"], item["email"], item["telefone"], item["external_id"]) == (
        "Contato anonimizado",
        None,
        None,
        None,
    )
    for params in ({"external_id": "cliente-42"}, {"email": "maria@example.com"}, {"busca": "maria"}):
        assert listed(partner, **params)["data"] == [], params


# --- GET /api/v1/contatos/{id} ---------------------------------------------------------------------------


def test_a_contact_is_read_by_its_id(partner, organization):
    person = contact(organization, "Maria", "maria@example.com", "11 5555", "cliente-42")

    data = assert_success(partner.get(f"{URL}/{person.pk}"), 200, "Contato encontrado.")

    assert data == shown(person)


@pytest.mark.parametrize("which", ["unknown", "foreign", "not-a-uuid"])
def test_an_unknown_foreign_or_malformed_id_is_the_same_404(partner, other_organization, which):
    ids = {
        "unknown": str(uuid.uuid4()),
        "foreign": str(contact(other_organization, external_id="cliente-42").pk),
        "not-a-uuid": "123",
    }

    response = partner.get(f"{URL}/{ids[which]}")

    assert_error(response, 404, "Contato não encontrado.", "id")
    assert response.json() == CONTACT_NOT_FOUND


# --- PATCH /api/v1/contatos/{id} -------------------------------------------------------------------------


def patch(client, item, body):
    return client.patch(f"{URL}/{item.pk}", body, format="json")


def test_a_patch_changes_what_it_names_and_keeps_the_rest(partner, organization):
    person = contact(organization, "Maria", "maria@example.com", "11 5555", "cliente-42")
    before = shown(person)

    response = patch(partner, person, {"nome": "  Maria Silva ", "email": "Maria.Silva@Example.COM"})

    data = assert_success(response, 200, "Contato atualizado.")
    assert data == shown(person)
    assert data == {
        **before,
        "nome": "Maria Silva",
        "email": "maria.silva@example.com",
        "atualizado_em": data["atualizado_em"],
    }
    assert utc(data["atualizado_em"]) > utc(before["atualizado_em"])


def test_null_clears_email_phone_and_external_id(partner, organization):
    person = contact(organization, "Maria", "maria@example.com", "11 5555", "cliente-42")

    data = assert_success(
        patch(partner, person, {"email": None, "telefone": None, "external_id": None}), 200, "Contato atualizado."
    )

    assert (data["nome"], data["email"], data["telefone"], data["external_id"]) == ("Maria", None, None, None)
    person.refresh_from_db()
    assert (person.email, person.phone, person.external_id, person.phone_normalized) == ("", "", None, None)


def test_an_email_is_checked_as_sent_and_stored_lower_cased(partner, organization):
    """İ is a valid letter of a local part (the validator's case-insensitive A-Z, the schema's pattern); lower-cased
    it becomes i and a combining dot, which the validator would refuse: the check is made before lowering."""
    person = contact(organization, "Maria", "maria@example.com")

    data = assert_success(patch(partner, person, {"email": " MarİA@Example.COM "}), 200, "Contato atualizado.")

    assert data["email"] == "mari\u0307a@example.com"
    person.refresh_from_db()
    assert person.email == "mari\u0307a@example.com"
    refused = patch(partner, person, {"email": "maria@@example.com"})
    assert refused.status_code == 422
    assert refused.json()["errors"] == {"email": ["Informe um endereço de e-mail válido."]}


# 143 characters as sent, the schema's limit is 254; lower-cased, each İ is two: 273 (the fuzzer found it).
LONGEST_ONCE_LOWERED = "\u0130" * 130 + "@example.test"


def test_an_email_within_the_limit_is_stored_even_when_lower_casing_lengthens_it(partner, organization):
    person = contact(organization, "Maria", "maria@example.com")

    data = assert_success(patch(partner, person, {"email": LONGEST_ONCE_LOWERED}), 200, "Contato atualizado.")

    assert data["email"] == LONGEST_ONCE_LOWERED.lower()
    person.refresh_from_db()
    assert len(person.email) == 273
    assert [item["id"] for item in listed(partner, email=LONGEST_ONCE_LOWERED)["data"]] == [str(person.pk)]


def test_a_new_external_id_and_phone_are_what_the_filters_and_the_next_ticket_find(partner, organization):
    person = contact(organization, "Maria", external_id="cliente-42")

    assert_success(
        patch(partner, person, {"external_id": "crm-7", "telefone": "(11) 5555-0000"}), 200, "Contato atualizado."
    )
    ticket, _ = ticket_create(
        organization=organization,
        subject="Outro",
        description="x",
        requester=RequesterData(name="M", external_id="crm-7"),
    )

    assert ticket.requester_id == person.pk
    assert [item["id"] for item in listed(partner, telefone="11 5555 0000")["data"]] == [str(person.pk)]
    assert listed(partner, external_id="cliente-42")["data"] == []


def test_an_empty_patch_or_the_same_values_change_nothing(partner, organization):
    person = contact(organization, "Maria", "maria@example.com", external_id="cliente-42")
    before = shown(person)

    for body in ({}, {"nome": "Maria", "email": "MARIA@example.com", "external_id": "cliente-42", "telefone": ""}):
        assert assert_success(patch(partner, person, body), 200, "Contato atualizado.") == before
    assert shown(person) == before
    assert not AuditRecord.objects.filter(action="contato.atualizado").exists()


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"nome": ""}, {"nome": ["Este campo não pode estar em branco."]}),
        ({"nome": "   "}, {"nome": ["Este campo não pode estar em branco."]}),
        ({"nome": None}, {"nome": ["Este campo não pode ser nulo."]}),
        ({"nome": 7}, {"nome": ["Informe um texto."]}),
        ({"nome": "x" * 256}, {"nome": ["Certifique-se de que este campo não tenha mais de 255 caracteres."]}),
        ({"email": "maria"}, {"email": ["Informe um endereço de e-mail válido."]}),
        ({"telefone": "1" * 33}, {"telefone": ["Certifique-se de que este campo não tenha mais de 32 caracteres."]}),
        ({"external_id": ""}, {"external_id": ["Este campo não pode estar em branco."]}),
        (
            {"external_id": "x" * 256},
            {"external_id": ["Certifique-se de que este campo não tenha mais de 255 caracteres."]},
        ),
        (
            {"nome": "", "email": "maria", "external_id": 5},
            {
                "nome": ["Este campo não pode estar em branco."],
                "email": ["Informe um endereço de e-mail válido."],
                "external_id": ["Informe um texto."],
            },
        ),
    ],
)
def test_a_bad_value_is_a_422_and_nothing_is_written(partner, organization, body, errors):
    person = contact(organization, "Maria", "maria@example.com", external_id="cliente-42")
    before = shown(person)

    assert_exact_validation_error(patch(partner, person, body), errors)

    assert shown(person) == before


def test_an_empty_or_non_object_body_is_a_400(partner, organization):
    person = contact(organization)

    empty = partner.generic("PATCH", f"{URL}/{person.pk}", "", content_type="application/json")
    array = partner.generic("PATCH", f"{URL}/{person.pk}", "[]", content_type="application/json")

    assert_error(empty, 400, "JSON inválido.", "body")
    assert_error(array, 400, "JSON inválido.", "body")


def test_an_external_id_another_contact_has_is_a_409_and_nothing_is_written(partner, organization):
    contact(organization, "João", external_id="cliente-42")
    person = contact(organization, "Maria", "maria@example.com", external_id="cliente-7")
    before = shown(person)

    response = patch(partner, person, {"nome": "Maria Silva", "external_id": "cliente-42"})

    assert response.status_code == 409
    assert response.json() == EXTERNAL_ID_TAKEN
    assert shown(person) == before
    assert Contact.objects.filter(organization=organization, external_id="cliente-42").count() == 1
    assert not AuditRecord.objects.filter(action="contato.atualizado").exists()


def test_another_organizations_external_id_is_free_to_take(partner, organization, other_organization):
    contact(other_organization, "João", external_id="cliente-42")
    person = contact(organization, "Maria")

    data = assert_success(patch(partner, person, {"external_id": "cliente-42"}), 200, "Contato atualizado.")

    assert data["external_id"] == "cliente-42"


@pytest.mark.parametrize("which", ["unknown", "foreign", "not-a-uuid"])
def test_patching_an_unknown_or_foreign_contact_is_the_404_even_with_a_bad_body(partner, other_organization, which):
    foreign = contact(other_organization, "Deles", external_id="cliente-42")
    before = shown(foreign)
    path = {"unknown": uuid.uuid4(), "foreign": foreign.pk, "not-a-uuid": "x"}[which]

    for body in ({"nome": "Intruso"}, {"nome": ""}):
        response = partner.patch(f"{URL}/{path}", body, format="json")
        assert response.json() == CONTACT_NOT_FOUND

    assert shown(foreign) == before


def test_an_anonymised_contact_does_not_take_data_again(partner, organization):
    person = contact(organization, "Maria", "maria@example.com", external_id="cliente-42")
    contact_anonymize(contact=person, actor=SYSTEM)
    before = shown(person)

    response = patch(partner, person, {"nome": "Maria", "email": "maria@example.com"})

    assert_error(response, 409, "Contato anonimizado.", "id")
    assert shown(person) == before


# --- what a change does beside the contact ---------------------------------------------------------------


def test_the_contacts_tickets_move_in_the_change_list_with_the_new_solicitante(partner, organization):
    first = make_ticket(organization, requester=RequesterData(name="Maria", external_id="cliente-42"))
    second = make_ticket(organization, requester=RequesterData(name="Maria", external_id="cliente-42"))
    other = make_ticket(organization)
    cursor = assert_success(partner.get(CHANGES), 200, "Alterações listadas.")["proximo_cursor"]

    patch(partner, first.requester, {"nome": "Maria Silva", "telefone": "11 5555"})

    page = assert_success(partner.get(CHANGES, {"desde": cursor}), 200, "Alterações listadas.")
    moved = {item["id"]: item["solicitante"] for item in page["itens"]}
    assert set(moved) == {str(first.pk), str(second.pk)}
    assert str(other.pk) not in moved
    for solicitante in moved.values():
        assert solicitante == {"nome": "Maria Silva", "email": None, "telefone": "11 5555", "external_id": "cliente-42"}


def test_a_partners_change_emits_no_event_and_is_audited(partner, organization, example_dns):
    make_webhook(organization)
    person = contact(organization, "Maria", external_id="cliente-42")
    events, deliveries = WebhookEvent.objects.count(), WebhookDelivery.objects.count()

    assert_success(patch(partner, person, {"nome": "Maria Silva", "external_id": "crm-1"}), 200, "Contato atualizado.")

    assert (WebhookEvent.objects.count(), WebhookDelivery.objects.count()) == (events, deliveries)
    [record] = AuditRecord.objects.filter(action="contato.atualizado")
    assert (record.organization_id, record.resource_type, record.resource_id) == (
        organization.pk,
        "contato",
        str(person.pk),
    )
    assert record.actor_type == "credencial"
    assert record.changes == {"campos": {"antes": None, "depois": ["nome", "external_id"]}}


def test_any_key_of_the_organization_may_correct_a_contact(organization):
    person = contact(organization, "Maria")
    other_key = bearer_client(make_key(organization, name="Outra integração"))

    assert_success(patch(other_key, person, {"nome": "Maria Silva"}), 200, "Contato atualizado.")


# --- the answers are the ones the schema documents ---------------------------------------------------


def test_contact_answers_conform_to_the_published_schema(partner, organization):
    documented = schemathesis.openapi.from_dict(Client().get("/api/schema/?format=json").json())
    bare = contact(organization, "João")
    taken = contact(organization, "Maria", "maria@example.com", "11 5555", "cliente-42")
    path = f"{URL}/{bare.pk}"

    assert_conforms(documented, "GET", URL, partner.get(URL, {"telefone": "11 5555"}))
    assert_conforms(documented, "GET", "/api/v1/contatos/{id}", partner.get(path))
    assert_conforms(documented, "GET", "/api/v1/contatos/{id}", partner.get(f"{URL}/{uuid.uuid4()}"))
    assert_conforms(documented, "PATCH", "/api/v1/contatos/{id}", patch(partner, bare, {"email": None}))
    conflict = patch(partner, bare, {"external_id": taken.external_id})
    assert assert_conforms(documented, "PATCH", "/api/v1/contatos/{id}", conflict)["status"] == 409
    assert_conforms(documented, "PATCH", "/api/v1/contatos/{id}", patch(partner, bare, {"nome": ""}))
    assert_conforms(documented, "GET", "/api/v1/contatos/{id}/tickets", partner.get(f"{path}/tickets"))
