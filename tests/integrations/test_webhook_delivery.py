"""The delivery engine: claim, signed POST (stubbed), attempt log, retries, 410, leases, the due dispatcher."""

import hashlib
import hmac
import json
import logging
import socket
import threading
from datetime import timedelta

import pytest
import requests
from django.utils import timezone
from requests_hardened.ip_filter import InvalidIPAddress
from standardwebhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError
from urllib3.exceptions import MaxRetryError, NameResolutionError

from integrations import delivery as delivery_module
from integrations import tasks, webhook_urls
from integrations.delivery import deliveries_claim_due, delivery_attempt, delivery_claim
from integrations.events import delivery_resend
from integrations.models import (
    DeliveryStatus,
    EventKind,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEvent,
)
from integrations.services import webhook_delete, webhook_update
from tests.factories import make_agent_reply, make_test_delivery, make_ticket, make_webhook
from tickets.services import ticket_update
from tools.ports import free_port

URL = "http://127.0.0.1:9/helpdesk"
STEP_SECONDS = 0.25  # what each fake POST "takes", exact in binary floating point

pytestmark = pytest.mark.usefixtures("queued")


class FakeClock:
    """Stands in for `time` inside integrations.delivery: a fixed wall clock, a monotonic clock we advance."""

    def __init__(self, now: int):
        self.now = now
        self.ticks = 1000.0

    def time(self) -> float:
        return float(self.now)

    def monotonic(self) -> float:
        return self.ticks


class FakeRaw:
    """A stream: each read1 hands out what is left, up to `amount`, `chunk` bytes at a time."""

    def __init__(self, content: bytes, chunk: int | None = None, clock: "FakeClock | None" = None, pause: float = 0.0):
        self.content = content
        self.position = 0
        self.chunk = chunk
        self.clock = clock
        self.pause = pause
        self.reads: list[tuple] = []

    def read1(self, amount=None, decode_content=False) -> bytes:
        self.reads.append((amount, decode_content))
        if self.clock is not None:
            self.clock.ticks += self.pause
        size = len(self.content) if amount is None else amount
        if self.chunk is not None:
            size = min(size, self.chunk)
        data = self.content[self.position : self.position + size]
        self.position += len(data)
        return data


class FakeResponse:
    def __init__(self, status_code: int, content: bytes = b"", headers: dict | None = None):
        self.status_code = status_code
        self.headers = headers or {}
        self.raw = FakeRaw(content)
        self.closed = False

    def close(self) -> None:
        self.closed = True


class FakeHTTP:
    """The outbound side: answers queued with respond(), every POST recorded in calls."""

    def __init__(self, clock: FakeClock):
        self.clock = clock
        self.answers: list = []
        self.calls: list[dict] = []
        self.responses: list[FakeResponse] = []

    def respond(self, *answers) -> None:
        self.answers.extend(answers)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> bool:
        return False

    def post(self, url, data=None, headers=None, **kwargs):
        self.calls.append({"url": url, "body": data, "headers": dict(headers), "kwargs": kwargs})
        self.clock.ticks += STEP_SECONDS
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        self.responses.append(answer)
        return answer


