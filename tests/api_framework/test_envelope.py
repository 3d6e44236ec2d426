"""Every answer under /api/ is the JSON envelope: unknown routes, wrong methods, bad bodies, crashes, health."""

import json
import uuid

import pytest

from tests.assertions import row_counts
from tests.contract import TICKET_BODY, error_envelope
from tests.factories import make_customer_reply, make_ticket
from tickets.models import Contact, Reply, Ticket

TICKETS = "/api/v1/tickets"
ROUTE_NOT_FOUND = error_envelope(404, "Rota não encontrada.", "path", "Não existe recurso neste endereço.")
METHOD_NOT_ALLOWED = error_envelope(
    405, "Método não permitido.", "method", "O método HTTP não é aceito neste endereço."
)
UNSUPPORTED_MEDIA_TYPE = error_envelope(
    415, "Tipo de mídia não suportado.", "Content-Type", "Envie o corpo como application/json."
)
NOT_UTF8_JSON = "O corpo da requisição não é um JSON válido em UTF-8."
NOT_AN_OBJECT = "O corpo da requisição deve ser um objeto JSON."
PAYLOAD_TOO_LARGE = error_envelope(
    413, "Corpo da requisição muito grande.", "body", "O corpo da requisição excede 1 MiB."
)
INTERNAL_ERROR = error_envelope(
    500, "Erro interno do servidor.", "server", "Ocorreu um erro inesperado. Tente novamente."
)
ONE_MIB = 1024 * 1024


def bad_json(detail: str) -> dict:
    return error_envelope(400, "JSON inválido.", "body", detail)


def assert_json(response):
    assert response["Content-Type"] == "application/json"
    assert b"<html" not in response.content.lower()
    assert b"Traceback" not in response.content


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nada",
        "/api/v1/tickets/",
        "/api/v1/atendentes/",
        "/api/v1/tickets/abc/",
        "/api/v1/tickets/abc/respostas/",
        "/api/v1/",
        "/api/v2/tickets",
        "/api/nada",
        "/api/health/",
        "/api/",
    ],
)
def test_unknown_route_under_api_is_a_404_envelope_never_a_redirect(partner, path):
    response = partner.get(path)

    assert response.status_code == 404
    assert response.json() == ROUTE_NOT_FOUND
    assert "Location" not in response
    assert_json(response)


def test_unknown_route_is_a_404_envelope_for_any_method(partner):
    response = partner.post("/api/v1/tickets/", TICKET_BODY, format="json")

    assert response.status_code == 404
    assert response.json() == ROUTE_NOT_FOUND
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_unknown_route_is_a_404_envelope_without_credentials(anon_client, db):
    response = anon_client.get("/api/v1/nada")

    assert response.status_code == 404
    assert response.json() == ROUTE_NOT_FOUND


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("delete", TICKETS, {"GET", "POST", "HEAD"}),
        ("put", TICKETS, {"GET", "POST", "HEAD"}),
        ("patch", "/api/v1/tickets/{ticket}", {"GET", "HEAD"}),
        ("delete", "/api/v1/tickets/{ticket}", {"GET", "HEAD"}),
        ("get", "/api/v1/tickets/{ticket}/respostas", {"POST"}),
        ("delete", "/api/v1/tickets/{ticket}/respostas/{reply}", {"PATCH"}),
        ("put", "/api/v1/tickets/{ticket}/respostas/{reply}", {"PATCH"}),
        ("post", "/api/v1/atendentes", {"GET", "HEAD"}),
    ],
)
def test_wrong_method_is_a_405_envelope_with_an_allow_header(partner, organization, method, path, allowed):
    ticket = make_ticket(organization)
    reply = make_customer_reply(ticket)
    before = row_counts()

    response = getattr(partner, method)(path.format(ticket=ticket.pk, reply=reply.pk), {}, format="json")

    assert response.status_code == 405
    assert response.json() == METHOD_NOT_ALLOWED
    assert set(response["Allow"].split(", ")) == allowed
    assert_json(response)
    assert row_counts() == before


