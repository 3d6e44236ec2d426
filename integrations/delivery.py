"""Webhook delivery: claim under a row lock, send signed, record the attempt, schedule the retry.

At least once, never after success: a delivery is claimed (status `enviando`
with a lease) under a row lock before any byte is sent, only if it is still
pending at the attempt the queue message was made for; a stale or duplicate
message finds nothing to do. The lease is renewed while the attempt runs
(integrations/leases.py); a worker that dies mid-send stops renewing it, it
expires within WEBHOOK_LEASE seconds, and the dispatcher queues the delivery
again, with the same id.
"""

import time
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache

import requests
import structlog
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from requests_hardened import Config, HTTPSession
from requests_hardened.ip_filter import InvalidIPAddress

from helpdesk.ids import parse_uuid
from integrations.leases import keeper, lease_seconds
from integrations.metrics import attempt_observed
from integrations.models import DeliveryStatus, Webhook, WebhookDelivery, WebhookDeliveryAttempt
from integrations.services import webhook_signing_secrets
from integrations.signing import signed_headers
from integrations.webhook_urls import UnsafeWebhookUrl, validate_webhook_url

logger = structlog.get_logger(__name__)

RESPONSE_EXCERPT_BYTES = 1024
DISPATCH_BATCH = 500


@dataclass(frozen=True)
class AttemptOutcome:
    status_code: int | None
    duration_ms: int
    error: str = ""
    response_excerpt: str = ""
    # What went wrong, for the log: the class only (the message can quote the URL, which may hold a token).
    error_class: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def max_attempts() -> int:
    return len(settings.WEBHOOK_RETRY_DELAYS) + 1


def _lease() -> timedelta:
    return timedelta(seconds=lease_seconds())


def _claimable(now) -> Q:
    """Pending, or being sent under a lease that ran out (its worker died)."""
    unleased = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now)
    return Q(status=DeliveryStatus.PENDING) | (Q(status=DeliveryStatus.SENDING) & unleased)


# The two statements every delivery attempt runs (hundreds a second), written out once instead of
# compiled by the ORM each time: the same SQL on PostgreSQL and SQLite, every value a parameter.
_CLAIM_SQL = """
UPDATE integrations_webhookdelivery SET status = 'enviando', lease_expires_at = %s, updated_at = %s
WHERE id = %s AND attempt_count = %s
  AND (status = 'pendente' OR (status = 'enviando' AND (lease_expires_at IS NULL OR lease_expires_at <= %s)))
  AND webhook_id IN (SELECT id FROM integrations_webhook WHERE is_active)
"""
_ATTEMPT_SQL = """
INSERT INTO integrations_webhookdeliveryattempt
    (delivery_id, number, attempted_at, status_code, duration_ms, error, response_excerpt, succeeded)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
"""
_RECORD_SQL = """
UPDATE integrations_webhookdelivery
SET attempt_count = %s, status = %s, next_attempt_at = %s, last_attempt_at = %s, lease_expires_at = NULL,
    updated_at = %s
WHERE id = %s AND attempt_count = %s AND status = 'enviando'
"""
# The webhook's failure streak (integrations.health): started by the first failure, ended by a success.
# Each runs only when the streak read with the delivery changes, and re-checks it in its WHERE.
_STREAK_START_SQL = """
UPDATE integrations_webhook SET failing_since = %s WHERE id = %s AND failing_since IS NULL
"""
_STREAK_END_SQL = """
UPDATE integrations_webhook SET failing_since = NULL WHERE id = %s AND failing_since IS NOT NULL
"""

# What a send and its record read: not the event's other columns, nor the webhook's name or events.
_SENDING_FIELDS = (
    "id",
    "attempt_count",
    "webhook_id",
    "event_id",
    "webhook__url",
    "webhook__secret",
    "webhook__previous_secret",
    "webhook__previous_secret_expires_at",
    "webhook__failing_since",
    "event__kind",
    "event__body",
)


def _params(model, **values) -> list:
    """Values as the database stores these fields (UUIDs as text on SQLite, and so on), in order."""
    return [model._meta.get_field(name).get_db_prep_value(value, connection) for name, value in values.items()]


def delivery_claim(*, delivery_id, expected_attempts: int) -> WebhookDelivery | None:
    """Take the delivery for one attempt, or None when there is nothing (left) to send.

    One UPDATE whose conditions are all on the delivery row, so a second worker waiting
    on the same row re-checks them after the first one's commit and claims nothing.
    Nothing is sent to an inactive webhook: its delivery is cancelled instead.
    """
    pk = parse_uuid(delivery_id)
    now = timezone.now()
    params = _params(WebhookDelivery, lease_expires_at=now + _lease(), updated_at=now, id=pk)
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM_SQL, [*params, expected_attempts, params[1]])
        claimed = cursor.rowcount
    if not claimed:
        candidates = WebhookDelivery.objects.filter(_claimable(now), pk=pk, attempt_count=expected_attempts)
        inactive = Webhook.objects.filter(is_active=False).values("pk")
        candidates.filter(webhook_id__in=inactive).update(
            status=DeliveryStatus.CANCELLED, next_attempt_at=None, updated_at=now
        )
        return None
    return WebhookDelivery.objects.select_related("webhook", "event").only(*_SENDING_FIELDS).get(pk=pk)


