"""Recovery from a dead worker and from a broker outage in seconds: short leases kept alive
while a worker sends, unqueued deliveries due at once, a dispatcher that drains a backlog."""

import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from config.celery import Consumer
from integrations import tasks
from integrations.delivery import delivery_attempt, delivery_claim
from integrations.leases import LeaseKeeper, deliveries_lease_renew
from integrations.models import DeliveryStatus, WebhookDelivery
from tests.factories import make_test_delivery, make_webhook

URL = "http://127.0.0.1:9/helpdesk"


@pytest.fixture(autouse=True)
def delivery_settings(settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_TIMEOUT = 10.0
    settings.WEBHOOK_LEASE = 6.0
    settings.WEBHOOK_REQUEUE_AFTER = 10.0


@pytest.fixture
def webhook(organization):
    return make_webhook(organization, url=URL, events=["ticket.resposta_publica"])


def stored(delivery) -> WebhookDelivery:
    return WebhookDelivery.objects.get(pk=delivery.pk)


def due_now(*deliveries) -> None:
    WebhookDelivery.objects.filter(pk__in=[d.pk for d in deliveries]).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )


# --- Leases ------------------------------------------------------------------------------------


def test_a_claim_leases_the_delivery_for_webhook_lease_seconds_whatever_the_timeout(webhook, settings):
    settings.WEBHOOK_TIMEOUT = 30.0  # a long timeout no longer means a long lease
    row = make_test_delivery(webhook)
    before = timezone.now()

    delivery_claim(delivery_id=row.pk, expected_attempts=0)

    after = timezone.now()
    lease = stored(row).lease_expires_at
    assert before + timedelta(seconds=6) <= lease <= after + timedelta(seconds=6)


def test_renewing_pushes_forward_only_leases_still_held_at_the_claimed_attempt(webhook):
    ours, taken_over, finished = (make_test_delivery(webhook) for _ in range(3))
    for row in (ours, taken_over, finished):
        delivery_claim(delivery_id=row.pk, expected_attempts=0)
    soon = timezone.now() + timedelta(seconds=1)
    WebhookDelivery.objects.update(lease_expires_at=soon)
    WebhookDelivery.objects.filter(pk=taken_over.pk).update(attempt_count=1)  # another worker's attempt now
    WebhookDelivery.objects.filter(pk=finished.pk).update(status=DeliveryStatus.SUCCEEDED, lease_expires_at=None)

    renewed = deliveries_lease_renew({ours.pk: 0, taken_over.pk: 0, finished.pk: 0})

    assert renewed == [ours.pk]
    assert stored(ours).lease_expires_at > soon + timedelta(seconds=4)
    assert stored(taken_over).lease_expires_at == soon
    assert stored(finished).lease_expires_at is None


def test_the_keeper_renews_a_slow_attempt_and_stops_when_it_ends(transactional_db, organization, settings):
    """A receiver slower than the lease keeps its delivery; once the attempt is over, nothing renews it."""
    settings.WEBHOOK_LEASE = 0.9  # renewed every 0.3 s
    webhook = make_webhook(organization, url=URL, events=["ticket.resposta_publica"])
    row = make_test_delivery(webhook)
    delivery_claim(delivery_id=row.pk, expected_attempts=0)
    first = stored(row).lease_expires_at
    keeper = LeaseKeeper()

    with keeper.holding(row.pk, 0):
        time.sleep(2.0)  # more than twice the lease
        during = stored(row).lease_expires_at
        assert during > first + timedelta(seconds=1)
        assert during > timezone.now()  # never let go while the attempt runs
    time.sleep(0.7)
    after = stored(row).lease_expires_at
    time.sleep(0.7)

    assert stored(row).lease_expires_at == after  # no renewal once the block ended


def test_a_delivery_is_held_while_its_attempt_runs(webhook, monkeypatch):
    from integrations import delivery as delivery_module

    row = make_test_delivery(webhook)
    held = []

    def send(delivery):
        held.append(dict(delivery_module.keeper._held))
        return delivery_module.AttemptOutcome(status_code=204, duration_ms=1)

    monkeypatch.setattr(delivery_module, "delivery_send", send)

    delivery_attempt(delivery_id=row.pk, expected_attempts=0)

    assert held == [{row.pk: 0}]
    assert delivery_module.keeper._held == {}
    assert stored(row).status == DeliveryStatus.SUCCEEDED


def test_a_dead_workers_delivery_is_queued_again_once_its_lease_runs_out(webhook, queued):
    row = make_test_delivery(webhook)
    delivery_claim(delivery_id=row.pk, expected_attempts=0)  # the worker dies here: nobody renews
    assert tasks.dispatch_due_deliveries() == 0

    WebhookDelivery.objects.filter(pk=row.pk).update(lease_expires_at=timezone.now() - timedelta(milliseconds=1))

    assert tasks.dispatch_due_deliveries() == 1
    assert queued == [[str(row.pk), 0]]


