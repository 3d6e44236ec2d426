"""Celery tasks of the integrations app."""

from celery import shared_task

from integrations.idempotency import idempotency_purge_expired


@shared_task(name="integrations.purge_idempotency_records")
def purge_idempotency_records() -> int:
    return idempotency_purge_expired()