@lru_cache(maxsize=4)
def _session_for(allow_loopback: bool, allow_private: bool, timeout: float) -> HTTPSession:
    session = HTTPSession(
        Config(
            ip_filter_enable=not allow_private,
            ip_filter_allow_loopback_ips=allow_loopback,
            never_redirect=True,
            default_timeout=(timeout, timeout),
            user_agent_override="Helpdesk-Webhooks/1.0",
        )
    )
    # HTTP(S)_PROXY and friends in the worker's environment must not route deliveries elsewhere.
    session.trust_env = False
    return session


def _session() -> HTTPSession:
    """One session per worker process: a receiver's connection is kept alive from one delivery to the next."""
    return _session_for(
        settings.WEBHOOK_ALLOW_INSECURE_URLS, settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE, settings.WEBHOOK_TIMEOUT
    )


def delivery_send(delivery: WebhookDelivery) -> AttemptOutcome:
    """One POST; reads at most 1 KB of the answer, follows no redirect."""
    body = delivery.event.body.encode("utf-8")
    headers = signed_headers(
        secrets=webhook_signing_secrets(delivery.webhook),
        delivery_id=str(delivery.pk),
        event_kind=delivery.event.kind,
        timestamp=int(time.time()),
        body=body,
    )
    started = time.monotonic()
    deadline = started + settings.WEBHOOK_TIMEOUT
    try:
        validate_webhook_url(delivery.webhook.url)
        response = _session().post(delivery.webhook.url, data=body, headers=headers, stream=True, allow_redirects=False)
        try:
            excerpt = _read_excerpt(response, deadline)
        finally:
            # A short answer read to its end has already gone back to the pool: closing keeps it there.
            response.close()
    except (UnsafeWebhookUrl, InvalidIPAddress) as error:
        return _failure(started, f"Endereço de destino não permitido: {error}", error)
    except (requests.Timeout, _TooSlow, SoftTimeLimitExceeded) as error:
        return _failure(started, f"Tempo esgotado ({settings.WEBHOOK_TIMEOUT:g} s).", error)
    except requests.RequestException as error:
        return _failure(started, f"Falha de conexão: {type(error).__name__}: {error}"[:1000], error)
    except Exception as error:  # the attempt is recorded whatever went wrong
        logger.exception("webhook_delivery_unexpected_error", delivery_id=str(delivery.pk))
        return _failure(started, f"Erro inesperado: {type(error).__name__}"[:1000], error)
    outcome_error = "" if 200 <= response.status_code < 300 else f"Resposta HTTP {response.status_code}."
    if 300 <= response.status_code < 400:
        outcome_error = f"Redirecionamento {response.status_code} não é seguido."
    return AttemptOutcome(
        status_code=response.status_code,
        duration_ms=_elapsed_ms(started),
        error=outcome_error,
        response_excerpt=excerpt.decode("utf-8", "replace"),
    )


class _TooSlow(Exception):
    """The whole attempt, not just one socket read, went past WEBHOOK_TIMEOUT."""


def _read_excerpt(response, deadline: float) -> bytes:
    """At most 1 KB of the answer, in small reads, and all of it within the deadline.

    requests' timeout bounds each socket read only: a receiver trickling a byte
    at a time would otherwise hold the worker for as long as it likes.
    """
    if time.monotonic() > deadline:
        raise _TooSlow()
    read = getattr(response.raw, "read1", None) or response.raw.read
    chunks: list[bytes] = []
    size = 0
    while size < RESPONSE_EXCERPT_BYTES:
        chunk = read(RESPONSE_EXCERPT_BYTES - size, decode_content=True)
        if time.monotonic() > deadline:
            raise _TooSlow()
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _failure(started: float, error: str, exception: BaseException) -> AttemptOutcome:
    return AttemptOutcome(
        status_code=None, duration_ms=_elapsed_ms(started), error=error, error_class=type(exception).__name__
    )


