"""Celery tasks, and queueing them: fetch by id, call a service. Safe to run twice."""

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from celery import current_app, shared_task
from celery.signals import worker_process_init, worker_process_shutdown
from django.conf import settings

from integrations.delivery import (
    DISPATCH_BATCH,
    deliveries_claim_due,
    deliveries_mark_due,
    deliveries_unpark,
    deliveries_unpark_stalled,
    delivery_attempt_claimed,
    delivery_attempt_passing_turn,
    delivery_claim,
)
from integrations.health import webhooks_deactivate_failing
from integrations.idempotency import idempotency_purge_expired
from integrations.retention import events_purge_expired

logger = logging.getLogger(__name__)


@shared_task(
    name="integrations.deliver_webhook",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    # A backstop for a receiver that stalls where requests' timeouts cannot see:
    # the attempt is recorded as a timeout and the worker is free again.
    soft_time_limit=settings.WEBHOOK_TIMEOUT * 2 + 5,
    time_limit=settings.WEBHOOK_TIMEOUT * 2 + 15,
)
def deliver_webhook(delivery_id: str, expected_attempts: int) -> None:
    senders.attempt(delivery_id, expected_attempts)


def hand_over(webhook_id) -> None:
    """The turn an attempt held goes to its webhook's oldest parked delivery, queued."""
    try:
        waiting = deliveries_unpark(webhook_id=webhook_id)
    except Exception:  # the dispatcher unparks a stalled webhook's deliveries anyway
        logger.warning("could not hand webhook %s's turn over", webhook_id, exc_info=True)
        return
    if waiting:
        deliveries_enqueue(waiting)


class Senders:
    """The threads on which a worker process sends its attempts (WEBHOOK_SEND_THREADS).

    An attempt mostly waits on the receiver, up to WEBHOOK_TIMEOUT: on a thread, that wait holds
    neither a process nor a Celery slot. The task claims the delivery in its own process (where the
    cap and the slow share are counted) and returns once a thread has it; it waits only while all the
    threads are busy, which is the backpressure. A process that dies with attempts on its threads stops
    renewing their leases, and the dispatcher sends them again (at least once, as before). Outside a
    worker's pool (tests, the shell, a `threads` pool whose own threads are the slots), attempts run
    inline.
    """

    def __init__(self):
        self._pid = None
        self._executor: ThreadPoolExecutor | None = None
        self._free: threading.BoundedSemaphore | None = None

    def start(self) -> None:
        """In a prefork child as it starts (worker_process_init)."""
        self._pid = os.getpid()
        self._executor = ThreadPoolExecutor(settings.WEBHOOK_SEND_THREADS, thread_name_prefix="webhook-send")
        self._free = threading.BoundedSemaphore(settings.WEBHOOK_SEND_THREADS)

    def stop(self) -> None:
        """The attempts in flight end before the process does (a warm shutdown loses none)."""
        if self._executor is not None and self._pid == os.getpid():
            self._executor.shutdown(wait=True)

    def attempt(self, delivery_id, expected_attempts: int) -> None:
        if self._executor is None or self._pid != os.getpid():
            delivery = delivery_claim(delivery_id=delivery_id, expected_attempts=expected_attempts)
            if delivery is not None:
                send_in_turn(delivery)
            return
        self._free.acquire()  # a free thread first: the claim then never waits with a lease running
        try:
            delivery = delivery_claim(delivery_id=delivery_id, expected_attempts=expected_attempts)
            if delivery is not None:
                self._executor.submit(self._send, delivery)
        except BaseException:
            self._free.release()
            raise
        if delivery is None:
            self._free.release()

    def _send(self, delivery) -> None:
        try:
            send_in_turn(delivery)
        except Exception:
            logger.exception("webhook attempt of %s failed on its thread", delivery.pk)
        finally:
            self._free.release()


# After this many turns in a row on one thread, the next goes back through the queue (hand_over), so a
# long backlog does not keep a thread to itself.
TURNS_IN_A_ROW = 50


def send_in_turn(delivery) -> None:
    """Send; then the webhook's oldest parked delivery takes the turn on this same thread."""
    webhook_id = delivery.webhook_id
    for _turn in range(TURNS_IN_A_ROW):
        delivery = delivery_attempt_passing_turn(delivery)
        if delivery is None:
            return
    delivery_attempt_claimed(delivery)
    hand_over(webhook_id)


senders = Senders()


@worker_process_init.connect(dispatch_uid="integrations.senders_start")
def _start_senders(**kwargs) -> None:
    senders.start()


@worker_process_shutdown.connect(dispatch_uid="integrations.senders_stop")
def _stop_senders(**kwargs) -> None:
    senders.stop()


@shared_task(name="integrations.dispatch_due_deliveries", ignore_result=True)
def dispatch_due_deliveries() -> int:
    """Queue every due delivery, a batch at a time: a backlog reaches the workers at once and
    drains at their speed. Stops early when the broker refuses (the rows stay due)."""
    queued, first_attempts = 0, _queue_is_empty()
    while True:
        due = deliveries_claim_due(limit=DISPATCH_BATCH, first_attempts=first_attempts)
        failed = deliveries_enqueue(due)
        queued += len(due) - failed
        if failed or len(due) < DISPATCH_BATCH:
            break
    stalled = deliveries_unpark_stalled()
    return queued + len(stalled) - deliveries_enqueue(stalled)


@shared_task(name="integrations.purge_idempotency_records")
def purge_idempotency_records() -> int:
    return idempotency_purge_expired()


@shared_task(name="integrations.purge_expired_events", ignore_result=True)
def purge_expired_events() -> int:
    return events_purge_expired()


@shared_task(name="integrations.deactivate_failing_webhooks", ignore_result=True)
def deactivate_failing_webhooks() -> int:
    return webhooks_deactivate_failing()


def _queue_is_empty() -> bool:
    """The broker's queue holds no message: a never-attempted delivery past its guard then lost its message.
    Unknown (the broker is away) counts as empty: re-queuing is what recovers from a lost message."""
    try:
        with current_app.connection_for_write() as connection:
            queue = current_app.conf.task_default_queue
            return connection.default_channel.queue_declare(queue=queue, passive=True).message_count == 0
    except Exception:
        return True


def deliveries_enqueue(pending: list[tuple]) -> int:
    """Queue one attempt of each; returns how many could not be queued.

    The first refusal stops the rest (the broker is down: each try could wait for its
    connect timeout); those are marked due now, and the dispatcher queues them as soon
    as the broker is back.
    """
    for index, (delivery_id, expected_attempts) in enumerate(pending):
        try:
            deliver_webhook.apply_async(args=[str(delivery_id), expected_attempts], retry=False)
        except Exception:
            unqueued = [unsent for unsent, _ in pending[index:]]
            logger.warning(
                "could not queue %d webhook deliveries (first %s); the dispatcher will retry",
                len(unqueued),
                delivery_id,
                exc_info=True,
            )
            break
    else:
        return 0
    try:
        deliveries_mark_due(unqueued)
    except Exception:  # then the first-attempt guard (WEBHOOK_REQUEUE_AFTER) brings them back
        logger.warning("could not mark %d unqueued deliveries due", len(unqueued), exc_info=True)
    return len(unqueued)
