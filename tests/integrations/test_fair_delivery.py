"""Fair, isolated delivery: one webhook's slowness or failure costs only that webhook.

At most WEBHOOK_MAX_IN_FLIGHT attempts of one webhook run at a time; the others wait their turn
(parked) and are queued the moment one ends. A webhook whose attempts fail or take WEBHOOK_SLOW_SECONDS
or more is slow, and slow webhooks share at most WEBHOOK_SLOW_SHARE of a worker process's send threads. Nothing is lost
on the way: the dispatcher takes parked deliveries too. The end-to-end proof with real processes is
tests/e2e/test_noisy_neighbour.py; the exact count under concurrent claims on PostgreSQL is here too.
"""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from integrations import delivery as delivery_module
from integrations import tasks
from integrations.delivery import (
    AttemptOutcome,
    deliveries_claim_due,
    deliveries_unpark,
    deliveries_unpark_stalled,
    delivery_attempt_passing_turn,
    delivery_claim,
    delivery_record,
    slow_slots,
)
from integrations.models import DeliveryStatus, Webhook, WebhookDelivery
from tests.factories import make_organization, make_test_delivery, make_webhook
from tests.integrations.test_webhook_delivery import stored

pytestmark = pytest.mark.usefixtures("queued")


@pytest.fixture(autouse=True)
def delivery_settings(settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_MAX_IN_FLIGHT = 2
    settings.WEBHOOK_SLOW_SECONDS = 2.0
    settings.WEBHOOK_SEND_THREADS = 4
    settings.WEBHOOK_SLOW_SHARE = 0.5
    settings.WEBHOOK_REQUEUE_AFTER = 60.0


def webhook_of(organization, name="ERP") -> Webhook:
    return make_webhook(organization, name=name, url=f"http://127.0.0.1:9/{name}")


def claim(delivery: WebhookDelivery):
    return delivery_claim(delivery_id=delivery.pk, expected_attempts=delivery.attempt_count)


def finish(claimed, *, status=200, duration_ms=15) -> WebhookDelivery:
    return delivery_record(delivery=claimed, outcome=AttemptOutcome(status, duration_ms), attempted_at=timezone.now())


def test_at_most_max_in_flight_attempts_of_one_webhook_run_at_a_time(organization):
    webhook = webhook_of(organization)
    deliveries = [make_test_delivery(webhook) for _ in range(4)]
    other = make_test_delivery(webhook_of(organization, "CRM"))

    claimed = [claim(delivery) for delivery in deliveries]

    assert [row is not None for row in claimed] == [True, True, False, False]
    for parked in deliveries[2:]:
        row = stored(parked)
        assert (row.status, row.attempt_count) == (DeliveryStatus.PENDING, 0)
        assert row.parked_at is not None
        assert row.next_attempt_at > timezone.now() + timedelta(seconds=5)  # the safety net, not a retry
    assert claim(other) is not None  # another webhook is not held by this one


def test_the_end_of_an_attempt_hands_its_turn_to_the_oldest_parked_delivery(organization):
    webhook = webhook_of(organization)
    first, second, waiting, last = (make_test_delivery(webhook) for _ in range(4))
    running = [claim(first), claim(second)]
    assert claim(waiting) is None and claim(last) is None

    finish(running[0])
    handed = deliveries_unpark(webhook_id=webhook.pk)

    assert handed == [(waiting.pk, 0)]
    assert stored(waiting).parked_at is None
    assert claim(waiting) is not None
    assert claim(last) is None  # the cap holds: second and waiting are running
    assert deliveries_unpark(webhook_id=webhook_of(organization, "Sem fila").pk) == []


def test_the_thread_whose_attempt_ends_sends_the_next_parked_delivery_itself(organization, queued, monkeypatch):
    webhook = webhook_of(organization)
    sent = []
    monkeypatch.setattr(
        delivery_module, "delivery_send", lambda delivery: sent.append(delivery.pk) or AttemptOutcome(200, 10)
    )
    mine, other = make_test_delivery(webhook), make_test_delivery(webhook)
    claim(other)  # another attempt of the webhook is running
    waiting = make_test_delivery(webhook)
    claim(mine)
    assert claim(waiting) is None
    WebhookDelivery.objects.filter(pk=mine.pk).update(status=DeliveryStatus.PENDING, lease_expires_at=None)
    queued.clear()

    tasks.deliver_webhook(str(mine.pk), 0)

    assert sent == [mine.pk, waiting.pk]  # the turn passed on, on the same thread, no trip through the broker
    assert [stored(row).status for row in (mine, waiting)] == [DeliveryStatus.SUCCEEDED] * 2
    assert queued == []


def in_flight(webhook) -> int:
    return WebhookDelivery.objects.filter(webhook=webhook, status=DeliveryStatus.SENDING).count()


def test_the_turn_passes_in_the_commit_that_records_the_attempt(organization, monkeypatch):
    """The ended attempt's slot goes to the next parked delivery in one commit: the count of attempts in
    flight never dips, so a message arriving meanwhile is parked, not let through past the cap."""
    webhook = webhook_of(organization)
    first, second, waiting, arriving = (make_test_delivery(webhook) for _ in range(4))
    running = [claim(first), claim(second)]
    assert claim(waiting) is None

    def send(delivery):
        assert in_flight(webhook) == 2
        return AttemptOutcome(200, 10)

    monkeypatch.setattr(delivery_module, "delivery_send", send)
    following = delivery_attempt_passing_turn(running[0])

    assert following.pk == waiting.pk
    assert (stored(first).status, stored(waiting).status) == (DeliveryStatus.SUCCEEDED, DeliveryStatus.SENDING)
    assert stored(waiting).parked_at is None and stored(waiting).lease_expires_at > timezone.now()
    assert in_flight(webhook) == 2
    assert claim(arriving) is None  # still at the cap
    assert stored(arriving).parked_at is not None


def test_no_turn_passes_to_an_inactive_webhook_or_after_a_410(organization, monkeypatch):
    webhook = webhook_of(organization)
    monkeypatch.setattr(delivery_module, "delivery_send", lambda delivery: AttemptOutcome(200, 10))
    running = claim(make_test_delivery(webhook))
    claim(make_test_delivery(webhook))
    parked = make_test_delivery(webhook)
    assert claim(parked) is None
    Webhook.objects.filter(pk=webhook.pk).update(is_active=False)

    assert delivery_attempt_passing_turn(running) is None
    assert stored(parked).status == DeliveryStatus.PENDING

    other = webhook_of(organization, "Removido")
    monkeypatch.setattr(delivery_module, "delivery_send", lambda delivery: AttemptOutcome(410, 10))
    running = claim(make_test_delivery(other))
    claim(make_test_delivery(other))
    parked = make_test_delivery(other)
    assert claim(parked) is None

    assert delivery_attempt_passing_turn(running) is None
    assert stored(parked).status == DeliveryStatus.CANCELLED  # the receiver said the endpoint is gone


def test_a_slow_webhooks_turn_carries_its_slow_slot_and_waits_when_the_share_is_full(organization, monkeypatch):
    """4 send threads x 0.5: two slow slots in this process."""
    slow = webhook_of(organization, "Lento")
    Webhook.objects.filter(pk=slow.pk).update(slow_since=timezone.now())
    monkeypatch.setattr(delivery_module, "delivery_send", lambda delivery: AttemptOutcome(200, 3000))
    running = claim(make_test_delivery(slow))
    claim(make_test_delivery(slow))
    waiting = [make_test_delivery(slow) for _ in range(2)]
    assert [claim(row) for row in waiting] == [None, None]

    following = delivery_attempt_passing_turn(running)

    assert following.pk == waiting[0].pk and following.holds_slow_slot
    assert not slow_slots.take()  # the slot moved on: both are still taken

    # A healthy webhook turning slow on this attempt needs a free slow slot to pass its turn.
    turning = webhook_of(organization, "Ficando lento")
    running = claim(make_test_delivery(turning))
    claim(make_test_delivery(turning))
    parked = make_test_delivery(turning)
    assert claim(parked) is None

    assert delivery_attempt_passing_turn(running) is None
    assert stored(parked).status == DeliveryStatus.PENDING and stored(parked).parked_at is not None


def test_after_turns_in_a_row_the_next_goes_back_through_the_queue(organization, queued, monkeypatch):
    monkeypatch.setattr(tasks, "TURNS_IN_A_ROW", 2)
    monkeypatch.setattr(delivery_module, "delivery_send", lambda delivery: AttemptOutcome(200, 10))
    webhook = webhook_of(organization)
    first, *parked = (make_test_delivery(webhook) for _ in range(4))
    WebhookDelivery.objects.filter(pk__in=[row.pk for row in parked]).update(parked_at=timezone.now())
    queued.clear()

    tasks.deliver_webhook(str(first.pk), 0)

    assert [stored(row).status for row in (first, *parked[:2])] == [DeliveryStatus.SUCCEEDED] * 3
    assert queued == [[str(parked[2].pk), 0]]


def test_a_parked_delivery_is_never_lost_when_its_webhooks_attempts_die(organization):
    """The dispatcher leaves parked deliveries to their webhook's turns while an attempt is in flight, and
    unparks them (up to the cap) once none is: the process that ran the last one died."""
    webhook = webhook_of(organization)
    running = [claim(make_test_delivery(webhook)) for _ in range(2)]
    parked = make_test_delivery(webhook)
    assert claim(parked) is None and all(running)
    WebhookDelivery.objects.filter(pk=parked.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))

    assert (parked.pk, 0) not in deliveries_claim_due()
    assert deliveries_unpark_stalled() == []  # its webhook is busy: the next end hands the turn over

    WebhookDelivery.objects.filter(pk__in=[row.pk for row in running]).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert deliveries_unpark_stalled() == [(parked.pk, 0)]
    assert stored(parked).parked_at is None


