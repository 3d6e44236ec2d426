"""Celery tasks, and queueing them: fetch by id, call a service. Safe to run twice."""

import logging

from celery import shared_task
from django.conf import settings

from integrations.delivery import (
    DISPATCH_BATCH,
    deliveries_claim_due,
    deliveries_mark_due,
    deliveries_unpark,
    delivery_attempt,
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
    delivery = delivery_attempt(delivery_id=delivery_id, expected_attempts=expected_attempts)
    if delivery is not None:
        hand_over(delivery.webhook_id)


def hand_over(webhook_id) -> None:
    """The turn an attempt held goes to its webhook's oldest parked delivery, queued at once."""
    try:
        waiting = deliveries_unpark(webhook_id=webhook_id)
    except Exception:  # the dispatcher takes parked deliveries anyway, PARKED_RECHECK later
        logger.warning("could not hand webhook %s's turn over", webhook_id, exc_info=True)
        return
    if waiting:
        deliveries_enqueue(waiting)


@shared_task(name="integrations.dispatch_due_deliveries", ignore_result=True)
def dispatch_due_deliveries() -> int:
    """Queue every due delivery, a batch at a time: a backlog reaches the workers at once and
    drains at their speed. Stops early when the broker refuses (the rows stay due)."""
    queued = 0
    while True:
        due = deliveries_claim_due(limit=DISPATCH_BATCH)
        failed = deliveries_enqueue(due)
        queued += len(due) - failed
        if failed or len(due) < DISPATCH_BATCH:
            return queued


@shared_task(name="integrations.purge_idempotency_records")
def purge_idempotency_records() -> int:
    return idempotency_purge_expired()


@shared_task(name="integrations.purge_expired_events", ignore_result=True)
def purge_expired_events() -> int:
    return events_purge_expired()


@shared_task(name="integrations.deactivate_failing_webhooks", ignore_result=True)
def deactivate_failing_webhooks() -> int:
    return webhooks_deactivate_failing()


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