# --- Broker outage ---------------------------------------------------------------------------


@pytest.fixture
def broker_down(monkeypatch):
    def refuse(*, args, **options):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(tasks.deliver_webhook, "apply_async", refuse)


def test_a_delivery_the_broker_refused_is_due_at_once(webhook, broker_down):
    row = make_test_delivery(webhook)  # its first-attempt guard is WEBHOOK_REQUEUE_AFTER away
    assert stored(row).next_attempt_at > timezone.now()

    later = make_test_delivery(webhook)

    unqueued = tasks.deliveries_enqueue([(row.pk, 0), (later.pk, 0)])

    assert unqueued == 2
    for delivery in (row, later):
        assert stored(delivery).next_attempt_at <= timezone.now()
        assert stored(delivery).status == DeliveryStatus.PENDING


def test_the_first_dispatch_after_the_outage_queues_what_the_broker_refused(webhook, monkeypatch, queued):
    rows = [make_test_delivery(webhook) for _ in range(3)]
    sent_during_outage = []

    def refuse(*, args, **options):
        sent_during_outage.append(args)
        raise ConnectionRefusedError("broker down")

    with monkeypatch.context() as outage:
        outage.setattr(tasks.deliver_webhook, "apply_async", refuse)
        tasks.deliveries_enqueue([(row.pk, 0) for row in rows])
        assert tasks.dispatch_due_deliveries() == 0  # still down: stops after the first refusal

    assert len(sent_during_outage) == 2  # one try each time: the first refusal stops the rest
    assert tasks.dispatch_due_deliveries() == 3
    assert sorted(queued) == sorted([str(row.pk), 0] for row in rows)


def test_the_dispatcher_drains_a_backlog_in_one_run(webhook, queued, monkeypatch):
    monkeypatch.setattr(tasks, "DISPATCH_BATCH", 2)
    rows = [make_test_delivery(webhook) for _ in range(5)]
    due_now(*rows)

    assert tasks.dispatch_due_deliveries() == 5

    assert sorted(queued) == sorted([str(row.pk), 0] for row in rows)
    assert tasks.dispatch_due_deliveries() == 0


def test_a_worker_reconnects_to_a_broker_every_second():
    """kombu's default waits up to 30 s between attempts; the worker must not sit out a broker that is back."""
    calls = []

    class FakeConnection:
        def ensure_connection(self, *args, **kwargs):
            calls.append(kwargs)
            return self

    consumer = Consumer.__new__(Consumer)
    consumer.app = type("App", (), {"conf": type("Conf", (), {})()})()
    conf = consumer.app.conf
    conf.broker_connection_retry_on_startup = True
    conf.broker_connection_retry = True
    conf.broker_connection_max_retries = None
    consumer.first_connection_attempt = False
    consumer.broker_connection_retry_attempt = 0

    consumer.ensure_connected(FakeConnection())

    assert len(calls) == 1
    assert (calls[0]["interval_start"], calls[0]["interval_step"], calls[0]["interval_max"]) == (1, 0, 1)


def test_the_keeper_thread_of_a_forked_child_is_its_own(monkeypatch):
    keeper = LeaseKeeper()
    keeper._thread = threading.Thread(target=lambda: None)
    keeper._held = {"parent": 0}
    monkeypatch.setattr("integrations.leases.os.getpid", lambda: keeper._pid + 1)
    started = []
    monkeypatch.setattr("integrations.leases.threading.Thread.start", lambda self: started.append(self.name))

    with keeper.holding("child", 0):
        assert keeper._held == {"child": 0}

    assert started == ["webhook-leases"]


def test_an_attempt_stuck_past_the_longest_one_is_no_longer_kept_alive(monkeypatch, settings):
    """A thread pool has no time limit: an attempt stuck where no timeout reaches stops renewing its lease,
    so the dispatcher takes the delivery over once the lease runs out."""
    settings.WEBHOOK_TIMEOUT = 10.0
    keeper = LeaseKeeper()
    monkeypatch.setattr("integrations.leases.LeaseKeeper._start", lambda self: None)
    clock = [1000.0]
    monkeypatch.setattr("integrations.leases.time.monotonic", lambda: clock[0])

    with keeper.holding("stuck", 0), keeper.holding("also", 1):
        clock[0] += 34.0
        assert keeper.renewable() == {"stuck": 0, "also": 1}
        clock[0] += 1.0  # 35 s: WEBHOOK_TIMEOUT * 2 + 15
        assert keeper.renewable() == {}
