"""Celery tasks, and queueing them: fetch by id, call a service. Safe to run twice."""

import logging

from celery import shared_task
from django.conf import settings

from integrations.delivery import deliveries_claim_due, delivery_attempt
from integrations.idempotency import idempotency_purge_expired

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
    delivery_attempt(delivery_id=delivery_id, expected_attempts=expected_attempts)


@shared_task(name="integrations.dispatch_due_deliveries", ignore_result=True)
def dispatch_due_deliveries() -> int:
    due = deliveries_claim_due()
    deliveries_enqueue(due)
    return len(due)


@shared_task(name="integrations.purge_idempotency_records")
def purge_idempotency_records() -> int:
    return idempotency_purge_expired()


def deliveries_enqueue(pending: list[tuple]) -> None:
    """Best effort: with the broker down, the dispatcher re-queues later."""
    for delivery_id, expected_attempts in pending:
        try:
            deliver_webhook.apply_async(args=[str(delivery_id), expected_attempts], retry=False)
        except Exception:
            logger.warning("could not queue webhook delivery %s; the dispatcher will retry", delivery_id, exc_info=True)