def test_slow_webhooks_take_at_most_their_share_of_a_worker_process_send_threads(organization):
    slow = [webhook_of(organization, f"Lento {n}") for n in range(3)]
    Webhook.objects.filter(pk__in=[webhook.pk for webhook in slow]).update(slow_since=timezone.now())
    healthy = webhook_of(organization, "Saudável")
    deliveries = [make_test_delivery(webhook) for webhook in slow]

    claimed = [claim(delivery) for delivery in deliveries]

    assert [row is not None for row in claimed] == [True, True, False]  # 4 send threads x 0.5
    assert stored(deliveries[2]).parked_at is not None
    assert claim(make_test_delivery(healthy)) is not None  # healthy webhooks keep the rest
    assert claim(make_test_delivery(healthy)) is not None
    slow_slots.give_back()  # an attempt of a slow webhook ended
    assert claim(stored(deliveries[2])) is not None


@pytest.mark.parametrize(
    ("status", "duration_ms", "slow", "failing"),
    [
        (200, 15, False, False),
        (200, 2500, True, False),
        (500, 15, True, True),
        (None, 10000, True, True),
    ],
    ids=["fast-success", "slow-success", "error", "timeout"],
)
def test_an_attempt_tells_whether_its_webhook_is_slow(organization, status, duration_ms, slow, failing):
    webhook = webhook_of(organization)

    finish(claim(make_test_delivery(webhook)), status=status, duration_ms=duration_ms)

    row = Webhook.objects.get(pk=webhook.pk)
    assert (row.slow_since is not None, row.failing_since is not None) == (slow, failing)


