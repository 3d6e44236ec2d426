"""A database that is down or does not answer: every route says so with a 503, writes nothing,
and the web process is never held waiting (findings 13 and 14 of the security review)."""

import contextlib
import socket
import time
from types import SimpleNamespace
from unittest import mock

import pytest
from django.db import OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client

from foundation.db.postgresql import base as postgresql_base
from tests.assertions import row_counts
from tests.contract import DATABASE_DOWN, TICKET_BODY
from tests.factories import make_ticket


@contextlib.contextmanager
def database_down():
    """Every new query fails as it does when PostgreSQL is stopped: at connect time."""

    def refuse(self):
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed: Connection refused')

    with mock.patch.object(BaseDatabaseWrapper, "ensure_connection", refuse):
        yield


def unavailable(client, method: str, path: str, **kwargs):
    client.raise_request_exception = False  # what a real server does: the handler answers
    with database_down():
        return getattr(client, method)(path, **kwargs)


def assert_database_down(response):
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response["Retry-After"] == "5"
    assert response.json() == DATABASE_DOWN
    assert b"Connection refused" not in response.content


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("get", "/api/v1/tickets", {}),
        ("get", "/api/v1/atendentes", {}),
        ("post", "/api/v1/tickets", {"data": TICKET_BODY, "format": "json"}),
    ],
    ids=["list", "agents", "create"],
)
def test_the_partner_api_answers_503_when_the_database_is_down(partner, method, path, kwargs):
    assert_database_down(unavailable(partner, method, path, **kwargs))


def test_a_partner_write_in_its_transaction_answers_503(partner, organization):
    """A write opens its transaction before any view code: the error comes from Django's handler."""
    ticket = make_ticket(organization)

    response = unavailable(
        partner, "post", f"/api/v1/tickets/{ticket.id}/respostas", data={"conteudo": "Oi"}, format="json"
    )

    assert_database_down(response)


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("get", "/api/tickets", {}),
        ("get", "/api/webhooks", {}),
        ("post", "/api/api-keys", {"data": {"nome": "Integração"}, "format": "json"}),
    ],
    ids=["panel-list", "management-list", "management-create"],
)
def test_the_panel_and_management_apis_answer_503_when_the_database_is_down(manager, method, path, kwargs):
    assert_database_down(unavailable(manager, method, path, **kwargs))


def test_login_answers_503_when_the_database_is_down(anon_client, db):
    response = unavailable(
        anon_client, "post", "/api/auth/login", data={"email": "a@example.com", "password": "x"}, format="json"
    )

    assert_database_down(response)


def test_health_says_retry_after_too(anon_client, db):
    response = unavailable(anon_client, "get", "/api/health")

    assert_database_down(response)


def test_the_admin_answers_a_503_page_when_the_database_is_down(admin):
    browser = Client(raise_request_exception=False)
    browser.force_login(admin)

    with database_down():
        response = browser.get("/admin/tickets/ticket/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "Serviço indisponível" in response.content.decode()
    assert b"Connection refused" not in response.content


def test_a_connection_lost_mid_write_leaves_nothing_behind(partner, organization, monkeypatch):
    """The contact is written, then the server goes away: the request's transaction takes it back."""
    from tickets import services

    real_upsert = services.contact_upsert

    def upsert_then_lose_the_server(**kwargs):
        real_upsert(**kwargs)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, "contact_upsert", upsert_then_lose_the_server)
    partner.raise_request_exception = False
    before = row_counts()

    response = partner.post("/api/v1/tickets", TICKET_BODY, format="json")

    assert_database_down(response)
    assert row_counts() == before
    monkeypatch.undo()
    created = partner.post("/api/v1/tickets", TICKET_BODY, format="json")
    assert created.json()["data"]["numero"] == 1  # the failed request did not use a number


