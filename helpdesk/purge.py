"""Deleting many old rows without a long lock: small batches, each its own transaction, within a time budget."""

import time

from django.db import transaction
from django.db.models import QuerySet

PURGE_BATCH = 500
PURGE_TIME_BUDGET = 50.0  # seconds; the next run carries on


def delete_in_batches(queryset: QuerySet, *, batch: int = PURGE_BATCH, budget: float = PURGE_TIME_BUDGET) -> int:
    """Delete the rows of `queryset`, `batch` at a time by primary key; returns the rows deleted
    (related rows removed by cascade included, as QuerySet.delete counts them)."""
    started = time.monotonic()
    deleted = 0
    while time.monotonic() - started < budget:
        with transaction.atomic():
            ids = list(queryset.order_by("pk").values_list("pk", flat=True)[:batch])
            if ids:
                deleted += queryset.model._default_manager.filter(pk__in=ids).delete()[0]
        if len(ids) < batch:
            break
    return deleted