@pytest.fixture(autouse=True)
def delivery_settings(settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_RETRY_DELAYS = [60, 300]
    settings.WEBHOOK_TIMEOUT = 10.0
    settings.WEBHOOK_REQUEUE_AFTER = 60.0


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock(int(timezone.now().timestamp()))
    monkeypatch.setattr(delivery_module, "time", fake)
    return fake


@pytest.fixture
def http(monkeypatch, clock) -> FakeHTTP:
    fake = FakeHTTP(clock)
    monkeypatch.setattr(delivery_module, "_session", lambda: fake)
    return fake


@pytest.fixture
def webhook(organization) -> Webhook:
    return make_webhook(organization, url=URL, events=["ticket.resposta_publica"])


@pytest.fixture
def delivery(organization, agent, webhook) -> WebhookDelivery:
    """The pending delivery of a real ticket.resposta_publica event."""
    make_agent_reply(make_ticket(organization), agent, body="Olá Maria, o pedido sai hoje.")
    return WebhookDelivery.objects.select_related("event", "webhook").get()


def attempt(delivery_row: WebhookDelivery, expected_attempts: int | None = None):
    expected = delivery_row.attempt_count if expected_attempts is None else expected_attempts
    return delivery_attempt(delivery_id=delivery_row.pk, expected_attempts=expected)


def stored(delivery_row: WebhookDelivery) -> WebhookDelivery:
    return WebhookDelivery.objects.get(pk=delivery_row.pk)


def attempts_of(delivery_row: WebhookDelivery) -> list[dict]:
    return list(
        WebhookDeliveryAttempt.objects.filter(delivery_id=delivery_row.pk)
        .order_by("number")
        .values("number", "status_code", "duration_ms", "error", "response_excerpt", "succeeded")
    )


def service_signatures(header: str) -> tuple[str, list[str]]:
    fields = [item.split("=", 1) for item in header.split(",")]
    assert [key for key, _ in fields][0] == "t"
    assert all(key in ("t", "v1") for key, _ in fields)
    return fields[0][1], [value for key, value in fields if key == "v1"]


def hex_hmac(secret: str, timestamp: str, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


# --- Success -------------------------------------------------------------------------------


@pytest.mark.parametrize("status_code", [200, 201, 202, 204, 299])
def test_2xx_marks_the_delivery_sucesso_and_logs_one_attempt(delivery, http, status_code):
    http.respond(FakeResponse(status_code, b'{"recebido":true}'))
    before = timezone.now()

    result = attempt(delivery)

    after = timezone.now()
    row = stored(delivery)
    assert result.pk == delivery.pk
    assert (row.status, row.attempt_count, row.next_attempt_at, row.lease_expires_at) == (
        DeliveryStatus.SUCCEEDED,
        1,
        None,
        None,
    )
    assert before <= row.last_attempt_at <= after
    assert attempts_of(delivery) == [
        {
            "number": 1,
            "status_code": status_code,
            "duration_ms": 250,
            "error": "",
            "response_excerpt": '{"recebido":true}',
            "succeeded": True,
        }
    ]
    assert row.attempts.get().attempted_at == row.last_attempt_at
    assert len(http.calls) == 1
    assert http.responses[0].closed is True


def test_delivery_posts_the_stored_body_with_the_documented_headers(delivery, http, clock):
    http.respond(FakeResponse(200))

    attempt(delivery)

    [call] = http.calls
    body = delivery.event.body.encode("utf-8")
    assert call["url"] == URL
    assert call["body"] == body
    assert call["kwargs"] == {"stream": True, "allow_redirects": False}
    timestamp = str(clock.now)
    assert call["headers"] == {
        "Content-Type": "application/json",
        "X-Service-Event": "ticket.resposta_publica",
        "X-Service-Delivery": str(delivery.pk),
        "X-Service-Signature": f"t={timestamp},v1={hex_hmac(delivery.webhook.secret, timestamp, body)}",
        "webhook-id": str(delivery.pk),
        "webhook-timestamp": timestamp,
        "webhook-signature": call["headers"]["webhook-signature"],
    }
    assert json.loads(call["body"])["id"] == str(delivery.event_id)


def test_x_service_signature_verifies_with_an_hmac_of_the_whole_secret(delivery, http):
    http.respond(FakeResponse(200))

    attempt(delivery)

    [call] = http.calls
    timestamp, candidates = service_signatures(call["headers"]["X-Service-Signature"])
    secret = delivery.webhook.secret
    assert secret.startswith("whsec_")
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + call["body"], hashlib.sha256).hexdigest()
    assert len(candidates) == 1
    assert hmac.compare_digest(candidates[0], expected)
    tampered = hex_hmac(secret, timestamp, call["body"] + b" ")
    assert candidates[0] != tampered
    assert candidates[0] != hex_hmac(secret.removeprefix("whsec_"), timestamp, call["body"])


def test_standard_webhooks_headers_verify_with_the_standardwebhooks_library(delivery, http):
    http.respond(FakeResponse(200))

    attempt(delivery)

    [call] = http.calls
    verified = StandardWebhook(delivery.webhook.secret).verify(call["body"], call["headers"])
    assert verified == json.loads(delivery.event.body)
    assert len(call["headers"]["webhook-signature"].split(" ")) == 1
    with pytest.raises(WebhookVerificationError):
        StandardWebhook(make_webhook(delivery.webhook.organization, name="Outro", url=URL).secret).verify(
            call["body"], call["headers"]
        )
    with pytest.raises(WebhookVerificationError):
        StandardWebhook(delivery.webhook.secret).verify(call["body"] + b" ", call["headers"])


# --- Failures and retries ---------------------------------------------------------------------


def test_500_keeps_the_delivery_pending_and_retries_after_the_first_delay(delivery, http):
    http.respond(FakeResponse(500, b"erro interno"))
    before = timezone.now()

    attempt(delivery)

    after = timezone.now()
    row = stored(delivery)
    assert (row.status, row.attempt_count, row.lease_expires_at) == (DeliveryStatus.PENDING, 1, None)
    assert before + timedelta(seconds=60) <= row.next_attempt_at <= after + timedelta(seconds=60)
    assert attempts_of(delivery) == [
        {
            "number": 1,
            "status_code": 500,
            "duration_ms": 250,
            "error": "http_500",
            "response_excerpt": "erro interno",
            "succeeded": False,
        }
    ]


def test_failures_back_off_by_the_configured_delays_then_the_delivery_falhou(delivery, http):
    http.respond(FakeResponse(500), FakeResponse(503), FakeResponse(500))

    attempt(delivery, 0)
    before = timezone.now()
    attempt(delivery, 1)
    after = timezone.now()
    second = stored(delivery)
    attempt(delivery, 2)

    assert (second.status, second.attempt_count) == (DeliveryStatus.PENDING, 2)
    assert before + timedelta(seconds=300) <= second.next_attempt_at <= after + timedelta(seconds=300)
    row = stored(delivery)
    assert (row.status, row.attempt_count, row.next_attempt_at) == (DeliveryStatus.FAILED, 3, None)
    assert [(a["number"], a["status_code"], a["succeeded"]) for a in attempts_of(delivery)] == [
        (1, 500, False),
        (2, 503, False),
        (3, 500, False),
    ]
    # every retry is the same delivery: same id, same bytes
    assert {call["headers"]["X-Service-Delivery"] for call in http.calls} == {str(delivery.pk)}
    assert {call["body"] for call in http.calls} == {delivery.event.body.encode()}

    assert attempt(delivery, 3) is None
    assert len(http.calls) == 3
    assert len(attempts_of(delivery)) == 3


def test_the_number_of_attempts_is_the_number_of_delays_plus_one(delivery, http, settings):
    settings.WEBHOOK_RETRY_DELAYS = [1, 2, 3, 4]
    http.respond(*[FakeResponse(500) for _ in range(5)])

    for expected in range(5):
        attempt(delivery, expected)

    row = stored(delivery)
    assert (row.status, row.attempt_count) == (DeliveryStatus.FAILED, 5)
    assert len(http.calls) == 5


@pytest.mark.parametrize("status_code", [301, 302, 307, 308])
def test_a_redirect_is_a_failure_and_is_not_followed(delivery, http, status_code):
    http.respond(FakeResponse(status_code, headers={"Location": "http://127.0.0.1:9/outro"}))

    attempt(delivery)

    row = stored(delivery)
    assert (row.status, row.attempt_count) == (DeliveryStatus.PENDING, 1)
    assert attempts_of(delivery) == [
        {
            "number": 1,
            "status_code": status_code,
            "duration_ms": 250,
            "error": f"http_{status_code}",
            "response_excerpt": "",
            "succeeded": False,
        }
    ]
    assert len(http.calls) == 1
    assert http.calls[0]["kwargs"]["allow_redirects"] is False


def test_410_fails_the_delivery_deactivates_the_webhook_and_cancels_its_pending_deliveries(
    organization, delivery, webhook, http
):
    sibling = make_test_delivery(webhook)
    other_webhook = make_webhook(organization, name="Outro", url=URL)
    unrelated = make_test_delivery(other_webhook)
    http.respond(FakeResponse(410, b"gone"))

    attempt(delivery)

    row = stored(delivery)
    assert (row.status, row.attempt_count, row.next_attempt_at) == (DeliveryStatus.FAILED, 1, None)
    assert attempts_of(delivery)[0]["status_code"] == 410
    assert attempts_of(delivery)[0]["succeeded"] is False
    webhook.refresh_from_db()
    assert webhook.is_active is False
    assert (stored(sibling).status, stored(sibling).next_attempt_at) == (DeliveryStatus.CANCELLED, None)
    assert stored(unrelated).status == DeliveryStatus.PENDING
    other_webhook.refresh_from_db()
    assert other_webhook.is_active is True

    assert attempt(sibling) is None
    assert len(http.calls) == 1
    assert attempts_of(sibling) == []


@pytest.mark.parametrize(
    ("failure", "error"),
    [
        (requests.Timeout("read timed out"), "timeout"),
        (requests.ConnectionError("conexão recusada"), "conexao"),
        (InvalidIPAddress("10.0.0.5"), "endereco_bloqueado"),
    ],
    ids=["timeout", "connection-error", "refused-address"],
)
def test_an_attempt_without_an_answer_is_recorded_without_a_status_code(delivery, http, failure, error):
    http.respond(failure)

    attempt(delivery)

    row = stored(delivery)
    assert (row.status, row.attempt_count) == (DeliveryStatus.PENDING, 1)
    assert attempts_of(delivery) == [
        {
            "number": 1,
            "status_code": None,
            "duration_ms": 250,
            "error": error,
            "response_excerpt": "",
            "succeeded": False,
        }
    ]


def requests_failure(url: str) -> requests.RequestException:
    """What requests itself raises for `url` (on this machine), wrapping what the socket saw."""
    with pytest.raises(requests.RequestException) as raised:
        requests.post(url, timeout=5)
    return raised.value


@pytest.fixture
def closed_port() -> int:
    return free_port()


@pytest.fixture
def plain_tcp_port():
    """A server that answers plain text to whatever comes, a TLS handshake included."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def answer():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.recv(4096)
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def name_not_resolved() -> requests.ConnectionError:
    """What requests raises when the host does not resolve, as urllib3 builds it."""
    reason = NameResolutionError("hooks.example.com", None, socket.gaierror(-2, "Name or service not known"))
    return requests.ConnectionError(MaxRetryError(None, "/helpdesk", reason))


@pytest.mark.parametrize(
    ("failure", "recorded", "hidden"),
    [
        (lambda port, _: requests_failure(f"http://127.0.0.1:{port}/x"), "conexao_recusada", "Connection refused"),
        (lambda _, port: requests_failure(f"https://127.0.0.1:{port}/x"), "tls", "SSL"),
        (lambda *_: name_not_resolved(), "dns", "Name or service not known"),
        (lambda *_: requests.ConnectionError(ConnectionResetError(104, "reset by 10.9.8.7")), "conexao", "10.9.8.7"),
    ],
    ids=["refused", "tls", "dns", "reset"],
)
def test_a_failure_is_recorded_and_listed_as_its_class_never_its_text(
    delivery, http, manager, closed_port, plain_tcp_port, failure, recorded, hidden
):
    error = failure(closed_port, plain_tcp_port)
    assert hidden in repr(error)  # what the service's network saw
    http.respond(error)

    attempt(delivery)

    [logged] = attempts_of(delivery)
    assert (logged["status_code"], logged["error"], logged["response_excerpt"]) == (None, recorded, "")
    listed = manager.get(f"/api/webhooks/{delivery.webhook_id}/entregas")
    assert listed.status_code == 200
    assert listed.json()["data"]["data"][0]["historico"][0]["erro"] == recorded
    assert hidden not in listed.content.decode()


def test_the_url_is_checked_again_at_delivery_time(organization, http, monkeypatch, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    monkeypatch.setattr(webhook_urls, "resolve_host", lambda host, port: ["93.184.216.34"])
    webhook = make_webhook(organization, url="https://hooks.example.com/helpdesk")
    row = make_test_delivery(webhook)
    monkeypatch.setattr(webhook_urls, "resolve_host", lambda host, port: ["10.0.0.5"])

    attempt(row)

    assert http.calls == []
    assert stored(row).status == DeliveryStatus.PENDING
    [logged] = attempts_of(row)
    assert logged["status_code"] is None
    assert logged["error"] == "endereco_bloqueado"


def test_the_response_excerpt_keeps_at_most_1024_bytes(delivery, http):
    response = FakeResponse(200, b"a" * 1000 + b"b" * 4000)
    http.respond(response)

    attempt(delivery)

    assert response.raw.reads
    assert all(amount is not None and amount <= 1024 for amount, _ in response.raw.reads)
    assert all(decode is True for _, decode in response.raw.reads)
    excerpt = attempts_of(delivery)[0]["response_excerpt"]
    assert excerpt == "a" * 1000 + "b" * 24
    assert response.closed is True


# --- Never twice, never stale ---------------------------------------------------------------


def test_a_succeeded_delivery_is_never_sent_again(delivery, http):
    http.respond(FakeResponse(200))
    attempt(delivery, 0)

    assert attempt(delivery, 0) is None
    assert attempt(delivery, 1) is None

    assert len(http.calls) == 1
    row = stored(delivery)
    assert (row.status, row.attempt_count) == (DeliveryStatus.SUCCEEDED, 1)
    assert len(attempts_of(delivery)) == 1


def test_a_stale_message_sends_nothing(delivery, http):
    before = stored(delivery)

    assert attempt(delivery, 1) is None

    assert http.calls == []
    after = stored(delivery)
    assert (after.status, after.attempt_count, after.next_attempt_at, after.lease_expires_at) == (
        DeliveryStatus.PENDING,
        0,
        before.next_attempt_at,
        None,
    )
    assert attempts_of(delivery) == []


def test_a_message_from_before_a_retry_sends_nothing(delivery, http):
    http.respond(FakeResponse(500))
    attempt(delivery, 0)
    retry_at = stored(delivery).next_attempt_at

    assert attempt(delivery, 0) is None

    assert len(http.calls) == 1
    row = stored(delivery)
    assert (row.status, row.attempt_count, row.next_attempt_at) == (DeliveryStatus.PENDING, 1, retry_at)
    assert len(attempts_of(delivery)) == 1


def test_a_delivery_under_an_unexpired_lease_is_not_sent_by_a_second_claim(delivery, http):
    claimed = delivery_claim(delivery_id=delivery.pk, expected_attempts=0)
    assert claimed is not None
    leased = stored(delivery)
    assert leased.status == DeliveryStatus.SENDING
    assert leased.lease_expires_at > timezone.now()

    assert delivery_claim(delivery_id=delivery.pk, expected_attempts=0) is None
    assert attempt(delivery, 0) is None

    assert http.calls == []
    after = stored(delivery)
    assert (after.status, after.attempt_count, after.lease_expires_at) == (
        DeliveryStatus.SENDING,
        0,
        leased.lease_expires_at,
    )
    assert attempts_of(delivery) == []


def test_an_expired_lease_is_claimed_again_with_the_same_delivery_id(delivery, http):
    assert delivery_claim(delivery_id=delivery.pk, expected_attempts=0) is not None
    WebhookDelivery.objects.filter(pk=delivery.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    http.respond(FakeResponse(200))

    attempt(delivery, 0)

    assert [call["headers"]["X-Service-Delivery"] for call in http.calls] == [str(delivery.pk)]
    row = stored(delivery)
    assert (row.status, row.attempt_count, row.lease_expires_at) == (DeliveryStatus.SUCCEEDED, 1, None)


def test_a_deactivated_webhooks_pending_delivery_is_cancelled_at_claim(delivery, webhook, http):
    # Bypass webhook_update (which cancels pending deliveries itself) to test the claim's own check.
    Webhook.objects.filter(pk=webhook.pk).update(is_active=False)

    assert attempt(delivery) is None

    assert http.calls == []
    row = stored(delivery)
    assert (row.status, row.attempt_count, row.next_attempt_at) == (DeliveryStatus.CANCELLED, 0, None)
    assert attempts_of(delivery) == []


def test_deactivating_a_webhook_cancels_its_pending_deliveries_only(delivery, webhook, http):
    succeeded = make_test_delivery(webhook)
    http.respond(FakeResponse(200))
    attempt(succeeded)

    webhook_update(webhook=webhook, is_active=False)

    assert (stored(delivery).status, stored(delivery).next_attempt_at) == (DeliveryStatus.CANCELLED, None)
    assert stored(succeeded).status == DeliveryStatus.SUCCEEDED
    assert attempt(delivery) is None
    assert len(http.calls) == 1


def test_a_deleted_webhooks_deliveries_are_gone(organization, delivery, webhook, http):
    other = make_webhook(organization, name="Outro", url=URL)
    kept = WebhookDelivery.objects.create(webhook=other, event=delivery.event)
    http.respond(FakeResponse(500))
    attempt(delivery)

    webhook_delete(webhook=webhook)

    assert not WebhookDelivery.objects.filter(pk=delivery.pk).exists()
    assert not WebhookDeliveryAttempt.objects.filter(delivery_id=delivery.pk).exists()
    assert attempt(delivery, 1) is None
    assert len(http.calls) == 1
    assert WebhookEvent.objects.filter(pk=delivery.event_id).exists()
    assert WebhookDelivery.objects.filter(pk=kept.pk).exists()


# --- Dispatcher -------------------------------------------------------------------------------


def test_claim_due_returns_due_pending_deliveries_and_expired_leases(webhook, http):
    now = timezone.now()
    rows = {
        name: make_test_delivery(webhook) for name in ("due", "expired", "future", "leased", "done", "failed", "gone")
    }
    updates = {
        "due": {"status": DeliveryStatus.PENDING, "next_attempt_at": now - timedelta(seconds=5), "attempt_count": 1},
        "expired": {
            "status": DeliveryStatus.SENDING,
            "lease_expires_at": now - timedelta(seconds=1),
            "attempt_count": 2,
        },
        "future": {"status": DeliveryStatus.PENDING, "next_attempt_at": now + timedelta(seconds=300)},
        "leased": {"status": DeliveryStatus.SENDING, "lease_expires_at": now + timedelta(seconds=80)},
        "done": {"status": DeliveryStatus.SUCCEEDED, "next_attempt_at": now - timedelta(seconds=5)},
        "failed": {"status": DeliveryStatus.FAILED, "next_attempt_at": now - timedelta(seconds=5)},
        "gone": {"status": DeliveryStatus.CANCELLED, "next_attempt_at": now - timedelta(seconds=5)},
    }
    for name, values in updates.items():
        WebhookDelivery.objects.filter(pk=rows[name].pk).update(**values)
    untouched = {
        name: WebhookDelivery.objects.filter(pk=rows[name].pk).values().get()
        for name in ("future", "leased", "done", "failed", "gone")
    }
    before = timezone.now()

    claimed = deliveries_claim_due()

    after = timezone.now()
    assert sorted(claimed) == sorted([(rows["due"].pk, 1), (rows["expired"].pk, 2)])
    for name, attempts in (("due", 1), ("expired", 2)):
        row = stored(rows[name])
        assert (row.status, row.attempt_count, row.lease_expires_at) == (DeliveryStatus.PENDING, attempts, None)
        assert before + timedelta(seconds=60) <= row.next_attempt_at <= after + timedelta(seconds=60)
    for name, values in untouched.items():
        assert WebhookDelivery.objects.filter(pk=rows[name].pk).values().get() == values
    assert deliveries_claim_due() == []
    assert http.calls == []


def test_claimed_due_deliveries_can_be_attempted_with_the_returned_count(webhook, http):
    row = make_test_delivery(webhook)
    http.respond(FakeResponse(500), FakeResponse(200))
    attempt(row, 0)
    WebhookDelivery.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))

    [(delivery_id, expected)] = deliveries_claim_due()
    delivery_attempt(delivery_id=delivery_id, expected_attempts=expected)

    assert (delivery_id, expected) == (row.pk, 1)
    assert (stored(row).status, stored(row).attempt_count) == (DeliveryStatus.SUCCEEDED, 2)


def test_dispatch_task_queues_each_due_delivery_once(webhook, queued):
    due = make_test_delivery(webhook)
    make_test_delivery(webhook)  # not due yet
    WebhookDelivery.objects.filter(pk=due.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))

    assert tasks.dispatch_due_deliveries() == 1
    assert tasks.dispatch_due_deliveries() == 0

    assert queued == [[str(due.pk), 0]]


def test_deliver_task_makes_one_attempt(delivery, http):
    http.respond(FakeResponse(204))

    tasks.deliver_webhook(str(delivery.pk), 0)
    tasks.deliver_webhook(str(delivery.pk), 0)

    assert len(http.calls) == 1
    assert stored(delivery).status == DeliveryStatus.SUCCEEDED


def test_test_event_delivery_carries_its_kind(webhook, http):
    row = make_test_delivery(webhook)
    http.respond(FakeResponse(200))

    attempt(row)

    [call] = http.calls
    assert call["headers"]["X-Service-Event"] == EventKind.TEST
    assert json.loads(call["body"])["data"] == {
        "mensagem": "Evento de teste do webhook.",
        "webhook": {"id": str(webhook.pk), "nome": "ERP"},
        "ator": {"tipo": "sistema"},
    }


# --- Secret rotation ---------------------------------------------------------------------------


def test_after_regeneration_both_secrets_sign_until_the_previous_one_expires(webhook, http, clock):
    old_secret = webhook.secret
    webhook_update(webhook=webhook, regenerate_secret=True)
    new_secret = Webhook.objects.get(pk=webhook.pk).secret
    assert new_secret != old_secret
    during = make_test_delivery(webhook)
    http.respond(FakeResponse(200), FakeResponse(200))

    attempt(during)

    call = http.calls[0]
    timestamp, candidates = service_signatures(call["headers"]["X-Service-Signature"])
    assert sorted(candidates) == sorted(
        [hex_hmac(new_secret, timestamp, call["body"]), hex_hmac(old_secret, timestamp, call["body"])]
    )
    assert len(call["headers"]["webhook-signature"].split(" ")) == 2
    assert all(entry.startswith("v1,") for entry in call["headers"]["webhook-signature"].split(" "))
    for secret in (new_secret, old_secret):
        assert StandardWebhook(secret).verify(call["body"], call["headers"]) == json.loads(call["body"])

    Webhook.objects.filter(pk=webhook.pk).update(previous_secret_expires_at=timezone.now() - timedelta(seconds=1))
    after = make_test_delivery(webhook)
    attempt(after)

    call = http.calls[1]
    timestamp, candidates = service_signatures(call["headers"]["X-Service-Signature"])
    assert candidates == [hex_hmac(new_secret, timestamp, call["body"])]
    assert len(call["headers"]["webhook-signature"].split(" ")) == 1
    assert StandardWebhook(new_secret).verify(call["body"], call["headers"]) == json.loads(call["body"])
    with pytest.raises(WebhookVerificationError):
        StandardWebhook(old_secret).verify(call["body"], call["headers"])


def test_a_receiver_trickling_its_answer_past_the_timeout_is_a_failure(http, clock, delivery):
    slow = FakeResponse(200)
    slow.raw = FakeRaw(b"x" * 1024, chunk=1, clock=clock, pause=0.6)  # a byte every 0.6 s, each read "in time"
    http.respond(slow)

    result = delivery_attempt(delivery_id=delivery.pk, expected_attempts=0)

    logged = result.attempts.get()
    assert logged.succeeded is False
    assert logged.status_code is None
    assert logged.error == "timeout"
    assert result.status == "pendente"
    assert len(slow.raw.reads) < 20  # it gave up at the deadline, not after 1024 reads
    assert slow.closed is True


# --- The attempt's log line --------------------------------------------------------------------


@pytest.fixture
def attempt_lines(caplog):
    """The `webhook_delivery_attempt` lines, as (level, event dict)."""
    caplog.set_level(logging.INFO, logger="integrations.delivery")

    def lines() -> list[tuple[str, dict]]:
        return [
            (record.levelname, record.msg)
            for record in caplog.records
            if isinstance(record.msg, dict) and record.msg.get("event") == "webhook_delivery_attempt"
        ]

    return lines


def without_timestamp(line: dict) -> dict:
    assert line.pop("timestamp")
    return line


def test_each_attempt_logs_one_line_with_its_ids_kind_number_status_and_duration(
    delivery, webhook, http, attempt_lines
):
    http.respond(FakeResponse(200, b'{"recebido":true}'))

    attempt(delivery)

    [(level, line)] = attempt_lines()
    assert level == "INFO"
    assert without_timestamp(line) == {
        "event": "webhook_delivery_attempt",
        "logger": "integrations.delivery",
        "level": "info",
        "delivery_id": str(delivery.pk),
        "webhook_id": str(webhook.pk),
        "event_kind": "ticket.resposta_publica",
        "attempt": 1,
        "status_code": 200,
        "error_class": None,
        "duration_ms": 250,
        "outcome": DeliveryStatus.SUCCEEDED,
    }


def test_a_failed_attempt_logs_a_warning_with_the_status_code_and_the_next_state(delivery, http, attempt_lines):
    http.respond(FakeResponse(500), FakeResponse(503))

    attempt(delivery)
    attempt(stored(delivery))

    lines = attempt_lines()
    assert [
        (level, line["attempt"], line["status_code"], line["error_class"], line["outcome"]) for level, line in lines
    ] == [
        ("WARNING", 1, 500, None, DeliveryStatus.PENDING),
        ("WARNING", 2, 503, None, DeliveryStatus.PENDING),
    ]


@pytest.mark.parametrize(
    ("error", "error_class"),
    [
        (requests.ConnectionError("conexão recusada por 127.0.0.1:9/helpdesk?token=x"), "ConnectionError"),
        (requests.ReadTimeout("lento"), "ReadTimeout"),
        (InvalidIPAddress("10.0.0.5"), "InvalidIPAddress"),
        (RuntimeError("inesperado"), "RuntimeError"),
    ],
)
def test_an_attempt_without_an_answer_logs_the_error_class_only(delivery, http, attempt_lines, error, error_class):
    http.respond(error)

    attempt(delivery)

    [(level, line)] = attempt_lines()
    assert (level, line["status_code"], line["error_class"], line["outcome"]) == (
        "WARNING",
        None,
        error_class,
        DeliveryStatus.PENDING,
    )
    assert str(error) not in json.dumps(line)


def test_the_last_attempt_logs_falhou(delivery, http, attempt_lines, settings):
    settings.WEBHOOK_RETRY_DELAYS = []
    http.respond(FakeResponse(500))

    attempt(delivery)

    [(_, line)] = attempt_lines()
    assert (line["attempt"], line["outcome"]) == (1, DeliveryStatus.FAILED)


def test_the_attempt_line_never_has_the_url_secret_body_signature_or_answer(organization, http, json_log):
    hook = make_webhook(organization, url=f"{URL}?token=segredo-na-url", events=["ticket.resposta_publica"])
    row = make_test_delivery(hook)
    http.respond(FakeResponse(200, b"resposta-do-parceiro"))

    attempt(row)

    [call] = http.calls
    [line] = [line for line in json_log() if line["event"] == "webhook_delivery_attempt"]
    assert (line["delivery_id"], line["event_kind"], line["status_code"]) == (str(row.pk), "webhook.teste", 200)
    written = json.dumps(line)
    secret = Webhook.objects.get(pk=hook.pk).secret
    signatures = [call["headers"][name] for name in ("X-Service-Signature", "webhook-signature")]
    for value in (
        "segredo-na-url",
        secret,
        secret.removeprefix("whsec_"),
        call["body"].decode(),
        "resposta-do-parceiro",
    ):
        assert value not in written
    for signature in signatures:
        assert signature not in written


# --- `incluir` blocks (issue 21): rendered when the event is written, the same bytes on every attempt -----


@pytest.fixture
def with_blocks(organization, agent, partner):
    """One agent reply on an assigned ticket, delivered to a webhook with both blocks and to one without."""
    events = ["ticket.resposta_publica"]
    full = make_webhook(organization, name="Com blocos", url=URL, events=events, blocks=["contato", "atendente"])
    bare = make_webhook(organization, name="Sem blocos", url=URL, events=events)
    ticket = ticket_update(ticket=make_ticket(organization), assignee=agent)
    make_agent_reply(ticket, agent, body="Olá Maria, o pedido sai hoje.")
    deliveries = WebhookDelivery.objects.select_related("event", "webhook")
    return deliveries.get(webhook=full), deliveries.get(webhook=bare), ticket


def test_a_webhook_with_blocks_is_sent_the_events_body_with_them_and_one_without_the_stored_bytes(
    with_blocks, http, agent, partner
):
    full, bare, ticket = with_blocks
    http.respond(FakeResponse(200), FakeResponse(200))

    attempt(full)
    attempt(bare)

    sent_full, sent_bare = (call["body"] for call in http.calls)
    assert sent_bare == bare.event.body.encode()
    stored = json.loads(full.event.body)
    blocks = {"atendente": {"id": str(agent.pk), "nome": agent.name}, "contato_id": str(ticket.requester_id)}
    expected = {**stored, "data": {**stored["data"], "ticket": {**stored["data"]["ticket"], **blocks}}}
    assert sent_full == json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode()
    for delivery, call in zip((full, bare), http.calls, strict=True):
        assert StandardWebhook(delivery.webhook.secret).verify(call["body"], call["headers"]) == json.loads(
            call["body"]
        )
    # Push and pull carry the same blocks: the feed with the webhook's `incluir` shows what it was sent.
    feed = partner.get("/api/v1/eventos", {"incluir": "atendente,contato"}).json()["data"]["itens"]
    assert [item for item in feed if item["id"] == str(full.event_id)] == [json.loads(sent_full)]


def test_every_attempt_of_a_delivery_with_blocks_sends_and_signs_the_same_bytes(with_blocks, http, agent):
    full, _bare, ticket = with_blocks
    http.respond(FakeResponse(500), FakeResponse(503), FakeResponse(200))

    attempt(full, 0)
    # Between attempts, the ticket and the webhook's setting change: the delivery keeps what it was made with.
    ticket_update(ticket=ticket, unassign=True)
    webhook_update(webhook=full.webhook, blocks=[])
    attempt(full, 1)
    attempt(full, 2)

    bodies = {call["body"] for call in http.calls}
    assert len(http.calls) == 3 and len(bodies) == 1
    [body] = bodies
    assert json.loads(body)["data"]["ticket"]["atendente"] == {"id": str(agent.pk), "nome": agent.name}
    secret = stored(full).webhook.secret
    for call in http.calls:
        assert StandardWebhook(secret).verify(call["body"], call["headers"]) == json.loads(body)
        timestamp, [signature] = service_signatures(call["headers"]["X-Service-Signature"])
        assert hmac.compare_digest(signature, hex_hmac(secret, timestamp, body))
    assert stored(full).status == DeliveryStatus.SUCCEEDED


def test_a_resent_delivery_carries_the_blocks_of_the_one_resent(with_blocks, http):
    full, _bare, _ticket = with_blocks
    http.respond(FakeResponse(200), FakeResponse(200))
    attempt(full)
    webhook_update(webhook=full.webhook, blocks=[])

    copy = delivery_resend(delivery=stored(full))
    attempt(copy)

    first, again = (call["body"] for call in http.calls)
    assert again == first and b'"contato_id":' in again
    assert copy.blocks == "atendente,contato"