def test_unexpected_errors_stay_500(partner, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr("tickets.services.contact_upsert", broken)
    partner.raise_request_exception = False

    response = partner.post("/api/v1/tickets", TICKET_BODY, format="json")

    assert response.status_code == 500
    assert "Retry-After" not in response


def test_a_server_that_does_not_answer_fails_the_query_at_the_answer_timeout(postgres_only):
    """statement_timeout cannot help when the server is frozen; the client's own deadline does."""
    settings_dict = {**connections["default"].settings_dict, "ANSWER_TIMEOUT": 0.5, "OPTIONS": {"connect_timeout": 5}}
    bounded = type(connections["default"])(settings_dict, alias="bounded")
    try:
        started = time.monotonic()
        with pytest.raises(OperationalError, match="did not answer within 0.5 s"), bounded.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(5)")  # a server busy (or frozen) past the deadline
        waited = time.monotonic() - started

        assert waited < 4  # the statement itself takes 5 s
        assert not bounded.is_usable()
    finally:
        bounded.close()


def test_without_an_answer_timeout_a_slow_statement_completes(postgres_only):
    settings_dict = {**connections["default"].settings_dict, "OPTIONS": {"connect_timeout": 5}}
    settings_dict.pop("ANSWER_TIMEOUT", None)
    unbounded = type(connections["default"])(settings_dict, alias="unbounded")
    try:
        with unbounded.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(1), 42")
            assert cursor.fetchone()[1] == 42
    finally:
        unbounded.close()


@pytest.fixture
def frozen_address():
    """A server frozen as SIGSTOP leaves one: the kernel completes the TCP handshake (the listen
    backlog), nothing ever answers."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener.getsockname()[1]


@pytest.fixture
def probes(monkeypatch) -> list:
    calls: list = []
    real = postgresql_base.server_answers

    def counting(info, timeout):
        calls.append(timeout)
        return real(info, timeout)

    monkeypatch.setattr(postgresql_base, "server_answers", counting)
    return calls


def probing_connection(alias: str, **bounds):
    settings_dict = {**connections["default"].settings_dict, "OPTIONS": {"connect_timeout": 5}, **bounds}
    return type(connections["default"])(settings_dict, alias=alias)


def freeze_the_server_for_probes(monkeypatch, frozen_port: int) -> None:
    """The probe of a new connection goes to the frozen address: what a frozen PostgreSQL does to it,
    while the statement under test keeps running on the real server."""
    real = postgresql_base.server_answers
    frozen = SimpleNamespace(host="127.0.0.1", hostaddr="127.0.0.1", port=frozen_port)
    monkeypatch.setattr(postgresql_base, "server_answers", lambda info, timeout: real(frozen, timeout))


def test_a_new_connection_is_answered_by_a_live_server_and_not_by_a_frozen_one(postgres_only, frozen_address):
    with connections["default"].cursor():
        live = connections["default"].connection.info
    frozen = SimpleNamespace(host="127.0.0.1", hostaddr="127.0.0.1", port=frozen_address)

    started = time.monotonic()
    assert postgresql_base.server_answers(live, timeout=1) is True
    assert postgresql_base.server_answers(frozen, timeout=0.3) is False
    assert time.monotonic() - started < 1


def test_a_slow_statement_on_a_server_that_answers_keeps_its_budget(postgres_only, probes):
    """Slow is not frozen: the probes find the server alive and the statement completes."""
    bounded = probing_connection("slow", PROBE_AFTER=0.3, ANSWER_TIMEOUT=5)
    try:
        with bounded.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(1.2), 42")
            assert cursor.fetchone()[1] == 42
    finally:
        bounded.close()

    assert len(probes) >= 2  # one each 0.3 s of waiting, each found an answer


def test_a_statement_on_a_server_that_takes_no_new_connection_fails_after_one_probe(
    postgres_only, frozen_address, monkeypatch
):
    """A frozen server never enforces statement_timeout: the probe's silence ends the wait."""
    freeze_the_server_for_probes(monkeypatch, frozen_address)
    bounded = probing_connection("frozen", PROBE_AFTER=0.3, ANSWER_TIMEOUT=10)
    try:
        started = time.monotonic()
        with pytest.raises(OperationalError, match="takes no new connection"), bounded.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(5)")

        assert time.monotonic() - started < 1.5  # 0.3 s of waiting, 0.3 s of probing
    finally:
        bounded.close()


def test_the_request_that_found_the_server_frozen_does_not_connect_again(postgres_only, frozen_address, monkeypatch):
    """Django reconnects to roll back or to check health: each attempt would wait a connect timeout
    more. The next request (close_if_unusable_or_obsolete at its start) tries the server again."""
    freeze_the_server_for_probes(monkeypatch, frozen_address)
    bounded = probing_connection("frozen-again", PROBE_AFTER=0.3)
    try:
        with pytest.raises(OperationalError), bounded.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(5)")
        bounded.close()
        connects = []
        monkeypatch.setattr(postgresql_base._Psycopg, "connect", staticmethod(lambda **params: connects.append(params)))

        with pytest.raises(OperationalError, match="not connecting again"), bounded.cursor():
            pass
        assert connects == []
        monkeypatch.undo()
        bounded.close_if_unusable_or_obsolete()
        with bounded.cursor() as cursor:
            cursor.execute("SELECT 42")
            assert cursor.fetchone() == (42,)
    finally:
        bounded.close()
