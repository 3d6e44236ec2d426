"""Walking a large table a batch at a time, for work that must not hold one transaction over it all (a migration's
backfill, the beat's re-target of an organization's tickets)."""

from collections.abc import Iterator

from django.db.models import QuerySet


def key_batches(queryset: QuerySet, size: int) -> Iterator[list]:
    """The primary keys of `queryset` in order, at most `size` at a time; each batch is read after the one before
    was used (keyset: it starts after the last key given), so a caller may change rows in between."""
    last = None
    while True:
        remaining = queryset if last is None else queryset.filter(pk__gt=last)
        keys = list(remaining.order_by("pk").values_list("pk", flat=True)[:size])
        if not keys:
            return
        yield keys
        last = keys[-1]
