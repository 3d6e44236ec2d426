"""Deleting many old rows without a long lock: small batches, each its own transaction, within a time budget."""

import time
from collections.abc import Callable

from django.db import transaction
from django.db.models import QuerySet

PURGE_BATCH = 500
PURGE_TIME_BUDGET = 50.0  # seconds; the next run carries on


def delete_in_batches(
    queryset: QuerySet,
    *,
    delete: Callable[[list], int] | None = None,
    order_by: str = "pk",
    batch: int = PURGE_BATCH,
    budget: float = PURGE_TIME_BUDGET,
) -> int:
    """Delete the rows of `queryset`, `batch` at a time (first in `order_by`), each batch in its own transaction
    until one comes back short or the budget is spent; returns what the batches' deletes counted.

    `delete` takes a batch's primary keys and returns its count; by default QuerySet.delete, whose count
    includes the related rows removed by cascade. A purge that keeps something of what it deletes, or deletes
    the children itself, passes its own (integrations.retention)."""
    delete = delete or (lambda ids: queryset.model._default_manager.filter(pk__in=ids).delete()[0])
    started = time.monotonic()
    deleted = 0
    while time.monotonic() - started < budget:
        with transaction.atomic():
            ids = list(queryset.order_by(order_by).values_list("pk", flat=True)[:batch])
            if ids:
                deleted += delete(ids)
        if len(ids) < batch:
            break
    return deleted
