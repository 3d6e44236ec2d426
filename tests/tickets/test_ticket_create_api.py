"""POST /api/v1/tickets: creation, idempotency, numbering, contact dedupe and validation."""

import uuid

import pytest

from tests.assertions import assert_success, assert_validation_error, utc
from tests.contract import TICKET_FIELDS
from tests.factories import make_ticket
from tickets.models import Contact, Ticket
from tickets.services import RequesterData

URL = "/api/v1/tickets"


def payload(**overrides) -> dict:
    body = {
        "assunto": "Impressora não imprime",
        "descricao": "Desde ontem a impressora do financeiro não responde.",
        "solicitante": {"nome": "Maria Souza"},
    }
    body.update(overrides)
    return body


# --- Creation -------------------------------------------------------------


def test_create_returns_201_with_the_whole_ticket(partner, organization):
    response = partner.post(
        URL,
        payload(
            prioridade="alta",
            external_id="pedido-1001",
            solicitante={
                "nome": "Maria Souza",
                "email": "maria@example.com",
                "telefone": "+55 11 99999-0000",
                "external_id": "cliente-42",
            },
        ),
        format="json",
    )

    data = assert_success(response, 201, "Ticket criado.")
    ticket = Ticket.objects.get()
    assert data == {
        "id": str(ticket.pk),
        "numero": 1,
        "assunto": "Impressora não imprime",
        "descricao": "Desde ontem a impressora do financeiro não responde.",
        "prioridade": "alta",
        "canal_origem": "api",
        "status": {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"},
        "solicitante": {
            "nome": "Maria Souza",
            "email": "maria@example.com",
            "telefone": "+55 11 99999-0000",
            "external_id": "cliente-42",
        },
        "external_id": "pedido-1001",
        "origem_sistema": "api",
        "criado_em": data["criado_em"],
        "atualizado_em": data["atualizado_em"],
        "resolvido_em": None,
        "respostas": [],
    }
    assert set(data) == TICKET_FIELDS
    assert str(uuid.UUID(data["id"])) == data["id"]
    assert isinstance(data["numero"], int)
    assert utc(data["criado_em"]) == ticket.created_at
    assert utc(data["atualizado_em"]) == ticket.updated_at


def test_create_stores_the_ticket_in_the_callers_organization(partner, organization):
    partner.post(URL, payload(external_id="pedido-1"), format="json")

    ticket = Ticket.objects.select_related("requester", "status").get()
    assert ticket.organization == organization
    assert ticket.requester.organization == organization
    assert ticket.status.organization == organization
    assert ticket.external_id == "pedido-1"


def test_create_with_only_required_fields_uses_defaults_and_nulls(partner, organization):
    response = partner.post(URL, payload(), format="json")

    assert response.status_code == 201
    data = response.json()["data"]
    assert data["prioridade"] == "media"
    assert data["external_id"] is None
    assert data["solicitante"] == {"nome": "Maria Souza", "email": None, "telefone": None, "external_id": None}
    assert data["canal_origem"] == "api"
    assert data["origem_sistema"] == "api"
    assert data["resolvido_em"] is None
    assert data["respostas"] == []


@pytest.mark.parametrize("priority", ["baixa", "media", "alta", "urgente"])
def test_create_accepts_each_priority(partner, organization, priority):
    response = partner.post(URL, payload(prioridade=priority), format="json")

    assert response.status_code == 201
    assert response.json()["data"]["prioridade"] == priority


def test_create_accepts_null_for_optional_fields(partner, organization):
    response = partner.post(
        URL,
        payload(
            prioridade=None,
            external_id=None,
            solicitante={"nome": "Maria", "email": None, "telefone": None, "external_id": None},
        ),
        format="json",
    )

    assert response.status_code == 201
    data = response.json()["data"]
    assert data["prioridade"] == "media"
    assert data["external_id"] is None
    assert data["solicitante"] == {"nome": "Maria", "email": None, "telefone": None, "external_id": None}


def test_create_ignores_fields_the_client_may_not_set(partner, organization, other_organization):
    response = partner.post(
        URL,
        payload(
            id="00000000-0000-0000-0000-000000000001",
            numero=999,
            canal_origem="painel",
            origem_sistema="painel",
            status={"nome": "Fechado", "categoria": "fechado", "cor": "#000000"},
            resolvido_em="2020-01-01T00:00:00Z",
            organization=str(other_organization.pk),
            respostas=[{"mensagem": "injetada"}],
        ),
        format="json",
    )

    assert response.status_code == 201
    data = response.json()["data"]
    assert data["id"] != "00000000-0000-0000-0000-000000000001"
    assert data["numero"] == 1
    assert data["canal_origem"] == "api"
    assert data["origem_sistema"] == "api"
    assert data["status"] == {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"}
    assert data["resolvido_em"] is None
    assert data["respostas"] == []
    assert Ticket.objects.get().organization == organization
    assert not Ticket.objects.filter(organization=other_organization).exists()


# --- Idempotency by external_id -------------------------------------------


def test_same_external_id_returns_the_existing_ticket_with_200(partner, organization):
    first = partner.post(URL, payload(external_id="pedido-7"), format="json")

    second = partner.post(URL, payload(external_id="pedido-7"), format="json")

    assert first.status_code == 201
    assert second.status_code == 200
    assert second.json() == {
        "success": True,
        "message": "Ticket já existente para este external_id.",
        "data": first.json()["data"],
        "errors": [],
    }
    assert Ticket.objects.count() == 1


def test_same_external_id_with_other_content_keeps_the_original_and_writes_nothing(partner, organization):
    first = partner.post(
        URL,
        payload(external_id="pedido-7", solicitante={"nome": "Maria", "external_id": "cli-1"}),
        format="json",
    )

    second = partner.post(
        URL,
        {
            "assunto": "Outro assunto",
            "descricao": "Outra descrição",
            "prioridade": "urgente",
            "external_id": "pedido-7",
            "solicitante": {"nome": "João", "email": "joao@example.com", "external_id": "cli-2"},
        },
        format="json",
    )

    assert second.status_code == 200
    data = second.json()["data"]
    assert data["id"] == first.json()["data"]["id"]
    assert data["assunto"] == "Impressora não imprime"
    assert data["prioridade"] == "media"
    assert data["solicitante"] == {"nome": "Maria", "email": None, "telefone": None, "external_id": "cli-1"}
    assert Ticket.objects.count() == 1
    assert list(Contact.objects.values_list("external_id", flat=True)) == ["cli-1"]


def test_without_external_id_every_call_creates_a_ticket(partner, organization):
    first = partner.post(URL, payload(), format="json")
    second = partner.post(URL, payload(), format="json")

    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["message"] == second.json()["message"] == "Ticket criado."
    assert first.json()["data"]["id"] != second.json()["data"]["id"]
    assert Ticket.objects.count() == 2


def test_different_organizations_may_reuse_an_external_id(partner, other_partner, organization, other_organization):
    ours = partner.post(URL, payload(external_id="pedido-1"), format="json")
    theirs = other_partner.post(URL, payload(external_id="pedido-1"), format="json")

    assert (ours.status_code, theirs.status_code) == (201, 201)
    assert theirs.json()["message"] == "Ticket criado."
    assert ours.json()["data"]["id"] != theirs.json()["data"]["id"]
    assert Ticket.objects.filter(organization=organization, external_id="pedido-1").count() == 1
    assert Ticket.objects.filter(organization=other_organization, external_id="pedido-1").count() == 1


def test_external_id_is_matched_exactly(partner, organization):
    partner.post(URL, payload(external_id="Pedido-1"), format="json")

    response = partner.post(URL, payload(external_id="pedido-1"), format="json")

    assert response.status_code == 201
    assert Ticket.objects.count() == 2


# --- Numbering ------------------------------------------------------------


def test_numbers_increment_per_organization_independently(partner, other_partner, organization, other_organization):
    numbers = []
    for client in (partner, other_partner, partner, other_partner, partner):
        numbers.append(client.post(URL, payload(), format="json").json()["data"]["numero"])

    assert numbers == [1, 1, 2, 2, 3]
    assert sorted(Ticket.objects.filter(organization=organization).values_list("number", flat=True)) == [1, 2, 3]
    assert sorted(Ticket.objects.filter(organization=other_organization).values_list("number", flat=True)) == [1, 2]


def test_an_idempotent_replay_does_not_consume_a_number(partner, organization):
    partner.post(URL, payload(external_id="pedido-1"), format="json")
    partner.post(URL, payload(external_id="pedido-1"), format="json")

    response = partner.post(URL, payload(external_id="pedido-2"), format="json")

    assert response.json()["data"]["numero"] == 2


def test_a_rejected_request_does_not_consume_a_number(partner, organization):
    partner.post(URL, payload(), format="json")
    partner.post(URL, payload(assunto=""), format="json")

    response = partner.post(URL, payload(), format="json")

    assert response.json()["data"]["numero"] == 2


# --- Contact dedupe -------------------------------------------------------


def test_requester_external_id_reuses_one_contact(partner, organization):
    first = partner.post(URL, payload(solicitante={"nome": "Maria", "external_id": "cli-1"}), format="json")
    second = partner.post(URL, payload(solicitante={"nome": "Maria", "external_id": "cli-1"}), format="json")

    assert (first.status_code, second.status_code) == (201, 201)
    contact = Contact.objects.get()
    assert contact.external_id == "cli-1"
    assert contact.organization == organization
    assert set(Ticket.objects.values_list("requester_id", flat=True)) == {contact.pk}


def test_reused_contact_gets_blank_fields_filled_and_keeps_existing_values(partner, organization):
    partner.post(URL, payload(solicitante={"nome": "Maria", "external_id": "cli-1"}), format="json")

    response = partner.post(
        URL,
        payload(
            solicitante={
                "nome": "Maria Souza Lima",
                "email": "maria@example.com",
                "telefone": "+55 11 90000-0000",
                "external_id": "cli-1",
            }
        ),
        format="json",
    )

    assert response.json()["data"]["solicitante"] == {
        "nome": "Maria",
        "email": "maria@example.com",
        "telefone": "+55 11 90000-0000",
        "external_id": "cli-1",
    }
    contact = Contact.objects.get()
    assert (contact.name, contact.email, contact.phone) == ("Maria", "maria@example.com", "+55 11 90000-0000")


def test_reused_contact_keeps_its_email_and_phone(partner, organization):
    partner.post(
        URL,
        payload(solicitante={"nome": "Maria", "email": "maria@example.com", "telefone": "111", "external_id": "cli-1"}),
        format="json",
    )

    response = partner.post(
        URL,
        payload(solicitante={"nome": "Maria", "email": "outra@example.com", "telefone": "222", "external_id": "cli-1"}),
        format="json",
    )

    assert response.json()["data"]["solicitante"]["email"] == "maria@example.com"
    assert response.json()["data"]["solicitante"]["telefone"] == "111"
    contact = Contact.objects.get()
    assert (contact.email, contact.phone) == ("maria@example.com", "111")


def test_different_requester_external_ids_make_different_contacts(partner, organization):
    partner.post(URL, payload(solicitante={"nome": "Maria", "external_id": "cli-1"}), format="json")
    partner.post(URL, payload(solicitante={"nome": "Maria", "external_id": "cli-2"}), format="json")

    assert sorted(Contact.objects.values_list("external_id", flat=True)) == ["cli-1", "cli-2"]


def test_contacts_are_not_shared_between_organizations(partner, other_partner, organization, other_organization):
    partner.post(URL, payload(solicitante={"nome": "Maria", "external_id": "cli-1"}), format="json")
    other_partner.post(URL, payload(solicitante={"nome": "Maria", "external_id": "cli-1"}), format="json")

    assert Contact.objects.filter(organization=organization, external_id="cli-1").count() == 1
    assert Contact.objects.filter(organization=other_organization, external_id="cli-1").count() == 1
    for ticket in Ticket.objects.select_related("requester"):
        assert ticket.requester.organization_id == ticket.organization_id


def test_a_requester_email_within_the_limit_is_stored_even_when_lower_casing_lengthens_it(partner, organization):
    email = "\u0130" * 130 + "@example.test"  # 143 characters as sent, 273 lower-cased (each İ is two)

    response = partner.post(URL, payload(solicitante={"nome": "Maria", "email": email}), format="json")

    assert response.status_code == 201
    assert response.json()["data"]["solicitante"]["email"] == email.lower()
    assert Contact.objects.get().email == email.lower()


def test_without_requester_external_id_the_contact_is_reused_by_email_ignoring_case(partner, organization):
    existing = make_ticket(
        organization, requester=RequesterData(name="Maria", email="Maria.Souza@Example.COM")
    ).requester

    response = partner.post(
        URL, payload(solicitante={"nome": "Maria S.", "email": "maria.souza@example.com"}), format="json"
    )

    assert response.status_code == 201
    assert Contact.objects.get() == existing
    assert Ticket.objects.get(pk=response.json()["data"]["id"]).requester == existing
    assert response.json()["data"]["solicitante"]["nome"] == "Maria"


def test_without_requester_external_id_or_known_email_a_new_contact_is_made(partner, organization):
    partner.post(URL, payload(solicitante={"nome": "Maria", "email": "maria@example.com"}), format="json")
    partner.post(URL, payload(solicitante={"nome": "Maria", "email": "outra@example.com"}), format="json")
    partner.post(URL, payload(solicitante={"nome": "Maria"}), format="json")
    partner.post(URL, payload(solicitante={"nome": "Maria"}), format="json")

    assert Contact.objects.count() == 4


def test_email_reuse_does_not_cross_organizations(partner, organization, other_organization):
    make_ticket(other_organization, requester=RequesterData(name="Maria", email="maria@example.com"))

    partner.post(URL, payload(solicitante={"nome": "Maria", "email": "maria@example.com"}), format="json")

    assert Contact.objects.filter(organization=organization).count() == 1
    assert Contact.objects.filter(organization=other_organization).count() == 1


# --- Validation -----------------------------------------------------------

REQUESTER_OK = {"nome": "Maria"}


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        pytest.param({}, {"assunto", "descricao", "solicitante"}, id="empty-body"),
        pytest.param(payload(assunto=""), {"assunto"}, id="assunto-blank"),
        pytest.param(payload(assunto="   "), {"assunto"}, id="assunto-whitespace"),
        pytest.param(payload(assunto="a" * 256), {"assunto"}, id="assunto-256"),
        pytest.param(payload(assunto=None), {"assunto"}, id="assunto-null"),
        pytest.param(payload(assunto=123), {"assunto"}, id="assunto-number"),
        pytest.param(payload(assunto=["a"]), {"assunto"}, id="assunto-list"),
        pytest.param(payload(descricao=""), {"descricao"}, id="descricao-blank"),
        pytest.param(payload(descricao="d" * 65536), {"descricao"}, id="descricao-65536"),
        pytest.param(payload(descricao={"a": 1}), {"descricao"}, id="descricao-object"),
        pytest.param(payload(prioridade="x"), {"prioridade"}, id="prioridade-unknown"),
        pytest.param(payload(prioridade="ALTA"), {"prioridade"}, id="prioridade-case"),
        pytest.param(payload(external_id=""), {"external_id"}, id="external_id-blank"),
        pytest.param(payload(external_id="e" * 256), {"external_id"}, id="external_id-256"),
        pytest.param(payload(external_id=42), {"external_id"}, id="external_id-number"),
        pytest.param(payload(solicitante=None), {"solicitante"}, id="solicitante-null"),
        pytest.param(payload(solicitante="Maria"), {"solicitante"}, id="solicitante-string"),
        pytest.param(payload(solicitante={}), {"solicitante.nome"}, id="solicitante-nome-missing"),
        pytest.param(payload(solicitante={"nome": ""}), {"solicitante.nome"}, id="solicitante-nome-blank"),
        pytest.param(payload(solicitante={"nome": "n" * 256}), {"solicitante.nome"}, id="solicitante-nome-256"),
        pytest.param(
            payload(solicitante={**REQUESTER_OK, "email": "nao-e-email"}), {"solicitante.email"}, id="email-invalid"
        ),
        pytest.param(
            payload(solicitante={**REQUESTER_OK, "email": "maria@"}), {"solicitante.email"}, id="email-no-domain"
        ),
        pytest.param(
            payload(solicitante={**REQUESTER_OK, "telefone": "1" * 33}), {"solicitante.telefone"}, id="telefone-33"
        ),
        pytest.param(
            payload(solicitante={**REQUESTER_OK, "external_id": ""}),
            {"solicitante.external_id"},
            id="solicitante-external_id-blank",
        ),
        pytest.param(
            payload(solicitante={**REQUESTER_OK, "external_id": "c" * 256}),
            {"solicitante.external_id"},
            id="solicitante-external_id-256",
        ),
        pytest.param(
            {
                "assunto": "",
                "descricao": "",
                "prioridade": "x",
                "solicitante": {"nome": "", "email": "x", "telefone": "1" * 33},
            },
            {
                "assunto",
                "descricao",
                "prioridade",
                "solicitante.nome",
                "solicitante.email",
                "solicitante.telefone",
            },
            id="everything-wrong",
        ),
    ],
)
def test_invalid_payload_is_422_and_writes_nothing(partner, organization, body, fields):
    response = partner.post(URL, body, format="json")

    assert_validation_error(response, fields)
    assert Ticket.objects.count() == 0
    assert Contact.objects.count() == 0


