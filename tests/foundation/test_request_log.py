"""The request log (foundation/request_log.py): one line per request, with its request id, echoed."""

import json
import logging
import re
import uuid

import pytest
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.test import Client

from foundation.logs import formatter
from tests.factories import credential_of, make_ticket

GENERATED_ID = re.compile(r"[0-9a-f]{32}")
TICKETS = "/api/v1/tickets"


@pytest.fixture
def request_lines(caplog):
    """The `request` lines logged so far, as the event dicts structlog hands the formatter."""
    caplog.set_level(logging.INFO, logger="helpdesk.requests")

    def lines() -> list[dict]:
        return [record.msg for record in caplog.records if record.name == "helpdesk.requests"]

    return lines


def only_line(request_lines) -> dict:
    [line] = request_lines()
    return line


@pytest.mark.parametrize("given", ["abc-123", "A.b_C-9", "x" * 64, str(uuid.uuid4())])
def test_a_sane_request_id_is_kept_and_echoed(partner, request_lines, given):
    response = partner.get(TICKETS, HTTP_X_REQUEST_ID=given)

    assert response["X-Request-ID"] == given
    assert only_line(request_lines)["request_id"] == given


@pytest.mark.parametrize(
    "given",
    ["", "x" * 65, "has space", 'quote"d', "new\\nline", "semi;colon", "çedilha", "a/b", "<script>"],
)
def test_an_insane_request_id_is_replaced_by_a_generated_one(partner, request_lines, given):
    response = partner.get(TICKETS, HTTP_X_REQUEST_ID=given)

    echoed = response["X-Request-ID"]
    assert GENERATED_ID.fullmatch(echoed)
    assert echoed != given
    assert only_line(request_lines)["request_id"] == echoed


def test_without_a_request_id_each_request_gets_its_own(partner, request_lines):
    first = partner.get(TICKETS)["X-Request-ID"]
    second = partner.get(TICKETS)["X-Request-ID"]

    assert GENERATED_ID.fullmatch(first) and GENERATED_ID.fullmatch(second)
    assert first != second
    assert [line["request_id"] for line in request_lines()] == [first, second]


def test_a_partner_request_line_has_the_route_status_organization_and_key_prefix(
    partner, api_key, organization, request_lines
):
    ticket = make_ticket(organization)

    response = partner.get(f"{TICKETS}/{ticket.pk}", HTTP_X_REQUEST_ID="pedido-1")

    assert response.status_code == 200
    line = only_line(request_lines)
    duration = line.pop("duration_ms")
    assert isinstance(duration, float) and duration >= 0
    assert line.pop("timestamp")
    assert line == {
        "event": "request",
        "logger": "helpdesk.requests",
        "level": "info",
        "request_id": "pedido-1",
        "method": "GET",
        "route": "/api/v1/tickets/{id}",
        "status": 200,
        "organization_id": str(organization.pk),
        "credential_prefix": credential_of(api_key).key_prefix,
    }
    assert len(line["credential_prefix"]) == 12
    assert str(ticket.pk) not in json.dumps(line), "the raw path reached the line"


def test_a_panel_request_line_has_the_organization_and_user(manager, admin, organization, request_lines):
    response = manager.get(f"/api/webhooks/{uuid.uuid4()}")

    assert response.status_code == 404
    line = only_line(request_lines)
    assert (line["route"], line["status"], line["organization_id"], line["user_id"]) == (
        "/api/webhooks/{id}",
        404,
        str(organization.pk),
        str(admin.pk),
    )
    assert "credential_prefix" not in line


def test_a_refused_credential_is_logged_without_a_caller(anon_client, request_lines):
    response = anon_client.get(TICKETS, HTTP_AUTHORIZATION="Bearer hdk_live_nao-e-uma-chave")

    assert response.status_code == 401
    line = only_line(request_lines)
    assert (line["route"], line["status"]) == (TICKETS, 401)
    assert not {"organization_id", "credential_prefix", "user_id"} & set(line)


def test_an_unknown_api_path_is_logged_as_unmatched(partner, request_lines):
    response = partner.get("/api/nao-existe/segredo-no-caminho")

    assert response.status_code == 404
    line = only_line(request_lines)
    assert (line["route"], line["status"]) == ("unmatched", 404)
    assert "segredo-no-caminho" not in json.dumps(line)


