"""The leases of the deliveries this worker process is sending, kept alive while it lives.

A claim leases a delivery for WEBHOOK_LEASE seconds (6). While the attempt
runs, a thread of the process renews the lease every third of that, so a slow
receiver (up to the task's time limit) keeps its delivery. A worker that dies
(SIGKILL, out of memory, a lost machine) stops renewing: its deliveries are free
again within WEBHOOK_LEASE seconds and the dispatcher queues them again, with the
same delivery id. Without the thread the lease had to outlast the slowest
possible attempt, and a dead worker held its deliveries that long (80 s).
"""

import logging
import os
import threading
import time
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

logger = logging.getLogger(__name__)


def lease_seconds() -> float:
    return settings.WEBHOOK_LEASE


def longest_attempt() -> float:
    """No attempt is kept alive past this (the task's hard limit on a prefork pool; a thread pool has no
    time limits, so an attempt stuck where no timeout reaches stops being renewed and is taken over)."""
    return settings.WEBHOOK_TIMEOUT * 2 + 15


def deliveries_lease_renew(held: dict) -> list:
    """Push the lease of each held delivery (id -> the attempt it was claimed for) forward.

    Only a delivery still `enviando` at that attempt is ours: one whose lease ran out and
    that another worker took over keeps its new owner's lease. Returns the ids renewed.
    """
    from integrations.models import DeliveryStatus, WebhookDelivery

    expires = timezone.now() + timedelta(seconds=lease_seconds())
    return [
        delivery_id
        for delivery_id, attempt_count in held.items()
        if WebhookDelivery.objects.filter(
            pk=delivery_id, attempt_count=attempt_count, status=DeliveryStatus.SENDING
        ).update(lease_expires_at=expires)
    ]


class LeaseKeeper:
    """One per process (prefork children each get their own after the fork)."""

    def __init__(self):
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._held: dict = {}
        self._since: dict = {}  # when each held attempt began
        self._thread: threading.Thread | None = None

    @contextmanager
    def holding(self, delivery_id, attempt_count: int):
        """Renew the delivery's lease until the block ends."""
        self._start()
        with self._lock:
            self._held[delivery_id] = attempt_count
            self._since[delivery_id] = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self._held.pop(delivery_id, None)
                self._since.pop(delivery_id, None)

    def renewable(self) -> dict:
        """The held attempts to keep alive: those that began less than longest_attempt() ago."""
        now = time.monotonic()
        with self._lock:
            return {pk: count for pk, count in self._held.items() if now - self._since[pk] < longest_attempt()}

    def _start(self) -> None:
        if self._pid != os.getpid():
            self._reset()  # a forked child: the parent's thread and lock are not ours
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="webhook-leases", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(lease_seconds() / 3)
            held = self.renewable()
            try:
                if held:
                    deliveries_lease_renew(held)
                else:
                    connection.close()  # this thread's own connection, idle until the next slow attempt
            except Exception:
                logger.warning("could not renew webhook delivery leases", exc_info=True)
                connection.close()


keeper = LeaseKeeper()