def delivery_record(*, delivery: WebhookDelivery, outcome: AttemptOutcome, attempted_at) -> WebhookDelivery:
    """Log the attempt; then success, a retry at the next delay, or `falhou`. 410 deactivates the webhook.

    The state changes only if the delivery is still ours (the attempt we claimed, still
    `enviando`): when our lease ran out and another attempt took over, it owns the state.
    """
    number = delivery.attempt_count + 1
    now = timezone.now()
    status, next_attempt_at = _state_after(outcome, number, now)
    attempt = _params(
        WebhookDeliveryAttempt,
        delivery=delivery.pk,
        number=number,
        attempted_at=attempted_at,
        status_code=outcome.status_code,
        duration_ms=outcome.duration_ms,
        error=outcome.error,
        response_excerpt=outcome.response_excerpt,
        succeeded=outcome.succeeded,
    )
    state = _params(
        WebhookDelivery,
        attempt_count=number,
        status=status,
        next_attempt_at=next_attempt_at,
        last_attempt_at=attempted_at,
        updated_at=now,
        id=delivery.pk,
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_ATTEMPT_SQL, attempt)
        cursor.execute(_RECORD_SQL, [*state, delivery.attempt_count])
        ours = cursor.rowcount
        # Only when the streak read with the delivery would change: a healthy webhook's success
        # (nearly every attempt) writes nothing more. The statements re-check it against a race.
        webhook_id = _params(Webhook, id=delivery.webhook_id)[0]
        failing = delivery.webhook.failing_since is not None
        if ours and outcome.succeeded and failing:
            cursor.execute(_STREAK_END_SQL, [webhook_id])
        elif ours and not outcome.succeeded and not failing:
            cursor.execute(_STREAK_START_SQL, [_params(Webhook, failing_since=attempted_at)[0], webhook_id])
    given_up = bool(ours) and status == DeliveryStatus.FAILED
    attempt_observed(
        event=delivery.event.kind, status_code=outcome.status_code, duration_ms=outcome.duration_ms, given_up=given_up
    )
    if ours and outcome.status_code == 410:
        webhook_deactivate_gone(webhook_id=delivery.webhook_id)
    if ours:
        delivery.attempt_count, delivery.status, delivery.next_attempt_at = number, status, next_attempt_at
        delivery.last_attempt_at, delivery.lease_expires_at, delivery.updated_at = attempted_at, None, now
        return delivery
    return WebhookDelivery.objects.get(pk=delivery.pk)


def _state_after(outcome: AttemptOutcome, number: int, now) -> tuple[str, object]:
    if outcome.succeeded:
        return DeliveryStatus.SUCCEEDED, None
    if outcome.status_code == 410 or number >= max_attempts():
        return DeliveryStatus.FAILED, None
    return DeliveryStatus.PENDING, now + timedelta(seconds=settings.WEBHOOK_RETRY_DELAYS[number - 1])


GONE_REASON = "Receptor respondeu 410 Gone."


def webhook_deactivate_gone(*, webhook_id) -> None:
    """410 Gone: the partner removed the endpoint; stop sending to it."""
    now = timezone.now()
    with transaction.atomic():
        Webhook.objects.filter(pk=webhook_id, is_active=True).update(
            is_active=False, deactivated_at=now, deactivation_reason=GONE_REASON, updated_at=now
        )
        WebhookDelivery.objects.filter(webhook_id=webhook_id, status=DeliveryStatus.PENDING).update(
            status=DeliveryStatus.CANCELLED, next_attempt_at=None
        )


def delivery_attempt(*, delivery_id, expected_attempts: int) -> WebhookDelivery | None:
    delivery = delivery_claim(delivery_id=delivery_id, expected_attempts=expected_attempts)
    if delivery is None:
        return None
    number = delivery.attempt_count + 1
    with keeper.holding(delivery.pk, delivery.attempt_count):
        attempted_at = timezone.now()
        outcome = delivery_send(delivery)
        recorded = delivery_record(delivery=delivery, outcome=outcome, attempted_at=attempted_at)
    _attempt_log(delivery=delivery, number=number, outcome=outcome, status=recorded.status)
    return recorded


def _attempt_log(*, delivery: WebhookDelivery, number: int, outcome: AttemptOutcome, status: str) -> None:
    """One line per attempt: ids, event kind, the answer's status code or the error's class.
    Never the URL (it may carry a token), the body, the signatures or the receiver's answer."""
    (logger.info if outcome.succeeded else logger.warning)(
        "webhook_delivery_attempt",
        delivery_id=str(delivery.pk),
        webhook_id=str(delivery.webhook_id),
        event_kind=delivery.event.kind,
        attempt=number,
        status_code=outcome.status_code,
        error_class=outcome.error_class or None,
        duration_ms=outcome.duration_ms,
        outcome=status,
    )


def deliveries_claim_due(*, limit: int = DISPATCH_BATCH) -> list[tuple]:
    """Due retries, messages that never arrived and leases of dead workers, each queued once.

    SKIP LOCKED lets several beats or dispatchers run without taking the same rows.
    """
    now = timezone.now()
    with transaction.atomic():
        due = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(
                Q(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
                | Q(status=DeliveryStatus.SENDING, lease_expires_at__lte=now)
            )
            .order_by("next_attempt_at")
            .only("id", "attempt_count")[:limit]
        )
        if due:
            WebhookDelivery.objects.filter(pk__in=[d.pk for d in due]).update(
                status=DeliveryStatus.PENDING,
                lease_expires_at=None,
                next_attempt_at=now + timedelta(seconds=settings.WEBHOOK_REQUEUE_AFTER),
            )
    return [(d.pk, d.attempt_count) for d in due]


def deliveries_mark_due(delivery_ids: list) -> None:
    """Deliveries whose message could not be queued (the broker is down): due now, so the
    dispatcher's first run after the broker is back queues them, not one a minute later."""
    WebhookDelivery.objects.filter(pk__in=delivery_ids, status=DeliveryStatus.PENDING).update(
        next_attempt_at=timezone.now()
    )
