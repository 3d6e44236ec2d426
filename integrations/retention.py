"""Retention: events older than EVENT_RETENTION_DAYS go, with their deliveries and attempts.

Small batches, each its own short transaction, within a time budget: no long lock, and a
backlog drains over several runs. Each organization's purge horizon is kept, so the event
feed can tell a partner that its `depois_de` may have been purged (410) rather than unknown.
"""

import structlog
from django.db.models import Max

from foundation.purge import PURGE_BATCH, PURGE_TIME_BUDGET, delete_in_batches
from foundation.retention import purge_cutoff
from integrations.models import EventPurgeHorizon, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent

logger = structlog.get_logger(__name__)


def events_purge_expired(*, now=None, batch: int = PURGE_BATCH, budget: float = PURGE_TIME_BUDGET) -> int:
    """Delete expired events a batch at a time, oldest first; returns how many events went."""
    expired = WebhookEvent.objects.filter(created_at__lt=purge_cutoff(now))
    purged = delete_in_batches(expired, delete=_purge_batch, order_by="created_at", batch=batch, budget=budget)
    if purged:
        logger.info("events_purged", events=purged)
    return purged


def _purge_batch(ids: list) -> int:
    """One batch, inside its transaction: the organizations' purge horizons move first, then the children
    go, each one statement by the parent's (indexed) key, then the events."""
    horizons = (
        WebhookEvent.objects.filter(pk__in=ids)
        .values("organization_id")
        .annotate(newest=Max("created_at"))
        .values_list("organization_id", "newest")
    )
    for organization_id, newest in horizons:
        horizon, created = EventPurgeHorizon.objects.get_or_create(
            organization_id=organization_id, defaults={"purged_before": newest}
        )
        if not created and horizon.purged_before < newest:
            EventPurgeHorizon.objects.filter(pk=organization_id, purged_before__lt=newest).update(purged_before=newest)
    WebhookDeliveryAttempt.objects.filter(delivery__event_id__in=ids).delete()
    WebhookDelivery.objects.filter(event_id__in=ids).delete()
    deleted, _ = WebhookEvent.objects.filter(pk__in=ids).delete()
    return deleted