def test_validation_messages_are_in_portuguese(partner, organization):
    response = partner.post(URL, {"assunto": "", "solicitante": {"nome": "Maria"}}, format="json")

    assert response.json()["errors"] == {
        "assunto": ["Este campo não pode estar em branco."],
        "descricao": ["Este campo é obrigatório."],
    }


def test_invalid_payload_with_a_known_external_id_is_still_422(partner, organization):
    partner.post(URL, payload(external_id="pedido-1"), format="json")

    response = partner.post(URL, payload(external_id="pedido-1", assunto=""), format="json")

    assert_validation_error(response, {"assunto"})
    assert Ticket.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(payload(assunto="a" * 255), id="assunto-255"),
        pytest.param(payload(assunto="a"), id="assunto-1"),
        pytest.param(payload(descricao="d" * 65535), id="descricao-65535"),
        pytest.param(payload(descricao="d"), id="descricao-1"),
        pytest.param(payload(external_id="e" * 255), id="external_id-255"),
        pytest.param(payload(external_id="e"), id="external_id-1"),
        pytest.param(payload(solicitante={"nome": "Maria", "telefone": "1" * 32}), id="telefone-32"),
        pytest.param(payload(solicitante={"nome": "Maria", "email": ""}), id="email-blank"),
        pytest.param(payload(solicitante={"nome": "Maria", "external_id": "c" * 255}), id="solicitante-ext-255"),
    ],
)
def test_values_at_the_limits_are_accepted(partner, organization, body):
    response = partner.post(URL, body, format="json")

    assert response.status_code == 201
    ticket = Ticket.objects.get()
    data = response.json()["data"]
    assert data["assunto"] == ticket.subject == body["assunto"]
    assert data["descricao"] == ticket.description == body["descricao"]