def test_a_signed_avatar_token_in_the_path_is_not_logged(anon_client, request_lines):
    response = anon_client.get("/api/v1/atendentes/avatar/um-token-assinado:qualquer")

    assert response.status_code == 403
    line = only_line(request_lines)
    assert line["route"] == "/api/v1/atendentes/avatar/{token}"
    assert "um-token-assinado" not in json.dumps(line)


def test_the_admin_answers_with_a_request_id_and_logs_its_user(admin, organization, request_lines):
    client = Client()
    client.force_login(admin)

    response = client.get("/admin/", HTTP_X_REQUEST_ID="admin-1")

    assert response.status_code == 200
    assert response["X-Request-ID"] == "admin-1"
    line = only_line(request_lines)
    assert (line["route"], line["user_id"], line["organization_id"]) == ("/admin/", str(admin.pk), str(organization.pk))


def test_an_anonymous_admin_request_is_logged_without_a_user(db, request_lines):
    response = Client().get("/admin/login/")

    assert response.status_code == 200
    assert GENERATED_ID.fullmatch(response["X-Request-ID"])
    line = only_line(request_lines)
    assert line["route"] == "/admin/login/"
    assert "user_id" not in line


@pytest.fixture
def broken_cache(monkeypatch):
    def down(*args, **kwargs):
        raise ConnectionError("cache down")

    for name in ("add", "incr", "get"):
        monkeypatch.setattr(cache, name, down)
    if isinstance(caches["default"], RedisCache):  # the limiter's one-round-trip path talks to the client
        monkeypatch.setattr(caches["default"]._cache, "get_client", down)
    yield
    monkeypatch.undo()


def test_lines_logged_inside_a_request_carry_its_request_id(partner, broken_cache, json_log):
    """The rate limiter's warning (cache down, fail open) is tied to the request that met it."""
    partner.get(TICKETS, HTTP_X_REQUEST_ID="com-aviso")

    lines = json_log()
    warnings = [line for line in lines if line["logger"] == "foundation.ratelimit"]
    assert warnings, f"the rate limiter did not warn, this test proves nothing: {lines}"
    assert {line["request_id"] for line in warnings} == {"com-aviso"}
    assert [line["event"] for line in lines if line["logger"] == "helpdesk.requests"] == ["request"]


def test_no_request_id_outlives_its_request(partner, json_log):
    partner.get(TICKETS, HTTP_X_REQUEST_ID="terminado")
    logging.getLogger("helpdesk.test").warning("depois")

    assert "request_id" not in json_log()[-1]


def test_the_json_format_writes_one_object_a_line_and_the_console_format_readable_text():
    record = logging.LogRecord("helpdesk.test", logging.WARNING, __file__, 1, "aviso %s", ("um",), None)

    as_json = formatter("json").format(record)
    as_text = formatter("console").format(record)

    assert "\n" not in as_json
    parsed = json.loads(as_json)
    assert (parsed["event"], parsed["level"], parsed["logger"]) == ("aviso um", "warning", "helpdesk.test")
    assert "aviso um" in as_text and "warning" in as_text and not as_text.startswith("{")
    with pytest.raises(ValueError, match="LOG_FORMAT must be json or console"):
        formatter("xml")


def test_djangos_error_line_names_the_route_not_a_path_with_a_signed_token(anon_client, json_log, monkeypatch):
    from helpdesk.api.avatars import AvatarViewSet

    def broken(self, request, token):
        raise RuntimeError("inesperado")

    monkeypatch.setattr(AvatarViewSet, "retrieve", broken)

    response = anon_client.get("/api/v1/atendentes/avatar/um-token-assinado:qualquer")

    assert response.status_code == 500
    lines = json_log()
    [error] = [line for line in lines if line["logger"] == "django.request"]
    assert error["event"] == "Internal Server Error: /api/v1/atendentes/avatar/{token}"
    assert error["request_id"] == response["X-Request-ID"], "Django's error line is not tied to its request"
    assert "um-token-assinado" not in json.dumps(lines)
