"""The envelope's bytes, which the contract tests (they compare parsed JSON) do not pin: what an API
view writes, what is answered outside any view (Django's handlers, gunicorn's own refusals), and a
replayed Idempotency-Key answer."""

import json
import runpy
import socket

from django.conf import settings
from django.db import connection
from django.test import Client

from tests.contract import TICKET_BODY


def test_an_api_view_writes_compact_utf8_json(anon_client, db):
    response = anon_client.get("/api/health")

    assert (
        response.content
        == (
            '{"success":true,"message":"Serviço operacional.","data":{"database":"ok","broker":"ok"},"errors":[]}'
        ).encode()
    )


def test_an_error_of_an_api_view_is_compact_utf8_json(anon_client, db):
    response = anon_client.post("/api/health", {}, format="json")

    assert (
        response.content
        == (
            '{"success":false,"message":"Método não permitido.","status":405,"data":null,'
            '"errors":{"field":"method","message":"O método HTTP não é aceito neste endereço."}}'
        ).encode()
    )


def test_a_validation_error_is_compact_utf8_json(partner):
    response = partner.post("/api/v1/tickets", {"assunto": "Impressora", "descricao": "x"}, format="json")

    assert (
        response.content
        == (
            '{"success":false,"message":"Erro de validação","errors":{"solicitante":["Este campo é obrigatório."]}}'
        ).encode()
    )


def test_line_separators_are_escaped_as_drf_escapes_them(partner, organization):
    ticket = partner.post("/api/v1/tickets", TICKET_BODY, format="json").json()["data"]

    response = partner.post(f"/api/v1/tickets/{ticket['id']}/respostas", {"mensagem": "a\u2028b\u2029c"}, format="json")

    assert b'"mensagem":"a\\u2028b\\u2029c"' in response.content


def test_an_answer_outside_any_view_keeps_json_dumps_spacing(anon_client, db):
    response = anon_client.get("/api/nada")

    assert (
        response.content
        == (
            '{"success": false, "message": "Rota não encontrada.", "status": 404, "data": null, '
            '"errors": {"field": "path", "message": "Não existe recurso neste endereço."}}'
        ).encode()
    )
    assert response["Content-Type"] == "application/json"


def test_a_host_refused_before_any_view_keeps_json_dumps_spacing(db):
    response = Client().get("/api/v1/tickets", HTTP_HOST="evil.example")

    assert response.status_code == 400
    assert (
        response.content
        == (
            '{"success": false, "message": "Requisição inválida.", "status": 400, "data": null, '
            '"errors": {"field": "Host", "message": "O endereço pedido não é servido por este servidor."}}'
        ).encode()
    )


def assert_replays(retry, first) -> None:
    """The first answer again: byte for byte where the JSON column keeps key order (SQLite). PostgreSQL's
    jsonb stores an object's keys shortest first, so there a replay is the same JSON in that key order."""
    assert retry["Idempotent-Replayed"] == "true"
    assert (retry.status_code, retry["Content-Type"]) == (first.status_code, "application/json")
    if connection.vendor == "postgresql":
        assert json.loads(retry.content) == json.loads(first.content)
        assert list(json.loads(retry.content)) == sorted(json.loads(first.content), key=lambda key: (len(key), key))
    else:
        assert retry.content == first.content


def test_a_replayed_answer_is_the_first_one_again(partner, organization):
    first = partner.post("/api/v1/tickets", TICKET_BODY, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    retry = partner.post("/api/v1/tickets", TICKET_BODY, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert retry.status_code == 201
    assert_replays(retry, first)


def test_a_replayed_reply_with_line_separators_is_the_first_one_again(partner, organization):
    ticket = partner.post("/api/v1/tickets", TICKET_BODY, format="json").json()["data"]
    url = f"/api/v1/tickets/{ticket['id']}/respostas"

    first = partner.post(url, {"mensagem": "a\u2028b"}, format="json", HTTP_IDEMPOTENCY_KEY="r-1")
    retry = partner.post(url, {"mensagem": "a\u2028b"}, format="json", HTTP_IDEMPOTENCY_KEY="r-1")

    assert retry.status_code == 201
    assert_replays(retry, first)


def test_a_replayed_error_is_the_first_one_again(partner, organization):
    first = partner.post("/api/v1/tickets", {"assunto": ""}, format="json", HTTP_IDEMPOTENCY_KEY="bad-1")
    retry = partner.post("/api/v1/tickets", {"assunto": ""}, format="json", HTTP_IDEMPOTENCY_KEY="bad-1")

    assert retry.status_code == 422
    assert_replays(retry, first)


def test_gunicorns_own_refusal_is_written_with_json_dumps_spacing(monkeypatch):
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    write_error = runpy.run_path(str(settings.BASE_DIR / "gunicorn.conf.py"))["_write_error"]
    ours, theirs = socket.socketpair()
    with ours, theirs:
        write_error(ours, 414, "Request-URI Too Long", "the line")
        ours.shutdown(socket.SHUT_WR)
        answer = theirs.recv(65536)

    body = (
        '{"success": false, "message": "URI muito longa.", "status": 414, "data": null, '
        '"errors": {"field": "path", "message": "A linha da requisição excede o limite do servidor."}}'
    ).encode()
    assert answer == (
        b"HTTP/1.1 414 Request-URI Too Long\r\nConnection: close\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


def test_gunicorns_own_server_error_is_the_500_envelope(monkeypatch):
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    write_error = runpy.run_path(str(settings.BASE_DIR / "gunicorn.conf.py"))["_write_error"]
    ours, theirs = socket.socketpair()
    with ours, theirs:
        write_error(ours, 500, "Internal Server Error", "")
        ours.shutdown(socket.SHUT_WR)
        answer = theirs.recv(65536)

    assert answer.partition(b"\r\n\r\n")[2] == (
        b'{"success": false, "message": "Erro interno do servidor.", "status": 500, "data": null, '
        b'"errors": {"field": "server", "message": "Ocorreu um erro inesperado. Tente novamente."}}'
    )
