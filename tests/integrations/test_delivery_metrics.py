"""Delivery attempts counted by event kind and outcome and timed; the queue (pending, lag) read at scrape time."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
import requests
from django.db import OperationalError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from requests_hardened.ip_filter import InvalidIPAddress

from helpdesk.services import organization_set_active
from integrations import delivery as delivery_module
from integrations import metrics as metrics_module
from integrations.delivery import delivery_attempt
from integrations.models import DeliveryStatus, WebhookDelivery
from tests.factories import make_agent_reply, make_test_delivery, make_ticket, make_webhook
from tests.metrics import scrape

URL = "http://127.0.0.1:9/helpdesk"
ATTEMPTS = "helpdesk_webhook_delivery_attempts_total"
FAILED = "helpdesk_webhook_deliveries_failed_total"
PENDING = "helpdesk_webhook_deliveries_pending"
LAG = "helpdesk_webhook_queue_lag_seconds"
REPLY = "ticket.resposta_publica"

pytestmark = pytest.mark.usefixtures("queued")


class Answer:
    """A receiver's answer as delivery_send reads it."""

    def __init__(self, status_code: int):
        self.status_code = status_code
        self.raw = SimpleNamespace(read1=lambda amount, decode_content: b"")

    def close(self) -> None:
        pass


class Receiver:
    """The outbound side: each POST takes 0.25 s on the monotonic clock and gives the next answer."""

    def __init__(self):
        self.answers: list = []
        self.ticks = 1000.0

    def monotonic(self) -> float:
        return self.ticks

    def time(self) -> float:
        return 1_800_000_000.0

    def post(self, url, **kwargs):
        self.ticks += 0.25
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


@pytest.fixture
def receiver(monkeypatch, settings) -> Receiver:
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_RETRY_DELAYS = [60, 300, 1800]
    fake = Receiver()
    monkeypatch.setattr(delivery_module, "time", fake)
    monkeypatch.setattr(delivery_module, "_session", lambda: fake)
    return fake


@pytest.fixture
def delivery(organization, agent, receiver) -> WebhookDelivery:
    make_webhook(organization, url=URL, events=[REPLY])
    make_agent_reply(make_ticket(organization), agent)
    return WebhookDelivery.objects.get()


def send(delivery: WebhookDelivery, *answers) -> list[str]:
    """One attempt per answer; the delivery's status after each."""
    statuses = []
    for answer in answers:
        delivery_module._session().answers.append(answer)
        delivery.refresh_from_db()
        statuses.append(delivery_attempt(delivery_id=delivery.pk, expected_attempts=delivery.attempt_count).status)
    return statuses


def test_each_attempt_is_counted_by_event_kind_and_outcome(delivery):
    before = scrape()

    statuses = send(delivery, Answer(500), requests.Timeout("read timed out"), Answer(200))

    after = scrape()
    assert statuses == ["pendente", "pendente", "sucesso"]
    assert after.since(before, ATTEMPTS, event=REPLY, outcome="falha_http") == 1
    assert after.since(before, ATTEMPTS, event=REPLY, outcome="sem_resposta") == 1
    assert after.since(before, ATTEMPTS, event=REPLY, outcome="sucesso") == 1
    assert after.since(before, FAILED, event=REPLY) == 0


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (Answer(204), "sucesso"),
        (Answer(302), "falha_http"),
        (Answer(404), "falha_http"),
        (requests.ConnectionError("conexão recusada"), "sem_resposta"),
        (InvalidIPAddress("10.0.0.5"), "sem_resposta"),
    ],
)
def test_the_outcome_says_whether_the_receiver_answered_2xx_something_else_or_nothing(delivery, answer, outcome):
    before = scrape()

    send(delivery, answer)

    after = scrape()
    assert after.since(before, ATTEMPTS, event=REPLY, outcome=outcome) == 1
    assert sum(after.named(ATTEMPTS).values()) - sum(before.named(ATTEMPTS).values()) == 1


def test_the_attempt_duration_is_observed_by_outcome(delivery):
    before = scrape()

    send(delivery, Answer(200))

    after = scrape()
    name = "helpdesk_webhook_attempt_duration_seconds"
    assert after.since(before, f"{name}_count", outcome="sucesso") == 1
    assert after.since(before, f"{name}_sum", outcome="sucesso") == 0.25
    assert after.since(before, f"{name}_bucket", outcome="sucesso", le="0.1") == 0
    assert after.since(before, f"{name}_bucket", outcome="sucesso", le="0.25") == 1


def test_a_delivery_given_up_after_its_last_retry_is_counted_once(delivery, settings):
    settings.WEBHOOK_RETRY_DELAYS = [60]
    before = scrape()

    statuses = send(delivery, Answer(500), Answer(503))

    after = scrape()
    assert statuses == ["pendente", "falhou"]
    assert after.since(before, ATTEMPTS, event=REPLY, outcome="falha_http") == 2
    assert after.since(before, FAILED, event=REPLY) == 1


def test_a_410_gives_the_delivery_up_at_once(delivery):
    before = scrape()

    assert send(delivery, Answer(410)) == ["falhou"]

    assert scrape().since(before, FAILED, event=REPLY) == 1