def test_a_fast_success_makes_a_slow_webhook_healthy_again(organization):
    webhook = webhook_of(organization)
    finish(claim(make_test_delivery(webhook)), duration_ms=9000)
    assert Webhook.objects.get(pk=webhook.pk).slow_since is not None

    finish(claim(make_test_delivery(webhook)), duration_ms=20)

    assert Webhook.objects.get(pk=webhook.pk).slow_since is None


def test_an_inactive_webhooks_delivery_is_cancelled_not_parked(organization):
    webhook = webhook_of(organization)
    delivery = make_test_delivery(webhook)
    Webhook.objects.filter(pk=webhook.pk).update(is_active=False)

    assert claim(delivery) is None
    row = stored(delivery)
    assert (row.status, row.parked_at) == (DeliveryStatus.CANCELLED, None)


def test_a_stale_message_of_a_parked_delivery_parks_nothing_more(organization):
    webhook = webhook_of(organization)
    done = make_test_delivery(webhook)
    finish(claim(done))
    [claim(make_test_delivery(webhook)) for _ in range(2)]

    assert delivery_claim(delivery_id=done.pk, expected_attempts=0) is None

    row = stored(done)
    assert (row.status, row.parked_at, row.next_attempt_at) == (DeliveryStatus.SUCCEEDED, None, None)


