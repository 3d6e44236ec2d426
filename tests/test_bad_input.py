"""Hostile and sloppy input to every partner write: always a 4xx envelope, never a 500, nothing written."""

import copy
import json
import uuid

import pytest

from tests.assertions import assert_exact_validation_error, reply_state, row_counts
from tests.factories import make_customer_reply, make_ticket
from tickets.models import Reply, Ticket

TICKETS = "/api/v1/tickets"
VALIDATION = "Erro de validação"
MISSING = object()
SURROGATE = "__LONE_SURROGATE__"

TICKET = {
    "assunto": "Impressora",
    "descricao": "Não imprime.",
    "prioridade": "alta",
    "external_id": "pedido-1",
    "solicitante": {
        "nome": "Ana",
        "email": "ana@example.test",
        "telefone": "+55 11 99999-0000",
        "external_id": "cli-1",
    },
}

# field -> maximum length
REQUIRED_TEXT = {"assunto": 255, "descricao": 65535, "solicitante.nome": 255}
OPTIONAL_ID_TEXT = {"external_id": 255, "solicitante.external_id": 255}
OPTIONAL_BLANKABLE_TEXT = {"solicitante.email": 254, "solicitante.telefone": 32}
TEXT_FIELDS = {**REQUIRED_TEXT, **OPTIONAL_ID_TEXT, **OPTIONAL_BLANKABLE_TEXT}

NOT_TEXT = "Informe um texto."
NOT_NULL = "Este campo não pode ser nulo."
NOT_BLANK = "Este campo não pode estar em branco."
REQUIRED = "Este campo é obrigatório."
NO_NUL = "Caracteres nulos não são permitidos."
NOT_UTF8 = "O texto contém caracteres que não são UTF-8 válido."
BAD_EMAIL = "Informe um endereço de e-mail válido."
WRONG_TYPES = [123, 1.5, True, ["Ana"], {"nome": "Ana"}]


def too_long(limit: int) -> str:
    return f"Certifique-se de que este campo não tenha mais de {limit} caracteres."


def not_a_choice(value: str) -> str:
    return f'"{value}" não é uma escolha válida.'


def not_a_dict(type_name: str) -> str:
    return f"Dado inválido. Esperava um dicionário, mas recebeu {type_name}."


def string_of(field: str, length: int) -> str:
    if field == "solicitante.email":
        return "a" * (length - len("@example.test")) + "@example.test"
    return "x" * length


def with_value(body: dict, field: str, value) -> dict:
    body = copy.deepcopy(body)
    *parents, leaf = field.split(".")
    target = body
    for parent in parents:
        target = target[parent]
    if value is MISSING:
        del target[leaf]
    else:
        target[leaf] = value
    return body


def raw_json(body: dict) -> str:
    """JSON text in which the placeholder becomes the escape of a lone surrogate."""
    return json.dumps(body).replace(SURROGATE, "\\ud800")


def ticket_field_cases():
    for field, limit in TEXT_FIELDS.items():
        for value in WRONG_TYPES:
            yield pytest.param(field, value, [NOT_TEXT], id=f"{field}-{type(value).__name__}-{value!r}")
        yield pytest.param(field, string_of(field, limit + 1), [too_long(limit)], id=f"{field}-too-long")
        far_too_long = [too_long(limit), BAD_EMAIL] if field == "solicitante.email" else [too_long(limit)]
        yield pytest.param(field, string_of(field, 100_000), far_too_long, id=f"{field}-far-too-long")
    for field in REQUIRED_TEXT:
        yield pytest.param(field, None, [NOT_NULL], id=f"{field}-null")
        yield pytest.param(field, MISSING, [REQUIRED], id=f"{field}-missing")
    for field in {**REQUIRED_TEXT, **OPTIONAL_ID_TEXT}:
        for blank in ["", " \t\n "]:
            yield pytest.param(field, blank, [NOT_BLANK], id=f"{field}-blank-{blank!r}")
    for field in ["assunto", "descricao", "solicitante.nome", "external_id", "solicitante.external_id"]:
        yield pytest.param(field, "a\u0000b", [NO_NUL], id=f"{field}-nul")
        yield pytest.param(field, "\u0000", [NO_NUL], id=f"{field}-only-nul")
    yield pytest.param("solicitante.telefone", "1199\u00009999", [NO_NUL], id="solicitante.telefone-nul")
    yield pytest.param("solicitante.email", "ana\u0000@example.test", [NO_NUL, BAD_EMAIL], id="solicitante.email-nul")
    for email in ["ana", "ana@", "@example.test", "ana @example.test", "ana@@example.test", "ana@example..test"]:
        yield pytest.param("solicitante.email", email, [BAD_EMAIL], id=f"solicitante.email-{email}")
    for value, shown in [("x", "x"), ("ALTA", "ALTA"), ("", ""), (1, "1"), (True, "True"), ([], "[]"), ({}, "{}")]:
        yield pytest.param("prioridade", value, [not_a_choice(shown)], id=f"prioridade-{value!r}")
    yield pytest.param("prioridade", "alta\u0000", [not_a_choice("alta\u0000")], id="prioridade-nul")
    for value, type_name in [("Ana", "str"), (["Ana"], "list"), (1, "int"), (True, "bool")]:
        yield pytest.param("solicitante", value, [not_a_dict(type_name)], id=f"solicitante-{value!r}")
    yield pytest.param("solicitante", None, [NOT_NULL], id="solicitante-null")
    yield pytest.param("solicitante", MISSING, [REQUIRED], id="solicitante-missing")