def test_a_stale_message_counts_no_attempt(delivery):
    send(delivery, Answer(200))
    before = scrape()

    assert delivery_attempt(delivery_id=delivery.pk, expected_attempts=0) is None

    assert scrape().named(ATTEMPTS) == before.named(ATTEMPTS)


# --- The queue, read at scrape time -----------------------------------------------------


@pytest.fixture
def now(monkeypatch):
    """The collector's clock, fixed."""
    fixed = timezone.now().replace(microsecond=0)
    monkeypatch.setattr(metrics_module, "timezone", SimpleNamespace(now=lambda: fixed))
    return fixed


@pytest.fixture
def webhook(organization, example_dns, settings):
    settings.WEBHOOK_RETRY_DELAYS = [60, 300]
    return make_webhook(organization)


def backdate(delivery: WebhookDelivery, **fields) -> None:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(**fields)


def test_the_queue_lag_is_the_age_of_the_oldest_first_attempt_waiting(webhook, now):
    make_test_delivery(webhook, created_at=now - timedelta(minutes=10))
    make_test_delivery(webhook, created_at=now - timedelta(minutes=2))

    samples = scrape()

    assert samples.value(LAG) == 600.0
    assert samples.value(PENDING, status="pendente") == 2
    assert samples.value(PENDING, status="enviando") == 0


def test_a_retry_is_due_from_its_last_attempt_plus_its_delay_not_from_its_creation(webhook, now):
    retry = make_test_delivery(webhook, created_at=now - timedelta(hours=1))
    backdate(retry, attempt_count=1, last_attempt_at=now - timedelta(seconds=70))

    assert scrape().value(LAG) == 10.0  # due 60 s after the first attempt


def test_a_retry_whose_delay_has_not_run_out_is_pending_but_not_late(webhook, now):
    retry = make_test_delivery(webhook, created_at=now - timedelta(hours=1))
    backdate(retry, attempt_count=2, last_attempt_at=now - timedelta(seconds=200))  # the second delay is 300 s

    samples = scrape()

    assert samples.value(LAG) == 0.0
    assert samples.value(PENDING, status="pendente") == 1


def test_the_dispatchers_requeue_guard_does_not_hide_a_backlog(webhook, now):
    """A backlog queued again and again gets next_attempt_at moved forward each time; it is still late."""
    stuck = make_test_delivery(webhook, created_at=now - timedelta(minutes=7))
    backdate(stuck, next_attempt_at=now + timedelta(seconds=10))

    assert scrape().value(LAG) == 420.0


def test_a_delivery_being_sent_counts_as_enviando_and_as_late_as_it_is(webhook, now):
    sending = make_test_delivery(webhook, created_at=now - timedelta(seconds=30))
    backdate(sending, status=DeliveryStatus.SENDING, lease_expires_at=now + timedelta(seconds=6))

    samples = scrape()

    assert (samples.value(PENDING, status="pendente"), samples.value(PENDING, status="enviando")) == (0, 1)
    assert samples.value(LAG) == 30.0


def test_deliveries_held_for_a_suspended_organization_are_pending_but_not_late(
    webhook, organization, other_organization, now
):
    held = make_test_delivery(webhook, created_at=now - timedelta(hours=3))
    organization_set_active(organization=organization, is_active=False)
    delivery_attempt(delivery_id=held.pk, expected_attempts=0)
    make_test_delivery(make_webhook(other_organization), created_at=now - timedelta(minutes=1))

    samples = scrape()

    assert (samples.value(PENDING, status="pendente"), samples.value(LAG)) == (2, 60.0)


@pytest.mark.parametrize("status", [DeliveryStatus.SUCCEEDED, DeliveryStatus.FAILED, DeliveryStatus.CANCELLED])
def test_finished_deliveries_are_neither_pending_nor_late(webhook, now, status):
    backdate(make_test_delivery(webhook, created_at=now - timedelta(days=1)), status=status)

    samples = scrape()

    assert (samples.value(PENDING, status="pendente"), samples.value(LAG)) == (0, 0.0)


def test_the_queue_costs_one_query_per_scrape_and_none_per_request(partner, webhook):
    with CaptureQueriesContext(connection) as scraping:
        scrape()
    with CaptureQueriesContext(connection) as listing:
        partner.get("/api/v1/tickets")

    assert len(scraping.captured_queries) == 1
    assert "integrations_webhookdelivery" in scraping.captured_queries[0]["sql"]
    assert not [query for query in listing.captured_queries if "webhookdelivery" in query["sql"]]


def test_with_the_database_down_the_scrape_still_answers_without_the_queue(db, monkeypatch):
    def down(*args, **kwargs):
        raise OperationalError("database down")

    monkeypatch.setattr(metrics_module.WebhookDelivery.objects, "filter", down)
    Client().get("/api/nao-existe")

    samples = scrape()

    assert samples.named(PENDING) == {}
    assert LAG not in {name for name, _labels in samples}
    assert [name for name, _labels in samples if name.startswith("helpdesk_http_requests")]
