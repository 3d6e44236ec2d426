"""Webhook delivery metrics: attempts as the workers record them, and the queue read at scrape time.

The attempt counters live in the worker processes (foundation/metrics/worker.py exposes them).
The queue gauges are read from the database when the web's /metrics is scraped, by one
grouped statement over the unfinished deliveries (the `delivery_due` index on status): the
request path never pays for them.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Min, Q
from django.utils import timezone
from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

from foundation.metrics.instruments import never_fails
from integrations.models import DeliveryStatus, WebhookDelivery

logger = logging.getLogger(__name__)

# Up to twice WEBHOOK_TIMEOUT's default (10 s): a timeout lands in the last buckets.
ATTEMPT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)

SUCCESS = "sucesso"
HTTP_FAILURE = "falha_http"
NO_ANSWER = "sem_resposta"

delivery_attempts = Counter(
    "helpdesk_webhook_delivery_attempts",
    "Webhook delivery attempts, by event kind and outcome: sucesso (2xx), falha_http (any other "
    "answer, 3xx and 410 included) or sem_resposta (timeout, connection error, refused address).",
    ["event", "outcome"],
)
attempt_duration = Histogram(
    "helpdesk_webhook_attempt_duration_seconds",
    "Time of one delivery attempt, from the request to the end of the answer's first 1 KB, by outcome.",
    ["outcome"],
    buckets=ATTEMPT_BUCKETS,
)
deliveries_failed = Counter(
    "helpdesk_webhook_deliveries_failed",
    "Deliveries given up (status falhou: the last retry failed, or the receiver answered 410), by event kind.",
    ["event"],
)


def attempt_outcome(status_code: int | None) -> str:
    if status_code is None:
        return NO_ANSWER
    return SUCCESS if 200 <= status_code < 300 else HTTP_FAILURE


@never_fails
def attempt_observed(*, event: str, status_code: int | None, duration_ms: int, given_up: bool) -> None:
    """One recorded attempt (integrations.delivery.delivery_record)."""
    outcome = attempt_outcome(status_code)
    delivery_attempts.labels(event, outcome).inc()
    attempt_duration.labels(outcome).observe(duration_ms / 1000)
    if given_up:
        deliveries_failed.labels(event).inc()


# Held for a suspended organization (integrations.delivery): pending, but no worker is behind on it.
HELD = Q(status=DeliveryStatus.PENDING, next_attempt_at__isnull=True)


class DeliveryQueueCollector:
    """Unfinished deliveries by status, and the queue lag: how long the oldest delivery that is due
    (its first attempt since it was created, a retry since its backoff ran out) has waited.

    A delivery's due time is not a column: `next_attempt_at` also carries the dispatcher's re-queue
    guard, moved forward every time a delivery is queued again, so a backlog stuck in the broker
    would never look older than WEBHOOK_REQUEUE_AFTER. The due time is rebuilt from the creation
    (no attempt yet) or the last attempt plus its retry delay; the last attempt's start is recorded,
    so a retry's lag reads up to one attempt's duration high. Deliveries held for a suspended
    organization count as pending, never as late.
    """

    def collect(self):
        try:
            groups = list(
                WebhookDelivery.objects.filter(status__in=(DeliveryStatus.PENDING, DeliveryStatus.SENDING))
                .order_by()
                .values_list("status", "attempt_count")
                .annotate(
                    total=Count("id"),
                    oldest_created=Min("created_at", filter=~HELD),
                    oldest_attempt=Min("last_attempt_at", filter=~HELD),
                )
            )
        except DatabaseError:
            # The rest of the scrape is still worth having; these gauges go missing (alert on absent()).
            logger.warning("delivery queue metrics unavailable", exc_info=True)
            return
        now = timezone.now()
        pending = GaugeMetricFamily(
            "helpdesk_webhook_deliveries_pending",
            "Deliveries not finished yet, by status (pendente: waiting for an attempt; enviando: being sent).",
            labels=["status"],
        )
        totals = {DeliveryStatus.PENDING.value: 0, DeliveryStatus.SENDING.value: 0}
        due_since = []
        for status, attempts, total, oldest_created, oldest_attempt in groups:
            totals[status] += total
            due_since.append(self._due_since(attempts, oldest_created, oldest_attempt))
        for status, total in totals.items():
            pending.add_metric([status], total)
        yield pending
        lag = max([(now - due).total_seconds() for due in due_since if due is not None and due <= now], default=0.0)
        yield GaugeMetricFamily(
            "helpdesk_webhook_queue_lag_seconds",
            "Age of the oldest due delivery not sent yet (0 when none is due): how far the workers are behind.",
            value=lag,
        )

    @staticmethod
    def _due_since(attempts: int, oldest_created, oldest_attempt):
        if attempts == 0 or oldest_attempt is None:
            return oldest_created
        delays = settings.WEBHOOK_RETRY_DELAYS
        return oldest_attempt + timedelta(seconds=delays[min(attempts, len(delays)) - 1])