@pytest.mark.parametrize(("field", "value", "messages"), list(ticket_field_cases()))
def test_create_ticket_rejects_bad_field_with_422_and_writes_nothing(partner, field, value, messages):
    before = row_counts()

    response = partner.post(TICKETS, with_value(TICKET, field, value), format="json")

    assert_exact_validation_error(response, {field: messages})
    assert row_counts() == before


def test_create_ticket_reports_every_bad_field_at_once(partner):
    body = {"assunto": 1, "descricao": None, "prioridade": "x", "solicitante": {"nome": [], "email": "ana"}}

    response = partner.post(TICKETS, body, format="json")

    assert_exact_validation_error(
        response,
        {
            "assunto": [NOT_TEXT],
            "descricao": [NOT_NULL],
            "prioridade": [not_a_choice("x")],
            "solicitante.nome": [NOT_TEXT],
            "solicitante.email": [BAD_EMAIL],
        },
    )
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


@pytest.mark.parametrize(
    "field",
    [
        "assunto",
        "descricao",
        "external_id",
        "solicitante.nome",
        "solicitante.email",
        "solicitante.telefone",
        "solicitante.external_id",
    ],
)
@pytest.mark.parametrize("surrogate", ["\\ud800", "\\udc00\\ud800"])
def test_create_ticket_rejects_lone_surrogates_in_text_fields(partner, field, surrogate):
    text = json.dumps(with_value(TICKET, field, f"a{SURROGATE}b")).replace(SURROGATE, surrogate)

    response = partner.post(TICKETS, text, content_type="application/json")

    assert_exact_validation_error(response, {field: [NOT_UTF8]})
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_create_ticket_rejects_a_lone_surrogate_in_prioridade_without_a_500(partner):
    partner.raise_request_exception = False
    text = raw_json(with_value(TICKET, "prioridade", SURROGATE))

    response = partner.post(TICKETS, text, content_type="application/json")

    assert response.status_code == 422, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert (body["success"], body["message"], list(body["errors"])) == (False, VALIDATION, ["prioridade"])
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_create_ticket_accepts_a_proper_surrogate_pair(partner):
    text = json.dumps(with_value(TICKET, "assunto", "Impressora \U0001f5a8"))

    response = partner.post(TICKETS, text, content_type="application/json")

    assert response.status_code == 201
    assert response.json()["data"]["assunto"] == "Impressora \U0001f5a8"
    assert Ticket.objects.get().subject == "Impressora \U0001f5a8"


@pytest.mark.parametrize(
    "field", ["prioridade", "external_id", "solicitante.email", "solicitante.telefone", "solicitante.external_id"]
)
def test_create_ticket_accepts_null_for_optional_fields(partner, field):
    response = partner.post(TICKETS, with_value(TICKET, field, None), format="json")

    assert response.status_code == 201, response.content