@pytest.mark.parametrize("threads", [12])
def test_concurrent_claims_of_one_webhook_never_pass_the_cap(postgres_only, settings, threads):
    """Twelve workers claim twelve deliveries of one webhook at once: exactly WEBHOOK_MAX_IN_FLIGHT win."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    organization = make_organization("Concorrência")
    webhook = webhook_of(organization)
    deliveries = [make_test_delivery(webhook) for _ in range(threads)]
    barrier = threading.Barrier(threads)
    results, errors = [], []

    def worker(delivery):
        try:
            barrier.wait()
            results.append(claim(delivery) is not None)
        except Exception as error:  # reported below
            errors.append(repr(error))
        finally:
            connections.close_all()

    running = [threading.Thread(target=worker, args=(delivery,)) for delivery in deliveries]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(timeout=60)

    assert errors == []
    assert results.count(True) == settings.WEBHOOK_MAX_IN_FLIGHT
    assert WebhookDelivery.objects.filter(webhook=webhook, status=DeliveryStatus.SENDING).count() == 2
    assert WebhookDelivery.objects.filter(webhook=webhook, parked_at__isnull=False).count() == threads - 2


def test_concurrent_turns_of_one_webhook_never_take_the_same_delivery_nor_pass_the_cap(
    postgres_only, settings, monkeypatch
):
    """Messages keep arriving while the webhook's two threads pass their turns along a backlog: every
    delivery is sent once, and never more than WEBHOOK_MAX_IN_FLIGHT at a time."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    webhook = webhook_of(make_organization("Turnos"))
    deliveries = [make_test_delivery(webhook) for _ in range(40)]
    sent, peak, errors = [], [0], []
    lock = threading.Lock()

    def send(delivery):
        with lock:
            sent.append(delivery.pk)
        peak[0] = max(peak[0], in_flight(webhook))
        time.sleep(0.005)
        return AttemptOutcome(200, 5)

    monkeypatch.setattr(delivery_module, "delivery_send", send)

    def deliver(rows):
        try:
            for row in rows:
                delivery = claim(row)
                while delivery is not None:
                    delivery = delivery_attempt_passing_turn(delivery)
        except Exception as error:  # reported below
            errors.append(repr(error))
        finally:
            connections.close_all()

    running = [threading.Thread(target=deliver, args=(deliveries[n::4],)) for n in range(4)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(timeout=120)

    assert errors == []
    assert sorted(sent) == sorted(row.pk for row in deliveries if stored(row).status == DeliveryStatus.SUCCEEDED)
    assert len(sent) == len(set(sent))
    assert peak[0] <= settings.WEBHOOK_MAX_IN_FLIGHT
    left = WebhookDelivery.objects.filter(webhook=webhook).exclude(status=DeliveryStatus.SUCCEEDED)
    assert all(row.parked_at is not None for row in left)  # a parked rest waits for the dispatcher, none lost


def test_a_worker_process_sends_on_its_threads_and_waits_only_when_all_are_busy(postgres_only, settings, monkeypatch):
    """The task returns once a send thread has the attempt (a receiver's wait holds no process); with every
    thread busy the next task waits for one: the backpressure. PostgreSQL: the threads write at once
    (the test's in-memory SQLite locks tables between connections)."""
    settings.WEBHOOK_SEND_THREADS, settings.WEBHOOK_MAX_IN_FLIGHT = 2, 10
    webhook = webhook_of(make_organization("Threads"))
    first, second, third = (make_test_delivery(webhook) for _ in range(3))
    receiver_answers = threading.Event()

    def send(delivery):
        receiver_answers.wait(10)
        return AttemptOutcome(200, 5)

    monkeypatch.setattr(delivery_module, "delivery_send", send)
    senders = tasks.Senders()
    senders.start()
    try:
        started = time.monotonic()
        senders.attempt(str(first.pk), 0)
        senders.attempt(str(second.pk), 0)
        assert time.monotonic() - started < 2  # both returned while their receivers still wait
        waiting = threading.Thread(target=senders.attempt, args=(str(third.pk), 0))
        waiting.start()
        time.sleep(0.5)
        assert waiting.is_alive()  # both threads busy: the third task waits
        assert stored(third).status == DeliveryStatus.PENDING
        receiver_answers.set()
        waiting.join(10)
    finally:
        senders.stop()

    assert [stored(row).status for row in (first, second, third)] == [DeliveryStatus.SUCCEEDED] * 3


@pytest.mark.parametrize("queue_empty", [True, False], ids=["queue-empty", "messages-waiting"])
def test_a_first_attempt_past_its_guard_is_queued_again_only_when_the_queue_is_empty(
    organization, queued, monkeypatch, queue_empty
):
    """While the broker still holds messages, a never-attempted delivery's message is most likely one of
    them: queuing it again would double a backlog. A due retry is queued either way."""
    webhook = webhook_of(organization)
    first, retry = make_test_delivery(webhook), make_test_delivery(webhook)
    past = timezone.now() - timedelta(seconds=1)
    WebhookDelivery.objects.filter(pk=first.pk).update(next_attempt_at=past)
    WebhookDelivery.objects.filter(pk=retry.pk).update(next_attempt_at=past, attempt_count=1)
    monkeypatch.setattr(tasks, "_queue_is_empty", lambda: queue_empty)
    queued.clear()

    tasks.dispatch_due_deliveries()

    expected = [[str(retry.pk), 1], [str(first.pk), 0]] if queue_empty else [[str(retry.pk), 1]]
    assert sorted(queued) == sorted(expected)


def test_the_dispatcher_tells_a_queue_with_messages_from_an_empty_one(monkeypatch):
    """With the broker the tests run on (the embedded one, or Redis in CI's PostgreSQL pass)."""
    from celery import current_app

    monkeypatch.undo()  # the real broker, not the module's `queued` stand-in

    with current_app.connection_for_write() as connection:
        connection.default_channel.queue_purge(current_app.conf.task_default_queue)
    assert tasks._queue_is_empty()

    current_app.send_task("integrations.deliver_webhook", args=["00000000-0000-0000-0000-000000000000", 0])
    try:
        assert not tasks._queue_is_empty()
    finally:
        with current_app.connection_for_write() as connection:
            connection.default_channel.queue_purge(current_app.conf.task_default_queue)