def test_wrong_method_on_health_is_a_405_envelope_with_an_allow_header(anon_client, db):
    response = anon_client.post("/api/health", {}, format="json")

    assert response.status_code == 405
    assert response.json() == METHOD_NOT_ALLOWED
    assert set(response["Allow"].split(", ")) == {"GET", "HEAD"}


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("assunto=Impressora&descricao=x&solicitante.nome=Ana", "application/x-www-form-urlencoded"),
        ('{"assunto": "Impressora"}', "text/plain"),
        ('{"assunto": "Impressora"}', "application/xml"),
        ('{"assunto": "Impressora"}', "application/jsonx"),
    ],
    ids=["form", "text", "xml", "jsonx"],
)
def test_body_that_is_not_json_media_type_is_a_415_envelope(partner, body, content_type):
    response = partner.post(TICKETS, body, content_type=content_type)

    assert response.status_code == 415
    assert response.json() == UNSUPPORTED_MEDIA_TYPE
    assert_json(response)
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_multipart_body_is_a_415_envelope(partner):
    response = partner.post(TICKETS, {"assunto": "Impressora", "descricao": "x"}, format="multipart")

    assert response.status_code == 415
    assert response.json() == UNSUPPORTED_MEDIA_TYPE
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_json_content_type_with_charset_parameter_is_accepted(partner):
    response = partner.post(TICKETS, json.dumps(TICKET_BODY), content_type="application/json; charset=utf-8")

    assert response.status_code == 201


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b"{nope", NOT_UTF8_JSON),
        (b'{"assunto": "Impressora",}', NOT_UTF8_JSON),
        (b'{"assunto": "Impressora"} {"x": 1}', NOT_UTF8_JSON),
        (b"   ", NOT_UTF8_JSON),
        (b'{"assunto": NaN}', NOT_UTF8_JSON),
        (b'{"assunto": Infinity}', NOT_UTF8_JSON),
        (b'{"assunto": -Infinity}', NOT_UTF8_JSON),
        (b'{"assunto": "Impressora \xff\xfe"}', NOT_UTF8_JSON),
        (b'{"assunto": "caf\xe9"}', NOT_UTF8_JSON),
        (b"\xef\xbb\xbf" + json.dumps(TICKET_BODY).encode(), NOT_UTF8_JSON),
        (b"[]", NOT_AN_OBJECT),
        (json.dumps([TICKET_BODY]).encode(), NOT_AN_OBJECT),
        (b'"Impressora"', NOT_AN_OBJECT),
        (b"42", NOT_AN_OBJECT),
        (b"true", NOT_AN_OBJECT),
        (b"null", NOT_AN_OBJECT),
    ],
    ids=[
        "syntax",
        "trailing-comma",
        "two-documents",
        "blank",
        "nan",
        "infinity",
        "minus-infinity",
        "invalid-utf8",
        "latin1",
        "utf8-bom",
        "empty-array",
        "array-of-objects",
        "string",
        "number",
        "boolean",
        "null",
    ],
)
def test_malformed_or_non_object_json_is_a_400_on_field_body(partner, body, detail):
    response = partner.post(TICKETS, body, content_type="application/json")

    assert response.status_code == 400
    assert response.json() == bad_json(detail)
    assert_json(response)
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_empty_body_where_a_json_object_is_expected_is_a_400_on_field_body(partner):
    response = partner.post(TICKETS, b"", content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {
        "success": False,
        "message": "JSON inválido.",
        "status": 400,
        "data": None,
        "errors": {"field": "body", "message": "O corpo da requisição está vazio."},
    }
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_api_without_trailing_slash_is_a_json_404(anon_client):
    response = anon_client.get("/api")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["message"] == "Rota não encontrada."


def test_body_over_1_mib_with_an_idempotency_key_is_a_413_not_a_500(partner):
    body = b'{"assunto": "' + b"x" * (1024 * 1024 + 10) + b'"}'

    response = partner.post(TICKETS, body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="big-1")

    assert response.status_code == 413
    assert response.json()["errors"]["field"] == "body"
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_deeply_nested_json_is_a_400_on_field_body_not_a_500(partner):
    depth = 100_000
    body = '{"assunto": ' + "[" * depth + "]" * depth + "}"

    response = partner.post(TICKETS, body, content_type="application/json")

    assert response.status_code == 400
    body = response.json()
    assert (body["message"], body["status"], body["errors"]["field"]) == ("JSON inválido.", 400, "body")
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_body_over_one_mebibyte_is_a_413_on_field_body(partner):
    body = json.dumps({**TICKET_BODY, "descricao": "x" * ONE_MIB})

    response = partner.post(TICKETS, body, content_type="application/json")

    assert response.status_code == 413
    assert response.json() == PAYLOAD_TOO_LARGE
    assert_json(response)
    assert row_counts() == {"tickets": 0, "contacts": 0, "replies": 0}


def test_reply_body_over_one_mebibyte_is_a_413_on_field_body(partner, organization):
    ticket = make_ticket(organization)

    response = partner.post(
        f"{TICKETS}/{ticket.pk}/respostas", json.dumps({"mensagem": "x" * ONE_MIB}), content_type="application/json"
    )

    assert response.status_code == 413
    assert response.json() == PAYLOAD_TOO_LARGE
    assert Reply.objects.count() == 0


def test_body_of_exactly_one_mebibyte_is_accepted(partner):
    skeleton = json.dumps({**TICKET_BODY, "enchimento": ""})
    body = skeleton.replace('"enchimento": ""', '"enchimento": "' + "x" * (ONE_MIB - len(skeleton.encode())) + '"')
    assert len(body.encode()) == ONE_MIB

    response = partner.post(TICKETS, body, content_type="application/json")

    assert response.status_code == 201
    assert Ticket.objects.count() == 1


def test_body_one_byte_over_one_mebibyte_is_a_413(partner):
    skeleton = json.dumps({**TICKET_BODY, "enchimento": ""})
    body = skeleton.replace('"enchimento": ""', '"enchimento": "' + "x" * (ONE_MIB + 1 - len(skeleton.encode())) + '"')
    assert len(body.encode()) == ONE_MIB + 1

    response = partner.post(TICKETS, body, content_type="application/json")

    assert response.status_code == 413
    assert response.json() == PAYLOAD_TOO_LARGE
    assert Ticket.objects.count() == 0


@pytest.mark.parametrize("accept", ["text/html", "text/html,application/xhtml+xml,*/*;q=0.8", "application/xml"])
def test_any_accept_header_still_gets_json(partner, accept):
    response = partner.get(TICKETS, HTTP_ACCEPT=accept)

    assert response.status_code == 200
    assert response.json()["success"] is True
    assert_json(response)


@pytest.mark.parametrize(
    ("path", "status"),
    [("/api/v1/nada", 404), (f"{TICKETS}/{uuid.uuid4()}", 404), (f"{TICKETS}?por_pagina=0", 422)],
)
def test_errors_are_json_even_when_html_is_accepted(partner, path, status):
    response = partner.get(path, HTTP_ACCEPT="text/html")

    assert response.status_code == status
    assert response.json()["success"] is False
    assert_json(response)


def test_401_is_json_even_when_html_is_accepted(anon_client, db):
    response = anon_client.get(TICKETS, HTTP_ACCEPT="text/html")

    assert response.status_code == 401
    assert response.json()["errors"]["field"] == "api_key"
    assert_json(response)


@pytest.mark.parametrize("debug", [False, True])
def test_unexpected_exception_in_a_view_is_a_500_envelope_without_a_stack_trace(partner, monkeypatch, settings, debug):
    settings.DEBUG = debug

    def explode(**kwargs):
        raise RuntimeError("detalhe-interno-secreto")

    monkeypatch.setattr("tickets.api.pages.ticket_page", explode)

    response = partner.get(TICKETS)

    assert response.status_code == 500
    assert response.json() == INTERNAL_ERROR
    assert_json(response)
    assert b"detalhe-interno-secreto" not in response.content
    assert b"RuntimeError" not in response.content


def test_unexpected_exception_after_a_write_rolls_the_ticket_back(partner, monkeypatch):
    def explode(ticket):
        raise RuntimeError("falha depois de gravar")

    # The ticket is written; building the answer from it fails.
    monkeypatch.setattr("tickets.api.views.ticket_new_public", explode)

    response = partner.post(
        TICKETS, {**TICKET_BODY, "solicitante": {"nome": "Ana", "external_id": "cli-1"}}, format="json"
    )

    assert response.status_code == 500
    assert response.json() == INTERNAL_ERROR
    assert Ticket.objects.count() == 0
    assert Contact.objects.count() == 0


def test_unexpected_exception_after_a_write_rolls_the_reply_back(partner, organization, monkeypatch):
    ticket = make_ticket(organization)

    def explode(reply):
        raise RuntimeError("falha depois de gravar")

    # The reply is written; building the answer from it fails.
    monkeypatch.setattr("tickets.api.views.reply_row", explode)

    response = partner.post(f"{TICKETS}/{ticket.pk}/respostas", {"mensagem": "Oi"}, format="json")

    assert response.status_code == 500
    assert response.json() == INTERNAL_ERROR
    assert Reply.objects.count() == 0


def test_exception_while_rendering_is_still_a_json_500_envelope(partner, monkeypatch):
    def explode(self, data, accepted_media_type=None, renderer_context=None):
        raise RuntimeError("falha no renderer")

    monkeypatch.setattr("api_framework.renderers.EnvelopeRenderer.render", explode)
    partner.raise_request_exception = False

    response = partner.get(TICKETS)

    assert response.status_code == 500
    assert response.json() == INTERNAL_ERROR
    assert_json(response)


@pytest.mark.parametrize("headers", [{}, {"HTTP_ACCEPT": "text/html"}], ids=["no-accept", "accept-html"])
def test_health_reports_database_and_broker_ok(anon_client, db, headers):
    response = anon_client.get("/api/health", **headers)

    assert response.status_code == 200
    assert response.json() == {
        "success": True,
        "message": "Serviço operacional.",
        "data": {"database": "ok", "broker": "ok"},
        "errors": [],
    }
    assert_json(response)


@pytest.mark.parametrize(
    ("check", "ping", "failure"),
    [("database", "_ping_database", "banco fora do ar"), ("broker", "_ping_broker", "broker fora do ar")],
    ids=["database", "broker"],
)
def test_health_is_503_when_the_database_or_the_broker_is_down(anon_client, db, monkeypatch, check, ping, failure):
    def down(*_args):
        raise ConnectionError(failure)

    monkeypatch.setattr(f"api_framework.views.{ping}", down)

    response = anon_client.get("/api/health")

    assert response.status_code == 503
    assert response.json() == {
        "success": False,
        "message": "Serviço indisponível.",
        "status": 503,
        "data": None,
        "errors": {"field": check, "message": f"{check} indisponível."},
    }
    assert_json(response)
    assert failure.encode() not in response.content


def test_validation_messages_are_correct_portuguese(partner):
    page = partner.get(TICKETS, {"page": "0", "por_pagina": "101"})
    null = partner.post(TICKETS, {"assunto": None}, format="json")

    assert page.json()["errors"] == {
        "page": ["Certifique-se de que este valor seja maior ou igual a 1."],
        "por_pagina": ["Certifique-se de que este valor seja menor ou igual a 100."],
    }
    assert null.json()["errors"]["assunto"] == ["Este campo não pode ser nulo."]