def test_create_ticket_accepts_strings_at_every_limit(partner):
    local, domain = "a" * 64, "b" * 63 + "." + "c" * 63 + "." + "d" * 58 + ".io"
    body = {
        "assunto": "x" * 255,
        "descricao": "y" * 65535,
        "external_id": "e" * 255,
        "solicitante": {
            "nome": "n" * 255,
            "email": f"{local}@{domain}",
            "telefone": "1" * 32,
            "external_id": "c" * 255,
        },
    }
    assert len(body["solicitante"]["email"]) == 254

    response = partner.post(TICKETS, body, format="json")

    assert response.status_code == 201, response.content
    ticket = Ticket.objects.select_related("requester").get()
    assert (len(ticket.subject), len(ticket.description), len(ticket.external_id)) == (255, 65535, 255)
    assert (len(ticket.requester.name), len(ticket.requester.email)) == (255, 254)
    assert (len(ticket.requester.phone), len(ticket.requester.external_id)) == (32, 255)


def test_create_ticket_ignores_unknown_and_forbidden_fields(partner, organization, other_organization):
    body = {
        **TICKET,
        "id": str(uuid.uuid4()),
        "numero": 999,
        "organization": str(other_organization.pk),
        "organizacao": str(other_organization.pk),
        "canal_origem": "painel",
        "origem_sistema": "painel",
        "status": {"nome": "Fechado", "categoria": "fechado", "cor": "#000000"},
        "criado_em": "2001-01-01T00:00:00Z",
        "resolvido_em": "2001-01-01T00:00:00Z",
        "respostas": [{"mensagem": "injetada", "origem": "agente"}],
        "campo_desconhecido": {"aninhado": [1, 2, 3]},
        "solicitante": {**TICKET["solicitante"], "id": str(uuid.uuid4()), "organizacao": "x"},
    }

    response = partner.post(TICKETS, body, format="json")

    assert response.status_code == 201
    data = response.json()["data"]
    assert data["id"] != body["id"]
    assert data["numero"] == 1
    assert (data["canal_origem"], data["origem_sistema"]) == ("api", "api")
    assert data["status"] == {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"}
    assert data["criado_em"] != body["criado_em"]
    assert data["resolvido_em"] is None
    assert data["respostas"] == []
    ticket = Ticket.objects.get()
    assert ticket.organization == organization
    assert Reply.objects.count() == 0
    assert Ticket.objects.filter(organization=other_organization).count() == 0


MALFORMED_BODIES = [
    pytest.param(b"[]", id="empty-array"),
    pytest.param(b'[{"mensagem": "Oi"}]', id="array"),
    pytest.param(b'"Oi"', id="string"),
    pytest.param(b"42", id="number"),
    pytest.param(b"null", id="null"),
    pytest.param(b"true", id="boolean"),
    pytest.param(b"{nope", id="syntax"),
    pytest.param(b'{"mensagem": NaN}', id="nan"),
    pytest.param(b'{"mensagem": "Ol\xe1"}', id="latin1"),
    pytest.param(b'{"mensagem": "\xff\xfe\xfd"}', id="invalid-utf8"),
    pytest.param(b'{"mensagem": "\xed\xa0\x80"}', id="utf8-encoded-surrogate"),
    pytest.param(b'{"mensagem": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", id="deeply-nested"),
]


@pytest.fixture
def ticket_and_reply(organization):
    """A ticket of `organization` and one customer reply on it, for the reply endpoints."""
    ticket = make_ticket(organization)
    reply = make_customer_reply(ticket, body="Texto original")
    return ticket, reply


def endpoint_request(partner, ticket_and_reply, endpoint: str, body, content_type: str | None = None):
    ticket, reply = ticket_and_reply
    kwargs = {"content_type": content_type} if content_type else {"format": "json"}
    if endpoint == "create-ticket":
        return partner.post(TICKETS, body, **kwargs)
    if endpoint == "create-reply":
        return partner.post(f"{TICKETS}/{ticket.pk}/respostas", body, **kwargs)
    return partner.patch(f"{TICKETS}/{ticket.pk}/respostas/{reply.pk}", body, **kwargs)


ENDPOINTS = ["create-ticket", "create-reply", "edit-reply"]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("body", MALFORMED_BODIES)
def test_malformed_or_non_object_body_is_a_400_on_field_body(partner, ticket_and_reply, endpoint, body):
    partner.raise_request_exception = False
    before, original = row_counts(), reply_state(ticket_and_reply[1])

    response = endpoint_request(partner, ticket_and_reply, endpoint, body, content_type="application/json")

    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/json"
    envelope = response.json()
    assert {key: envelope[key] for key in ("success", "message", "status", "data")} == {
        "success": False,
        "message": "JSON inválido.",
        "status": 400,
        "data": None,
    }
    assert envelope["errors"]["field"] == "body"
    assert row_counts() == before
    assert reply_state(ticket_and_reply[1]) == original


def reply_field_cases():
    for value in WRONG_TYPES:
        yield pytest.param(value, [NOT_TEXT], id=f"{type(value).__name__}-{value!r}")
    yield pytest.param(None, [NOT_NULL], id="null")
    yield pytest.param(MISSING, [REQUIRED], id="missing")
    for blank in ["", " \t\n "]:
        yield pytest.param(blank, [NOT_BLANK], id=f"blank-{blank!r}")
    yield pytest.param("x" * 65536, [too_long(65535)], id="too-long")
    yield pytest.param("x" * 500_000, [too_long(65535)], id="far-too-long")
    yield pytest.param("Olá\u0000mundo", [NO_NUL], id="nul")
    yield pytest.param("\u0000", [NO_NUL], id="only-nul")


@pytest.mark.parametrize("endpoint", ["create-reply", "edit-reply"])
@pytest.mark.parametrize(("value", "messages"), list(reply_field_cases()))
def test_reply_rejects_bad_mensagem_with_422_and_writes_nothing(partner, ticket_and_reply, endpoint, value, messages):
    body = with_value({"mensagem": "Oi"}, "mensagem", value)
    before, original = row_counts(), reply_state(ticket_and_reply[1])

    response = endpoint_request(partner, ticket_and_reply, endpoint, body)

    assert_exact_validation_error(response, {"mensagem": messages})
    assert row_counts() == before
    assert reply_state(ticket_and_reply[1]) == original


@pytest.mark.parametrize("endpoint", ["create-reply", "edit-reply"])
@pytest.mark.parametrize("surrogate", ["\\ud800", "\\udfff", "\\udc00\\ud800"])
def test_reply_rejects_lone_surrogates_in_mensagem(partner, ticket_and_reply, endpoint, surrogate):
    text = json.dumps({"mensagem": f"a{SURROGATE}b"}).replace(SURROGATE, surrogate)
    before, original = row_counts(), reply_state(ticket_and_reply[1])

    response = endpoint_request(partner, ticket_and_reply, endpoint, text, content_type="application/json")

    assert_exact_validation_error(response, {"mensagem": [NOT_UTF8]})
    assert row_counts() == before
    assert reply_state(ticket_and_reply[1]) == original


def test_reply_accepts_mensagem_at_the_limit(partner, ticket_and_reply):
    ticket, _reply = ticket_and_reply

    response = partner.post(f"{TICKETS}/{ticket.pk}/respostas", {"mensagem": "m" * 65535}, format="json")

    assert response.status_code == 201
    assert len(Reply.objects.get(pk=response.json()["data"]["id"]).body) == 65535


def test_create_reply_ignores_unknown_and_forbidden_fields(partner, ticket_and_reply, agent):
    ticket, _reply = ticket_and_reply
    body = {
        "mensagem": "Ainda não funciona",
        "id": str(uuid.uuid4()),
        "interna": True,
        "is_internal": True,
        "origem": "agente",
        "editado": True,
        "autor": {"tipo": "agente", "nome": "Intruso"},
        "author_agent": str(agent.pk),
        "criado_em": "2001-01-01T00:00:00Z",
    }

    response = partner.post(f"{TICKETS}/{ticket.pk}/respostas", body, format="json")

    assert response.status_code == 201
    data = response.json()["data"]
    assert data["id"] != body["id"]
    assert (data["origem"], data["editado"], data["autor"]["tipo"]) == ("cliente_api", False, "cliente")
    reply = Reply.objects.get(pk=data["id"])
    assert (reply.is_internal, reply.author_agent_id, reply.edited) == (False, None, False)


def test_edit_reply_ignores_unknown_and_forbidden_fields(partner, ticket_and_reply, organization):
    ticket, reply = ticket_and_reply
    other_ticket = make_ticket(organization)
    body = {
        "mensagem": "Corrigido",
        "interna": True,
        "origem": "agente",
        "editado": False,
        "ticket": str(other_ticket.pk),
    }

    response = partner.patch(f"{TICKETS}/{ticket.pk}/respostas/{reply.pk}", body, format="json")

    assert response.status_code == 200
    assert (response.json()["data"]["origem"], response.json()["data"]["editado"]) == ("cliente_api", True)
    reply.refresh_from_db()
    assert (reply.body, reply.is_internal, reply.ticket_id) == ("Corrigido", False, ticket.pk)


def list_query_cases():
    yield pytest.param({"busca": "a\u0000b"}, {"busca": [NO_NUL]}, id="busca-nul")
    yield pytest.param({"busca": "\u0000"}, {"busca": [NO_NUL]}, id="busca-only-nul")
    yield pytest.param({"busca": "x" * 256}, {"busca": [too_long(255)]}, id="busca-too-long")
    yield pytest.param({"prioridade": "alta\u0000"}, {"prioridade": [not_a_choice("alta\u0000")]}, id="prioridade-nul")
    yield pytest.param({"prioridade": "x"}, {"prioridade": [not_a_choice("x")]}, id="prioridade-unknown")
    for numero in ["abc", "1\u0000", "1.5"]:
        yield pytest.param(
            {"numero": numero}, {"numero": ["Um número inteiro válido é exigido."]}, id=f"numero-{numero!r}"
        )
    yield pytest.param({"numero": "9" * 5000}, {"numero": ["Valor da string é muito grande."]}, id="numero-huge")
    yield pytest.param(
        {"numero": "2147483648"},
        {"numero": ["Certifique-se de que este valor seja menor ou igual a 2147483647."]},
        id="numero-past-int32",
    )
    for page in ["abc", "1\u0000"]:
        yield pytest.param({"page": page}, {"page": ["Um número inteiro válido é exigido."]}, id=f"page-{page!r}")
    for per_page in ["abc", "\u0000"]:
        yield pytest.param(
            {"por_pagina": per_page},
            {"por_pagina": ["Um número inteiro válido é exigido."]},
            id=f"por_pagina-{per_page!r}",
        )


@pytest.mark.parametrize(("query", "errors"), list(list_query_cases()))
def test_list_rejects_bad_query_parameters_with_422(partner, organization, query, errors):
    make_ticket(organization)

    response = partner.get(TICKETS, query)

    assert_exact_validation_error(response, errors)


@pytest.mark.parametrize(
    "busca", ["²", "①", "2²", "Ⅻ", "١٢", "%", "_", "%_%", "\\", "'; DROP TABLE tickets_ticket; --"]
)
def test_busca_with_unicode_digits_or_sql_characters_is_a_plain_search_not_a_500(partner, organization, busca):
    partner.raise_request_exception = False
    make_ticket(organization, subject="Impressora", description="Não imprime")

    response = partner.get(TICKETS, {"busca": busca})

    assert response.status_code == 200, response.content
    assert response.json()["success"] is True
    assert response.json()["data"]["data"] == []
    assert Ticket.objects.count() == 1


@pytest.mark.parametrize(
    "ticket_id",
    ["abc", "%00", "a%00b", "123", "00000000-0000-0000-0000-00000000000g", "%27%20OR%201%3D1%20--", "%F0%9F%96%A8"],
)
def test_garbage_ticket_id_is_a_404_in_every_endpoint(partner, ticket_and_reply, ticket_id):
    _ticket, reply = ticket_and_reply
    not_found = {
        "success": False,
        "message": "Ticket não encontrado.",
        "status": 404,
        "data": None,
        "errors": {"field": "id", "message": "Ticket inexistente nesta organização."},
    }
    before = row_counts()

    responses = [
        partner.get(f"{TICKETS}/{ticket_id}"),
        partner.post(f"{TICKETS}/{ticket_id}/respostas", {"mensagem": "Oi"}, format="json"),
        partner.patch(f"{TICKETS}/{ticket_id}/respostas/{reply.pk}", {"mensagem": "Oi"}, format="json"),
    ]

    assert [r.status_code for r in responses] == [404, 404, 404]
    assert [r.json() for r in responses] == [not_found] * 3
    assert row_counts() == before


@pytest.mark.parametrize("reply_id", ["abc", "%00", "123", str(uuid.uuid4())])
def test_garbage_reply_id_is_a_404(partner, ticket_and_reply, reply_id):
    ticket, reply = ticket_and_reply
    original = reply_state(reply)

    response = partner.patch(f"{TICKETS}/{ticket.pk}/respostas/{reply_id}", {"mensagem": "Oi"}, format="json")

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": "Resposta não encontrada.",
        "status": 404,
        "data": None,
        "errors": {"field": "resposta", "message": "Resposta inexistente neste ticket."},
    }
    assert reply_state(reply) == original
