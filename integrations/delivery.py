"""Webhook delivery: claim under a row lock, send signed, record the attempt, schedule the retry.

At least once, never after success: a delivery is claimed (status `enviando`
with a lease) under a row lock before any byte is sent, only if it is still
pending at the attempt the queue message was made for; a stale or duplicate
message finds nothing to do. The lease is renewed while the attempt runs
(integrations/leases.py); a worker that dies mid-send stops renewing it, it
expires within WEBHOOK_LEASE seconds, and the dispatcher queues the delivery
again, with the same id.

Nothing leaves for a suspended organization: its deliveries are held (pending, with no due time, so no
dispatcher run takes them again) and made due when it is restored (deliveries_release_held).
"""

import threading
import time
import uuid
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

from foundation.db import Table, db_value, model_sql
from foundation.ids import parse_uuid
from helpdesk.models import Organization
from integrations import attempt_errors
from integrations.bodies import body_with_blocks, delivery_block_names
from integrations.leases import keeper, lease_seconds
from integrations.metrics import attempt_observed
from integrations.models import DeliveryStatus, Webhook, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from integrations.services import webhook_deactivate, webhook_signing_secrets
from integrations.signing import signed_headers
from integrations.webhook_urls import UnsafeWebhookUrl, validate_webhook_url

logger = structlog.get_logger(__name__)

RESPONSE_EXCERPT_BYTES = 1024
DISPATCH_BATCH = 500
# 410 Gone: the partner removed the endpoint; nothing more is sent to it (webhook_deactivate).
GONE_REASON = "Receptor respondeu 410 Gone."


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


# The statements every delivery attempt runs (hundreds a second), written out once instead of
# compiled by the ORM each time: the same SQL on PostgreSQL and SQLite, with the models' names and
# DeliveryStatus's values, every other value a parameter.
_UPDATES = {
    "delivery": WebhookDelivery,
    "running": Table(WebhookDelivery, "running"),
    "pending": DeliveryStatus.PENDING,
    "sending": DeliveryStatus.SENDING,
}
# Claimable (_claimable): pending, or being sent under a lease that ran out by the instant given.
_CLAIMABLE = model_sql(
    "({delivery.status} = {pending} OR ({delivery.status} = {sending}"
    " AND ({delivery.lease_expires_at} IS NULL OR {delivery.lease_expires_at} <= %s)))",
    **_UPDATES,
)
# A message of a webhook at its cap (most of a backlog's) is parked by one statement, without the lock.
# A slot freed meanwhile still comes back to it: the attempt that ends hands its turn to the oldest parked
# delivery, and the dispatcher unparks those of a webhook with nothing in flight.
_PARK_IF_FULL_SQL = model_sql(
    """
UPDATE {delivery} SET {delivery.status} = {pending}, {delivery.lease_expires_at} = NULL,
    {delivery.parked_at} = COALESCE({delivery.parked_at}, %s), {delivery.next_attempt_at} = %s,
    {delivery.updated_at} = %s
WHERE {delivery.id} = %s AND {delivery.attempt_count} = %s
  AND {claimable}
  AND (SELECT COUNT(*) FROM {running}
       WHERE {running.webhook} = {delivery}.{delivery.webhook} AND {running.status} = {sending}
         AND {running.lease_expires_at} > %s AND {running.id} <> %s) >= %s
""",
    claimable=_CLAIMABLE,
    **_UPDATES,
)
_ATTEMPT_SQL = model_sql(
    """
INSERT INTO {attempt}
    ({attempt.delivery}, {attempt.number}, {attempt.attempted_at}, {attempt.status_code}, {attempt.duration_ms},
     {attempt.error}, {attempt.response_excerpt}, {attempt.succeeded})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
""",
    attempt=WebhookDeliveryAttempt,
)
_RECORD_SQL = model_sql(
    """
UPDATE {delivery}
SET {delivery.attempt_count} = %s, {delivery.status} = %s, {delivery.next_attempt_at} = %s,
    {delivery.last_attempt_at} = %s, {delivery.lease_expires_at} = NULL, {delivery.updated_at} = %s
WHERE {delivery.id} = %s AND {delivery.attempt_count} = %s AND {delivery.status} = {sending}
""",
    **_UPDATES,
)
# What the webhook's last attempt says of it (integrations.health, and the slow share): the failure streak,
# started by the first failure and ended by a success, and slowness. Written only when one of them changes,
# each re-checked in the statement against a race.
_HEALTH_SQL = model_sql(
    """
UPDATE {webhook} SET
    {webhook.failing_since} = CASE WHEN %s THEN NULL ELSE COALESCE({webhook.failing_since}, %s) END,
    {webhook.slow_since} = CASE WHEN %s THEN NULL ELSE COALESCE({webhook.slow_since}, %s) END
WHERE {webhook.id} = %s
""",
    webhook=Webhook,
)

# A claim: its webhook's row locked (PostgreSQL; SQLite has one writer at a time) and read with what the
# send needs, then the delivery claimed only if it is still claimable at the attempt its message was made
# for and its webhook has room: the count runs after the lock, so every claim committed before is in it.
_SENDING = {
    "d": Table(WebhookDelivery, "d"),
    "w": Table(Webhook, "w"),
    "e": Table(WebhookEvent, "e"),
    "o": Table(Organization, "o"),
    "pending": DeliveryStatus.PENDING,
}
_SENDING_COLUMNS = model_sql(
    """
SELECT {d.id}, {d.attempt_count}, {d.blocks}, {w.id}, {w.is_active}, {w.url}, {w.secret}, {w.previous_secret},
    {w.previous_secret_expires_at}, {w.failing_since}, {w.slow_since}, {e.id}, {e.kind}, {e.body},
    {e.ticket_blocks}, {o.id}, {o.is_active}
FROM {d}
JOIN {w} ON {w.id} = {d.webhook}
JOIN {e} ON {e.id} = {d.event}
JOIN {o} ON {o.id} = {w.organization}
""",
    **_SENDING,
)
_SENDING_BY_ID_SQL = _SENDING_COLUMNS + model_sql("WHERE {d.id} = %s", **_SENDING)
_CLAIM_IF_ROOM_SQL = model_sql(
    """
UPDATE {delivery} SET {delivery.status} = {sending}, {delivery.lease_expires_at} = %s, {delivery.parked_at} = NULL,
    {delivery.updated_at} = %s
WHERE {delivery.id} = %s AND {delivery.attempt_count} = %s
  AND {claimable}
  AND (SELECT COUNT(*) FROM {running}
       WHERE {running.webhook} = %s AND {running.status} = {sending} AND {running.lease_expires_at} > %s
         AND {running.id} <> %s) < %s
""",
    claimable=_CLAIMABLE,
    **_UPDATES,
)
_PARK_SQL = model_sql(
    """
UPDATE {delivery} SET {delivery.status} = {pending}, {delivery.lease_expires_at} = NULL,
    {delivery.parked_at} = COALESCE({delivery.parked_at}, %s), {delivery.next_attempt_at} = %s,
    {delivery.updated_at} = %s
WHERE {delivery.id} = %s AND {delivery.attempt_count} = %s
  AND {claimable}
""",
    claimable=_CLAIMABLE,
    **_UPDATES,
)
# A suspended organization's delivery, held: pending without a due time until it is restored. The
# organization is read again by this statement, after the webhook's lock: a restore that committed
# meanwhile (it takes the same locks, deliveries_release_held) is seen, and nothing is held.
_HOLD_SQL = model_sql(
    """
UPDATE {delivery} SET {delivery.status} = {pending}, {delivery.lease_expires_at} = NULL,
    {delivery.parked_at} = NULL, {delivery.next_attempt_at} = NULL, {delivery.updated_at} = %s
WHERE {delivery.id} = %s AND {delivery.attempt_count} = %s
  AND {claimable}
  AND NOT EXISTS (SELECT 1 FROM {organization} WHERE {organization.id} = %s AND {organization.is_active} = %s)
""",
    claimable=_CLAIMABLE,
    organization=Organization,
    **_UPDATES,
)
# The next parked delivery of an active webhook, for the turn an ended attempt passes on (SKIP LOCKED: the
# webhook's other thread takes another one).
_FOLLOWING_SQL = _SENDING_COLUMNS + model_sql(
    """
WHERE {d.webhook} = %s AND {w.is_active} = %s AND {o.is_active} = %s AND {d.parked_at} IS NOT NULL
  AND {d.status} = {pending}
ORDER BY {d.parked_at}, {d.created_at}
LIMIT 1
""",
    **_SENDING,
)


def _params(model, **values) -> list:
    """Values as the database stores these fields (UUIDs as text on SQLite, and so on), in order."""
    return [db_value(model, name, value) for name, value in values.items()]


class SlowSlots:
    """The send threads of this worker process that slow webhooks may take: WEBHOOK_SLOW_SHARE of them.
    Per process, so no row is contended: every worker process keeps the rest for healthy webhooks."""

    def __init__(self):
        self._lock = threading.Lock()
        self._taken = 0

    def limit(self) -> int:
        return max(1, int(settings.WEBHOOK_SEND_THREADS * settings.WEBHOOK_SLOW_SHARE))

    def take(self) -> bool:
        with self._lock:
            if self._taken >= self.limit():
                return False
            self._taken += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self._taken = max(0, self._taken - 1)


slow_slots = SlowSlots()


def delivery_claim(*, delivery_id, expected_attempts: int) -> WebhookDelivery | None:
    """Take the delivery for one attempt, or None when there is nothing (left) to send now.

    Its webhook's row is locked first (PostgreSQL; SQLite has one writer at a time), so the claims of
    one webhook are counted exactly: past WEBHOOK_MAX_IN_FLIGHT attempts running, the delivery is parked
    and goes when one of them ends (deliveries_unpark). A slow webhook's attempt also needs a slot of
    the process's slow share; without one it is parked too. The claim itself re-checks the delivery, so
    a stale or duplicate message claims nothing. Nothing is sent to an inactive webhook: its delivery is
    cancelled instead; nor for a suspended organization: its delivery is held until it is restored.
    """
    pk = parse_uuid(delivery_id)
    now = timezone.now()
    if pk is None or _park_if_full(pk, expected_attempts, now):
        return None
    return _claim_locked(pk, expected_attempts, now)


def _park_if_full(pk, expected_attempts: int, now) -> bool:
    values = _params(WebhookDelivery, parked_at=now, next_attempt_at=now + PARKED_RECHECK, updated_at=now, id=pk)
    with connection.cursor() as cursor:
        cursor.execute(
            _PARK_IF_FULL_SQL,
            [*values, expected_attempts, values[0], values[0], values[3], settings.WEBHOOK_MAX_IN_FLIGHT],
        )
        return cursor.rowcount == 1


def _claim_locked(pk, expected_attempts: int, now) -> WebhookDelivery | None:
    """The exact claim: under the webhook's row lock, the count of its attempts in flight, then the claim."""
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(_SENDING_BY_ID_SQL + _lock_clause("w"), _params(WebhookDelivery, id=pk))
        row = cursor.fetchone()
        if row is None:
            return None
        delivery = _sending(row)
        webhook = delivery.webhook
        organization_id, organization_active = row[-2:]
        if not organization_active:
            _hold(cursor, delivery.pk, organization_id, expected_attempts, now)
            return None
        if not webhook.is_active:
            WebhookDelivery.objects.filter(_claimable(now), pk=pk, attempt_count=expected_attempts).update(
                status=DeliveryStatus.CANCELLED, next_attempt_at=None, parked_at=None, updated_at=now
            )
            return None
        slow = webhook.slow_since is not None
        if slow and not slow_slots.take():
            _park(cursor, pk, expected_attempts, now, recheck=SLOW_SHARE_RECHECK)
            return None
        lease = now + _lease()
        stamps = _params(WebhookDelivery, lease_expires_at=lease, updated_at=now, id=pk)
        webhook_id = _params(WebhookDelivery, webhook=webhook.pk)[0]
        cursor.execute(
            _CLAIM_IF_ROOM_SQL,
            [*stamps, expected_attempts, stamps[1], webhook_id, stamps[1], stamps[2], settings.WEBHOOK_MAX_IN_FLIGHT],
        )
        if cursor.rowcount != 1:
            if slow:
                slow_slots.give_back()
            # Full (or a stale message: then the park's own re-check parks nothing).
            _park(cursor, pk, expected_attempts, now, recheck=PARKED_RECHECK)
            return None
    delivery.status, delivery.lease_expires_at, delivery.parked_at = DeliveryStatus.SENDING, lease, None
    delivery.holds_slow_slot = slow
    return delivery


def _hold(cursor, pk, organization_id, expected_attempts: int, now) -> None:
    """Held for a suspended organization (organization_id as the row read it: already the database's form)."""
    stamps = _params(WebhookDelivery, updated_at=now, id=pk)
    cursor.execute(_HOLD_SQL, [*stamps, expected_attempts, stamps[0], organization_id, True])


def deliveries_release_held(*, organization_id) -> int:
    """A restored organization's held deliveries, due now: the dispatcher queues them (oldest first, as
    any due delivery) within seconds. Its webhooks' rows are locked first, as a claim locks one, so a
    claim that read the organization as suspended has held its delivery before this reads them."""
    now = timezone.now()
    with transaction.atomic():
        webhooks = list(
            Webhook.objects.select_for_update().filter(organization_id=organization_id).values_list("pk", flat=True)
        )
        return WebhookDelivery.objects.filter(
            webhook_id__in=webhooks, status=DeliveryStatus.PENDING, next_attempt_at__isnull=True
        ).update(next_attempt_at=now, updated_at=now)


def _lock_clause(alias: str, *, skip_locked: bool = False) -> str:
    """Row locks where the database has them (PostgreSQL); SQLite serializes its writers anyway."""
    if connection.vendor != "postgresql":
        return ""
    return f" FOR UPDATE OF {alias}" + (" SKIP LOCKED" if skip_locked else "")


def _sending(row) -> WebhookDelivery:
    """A delivery from a row of _SENDING_COLUMNS, with its webhook and event: what a send and its record
    read. The columns not read stay deferred (loaded if ever touched)."""
    (
        pk,
        attempt_count,
        blocks,
        webhook_id,
        active,
        url,
        secret,
        previous,
        previous_expires,
        failing,
        slow,
        event_id,
        kind,
        body,
        ticket_blocks,
        _organization_id,
        _organization_active,
    ) = row
    webhook = _loaded(
        Webhook,
        id=_uuid(webhook_id),
        url=url,
        is_active=bool(active),
        secret=secret,
        previous_secret=previous,
        previous_secret_expires_at=_datetime(previous_expires),
        failing_since=_datetime(failing),
        slow_since=_datetime(slow),
    )
    event = _loaded(WebhookEvent, id=_uuid(event_id), kind=kind, body=body, ticket_blocks=ticket_blocks)
    delivery = _loaded(
        WebhookDelivery,
        id=_uuid(pk),
        webhook_id=webhook.pk,
        event_id=event.pk,
        blocks=blocks,
        attempt_count=attempt_count,
    )
    delivery.webhook, delivery.event = webhook, event
    return delivery


def _loaded(model, **values):
    """An instance as the ORM would load it with only these fields (the rest deferred)."""
    in_order = [values[field.attname] for field in model._meta.concrete_fields if field.attname in values]
    return model.from_db(connection.alias, list(values), in_order)


def _uuid(value) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(value)


def _datetime(value):
    """PostgreSQL hands raw datetimes back aware; SQLite naive (or as text), to be read as UTC."""
    if value is None or connection.vendor == "postgresql":
        return value
    return connection.ops.convert_datetimefield_value(value, None, connection)


# A parked delivery goes as soon as an attempt of its webhook ends; when its webhook has none in flight
# (a crash ended the last one before it handed its turn over), the dispatcher takes it after this long.
# Parked for want of a slow slot, it waits for the dispatcher: a slot of this process's slow share is
# free again within an attempt's time.
PARKED_RECHECK = timedelta(seconds=10)
SLOW_SHARE_RECHECK = timedelta(seconds=2)


def _park(cursor, pk, expected_attempts: int, now, *, recheck: timedelta) -> None:
    """Pending until its turn (a claimable delivery only: a stale message parks nothing)."""
    values = _params(WebhookDelivery, parked_at=now, next_attempt_at=now + recheck, updated_at=now, id=pk)
    cursor.execute(_PARK_SQL, [*values, expected_attempts, values[0]])


def deliveries_unpark(*, webhook_id, limit: int = 1) -> list[tuple]:
    """The oldest deliveries waiting for their turn at this webhook, taken to be queued now (SKIP LOCKED:
    two ends of attempts never take the same one). Cheap when none waits (a partial index)."""
    now = timezone.now()
    with transaction.atomic():
        waiting = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(webhook_id=webhook_id, parked_at__isnull=False, status=DeliveryStatus.PENDING)
            .order_by("parked_at", "created_at")
            .only("id", "attempt_count")[:limit]
        )
        if waiting:
            WebhookDelivery.objects.filter(pk__in=[d.pk for d in waiting]).update(
                parked_at=None, next_attempt_at=now + timedelta(seconds=settings.WEBHOOK_REQUEUE_AFTER)
            )
    return [(d.pk, d.attempt_count) for d in waiting]


def deliveries_unpark_stalled(*, limit: int = DISPATCH_BATCH) -> list[tuple]:
    """Parked deliveries whose webhook has no attempt in flight (its last attempt's process died before
    handing its turn over): up to the cap of each such webhook, taken to be queued. A webhook with an
    attempt in flight is left alone: its next turn comes when that attempt ends. O(parked deliveries)."""
    now = timezone.now()
    parked = WebhookDelivery.objects.filter(
        parked_at__isnull=False, status=DeliveryStatus.PENDING, next_attempt_at__lte=now
    )
    candidates = set(parked.values_list("webhook_id", flat=True).distinct()[:limit])
    busy = set(
        WebhookDelivery.objects.filter(
            webhook_id__in=candidates, status=DeliveryStatus.SENDING, lease_expires_at__gt=now
        ).values_list("webhook_id", flat=True)
    )
    taken = []
    for webhook_id in candidates - busy:
        taken += deliveries_unpark(webhook_id=webhook_id, limit=settings.WEBHOOK_MAX_IN_FLIGHT)
    return taken


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
    event = delivery.event
    body = body_with_blocks(event.body, event.ticket_blocks, delivery_block_names(delivery.blocks)).encode("utf-8")
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
    # What is recorded (and shown in the delivery log) is the failure's class, never its text
    # (integrations/attempt_errors.py).
    except (UnsafeWebhookUrl, InvalidIPAddress) as error:
        return _failure(started, attempt_errors.BLOCKED, error)
    except (requests.Timeout, _TooSlow, SoftTimeLimitExceeded) as error:
        return _failure(started, attempt_errors.TIMEOUT, error)
    except requests.RequestException as error:
        return _failure(started, attempt_errors.network_failure(error), error)
    except Exception as error:  # the attempt is recorded whatever went wrong
        logger.exception("webhook_delivery_unexpected_error", delivery_id=str(delivery.pk))
        return _failure(started, attempt_errors.INTERNAL, error)
    outcome_error = "" if 200 <= response.status_code < 300 else attempt_errors.http_status(response.status_code)
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
    recorded, _ = _record(delivery=delivery, outcome=outcome, attempted_at=attempted_at, pass_turn=False)
    return recorded


def _record(
    *, delivery: WebhookDelivery, outcome: AttemptOutcome, attempted_at, pass_turn: bool
) -> tuple[WebhookDelivery, WebhookDelivery | None]:
    """delivery_record; with `pass_turn`, the webhook's oldest parked delivery is claimed in the same
    transaction and returned, to be sent next on the same thread.

    The turn passes from one delivery to the next in one commit, so the webhook's count of attempts in
    flight never dips meanwhile (a message arriving then is parked by its one statement, not let through
    to the locked count) and needs no re-count: the cap holds as it did. SKIP LOCKED keeps the webhook's
    two threads from taking the same parked delivery.
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
    # Only when what the webhook's row says of it would change: a healthy webhook's fast success
    # (nearly every attempt) writes nothing more.
    fast = outcome.succeeded and outcome.duration_ms < settings.WEBHOOK_SLOW_SECONDS * 1000
    failing_changes = outcome.succeeded == (delivery.webhook.failing_since is not None)
    slow_changes = fast == (delivery.webhook.slow_since is not None)
    following, holds = None, getattr(delivery, "holds_slow_slot", False)
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_ATTEMPT_SQL, attempt)
            cursor.execute(_RECORD_SQL, [*state, delivery.attempt_count])
            ours = cursor.rowcount
            if ours and (failing_changes or slow_changes):
                since = _params(Webhook, failing_since=attempted_at)[0]
                cursor.execute(
                    _HEALTH_SQL, [outcome.succeeded, since, fast, since, _params(Webhook, id=delivery.webhook_id)[0]]
                )
            if ours and pass_turn and outcome.status_code != 410:
                following = _claim_following(delivery, slow=not fast, holds=holds, now=now)
    except BaseException:
        if following is not None and following.holds_slow_slot and not holds:
            slow_slots.give_back()  # taken for a turn that was rolled back
        raise
    if following is not None and following.holds_slow_slot:
        delivery.holds_slow_slot = False  # the slot moved on with the turn
    given_up = bool(ours) and status == DeliveryStatus.FAILED
    attempt_observed(
        event=delivery.event.kind, status_code=outcome.status_code, duration_ms=outcome.duration_ms, given_up=given_up
    )
    if ours and outcome.status_code == 410:
        webhook_deactivate(webhook_id=delivery.webhook_id, reason=GONE_REASON)
    if ours:
        delivery.attempt_count, delivery.status, delivery.next_attempt_at = number, status, next_attempt_at
        delivery.last_attempt_at, delivery.lease_expires_at, delivery.updated_at = attempted_at, None, now
        return delivery, following
    return WebhookDelivery.objects.get(pk=delivery.pk), following


_CLAIM_FOLLOWING_SQL = model_sql(
    """
UPDATE {delivery} SET {delivery.status} = {sending}, {delivery.lease_expires_at} = %s, {delivery.parked_at} = NULL,
    {delivery.updated_at} = %s
WHERE {delivery.id} = %s AND {delivery.status} = {pending}
""",
    **_UPDATES,
)


def _claim_following(delivery: WebhookDelivery, *, slow: bool, holds: bool, now) -> WebhookDelivery | None:
    """Inside the record's transaction: the next parked delivery of an active webhook, claimed with the
    slot the ended attempt held. A slow webhook's next attempt needs a slot of the slow share too: the
    ended attempt's (`holds`), passed on, or a free one; without it the turn is not passed here."""
    with connection.cursor() as cursor:
        cursor.execute(
            _FOLLOWING_SQL + _lock_clause("d", skip_locked=True),
            [_params(WebhookDelivery, webhook=delivery.webhook_id)[0], True, True],
        )
        row = cursor.fetchone()
        if row is None or (slow and not holds and not slow_slots.take()):
            return None
        following = _sending(row)
        lease = now + _lease()
        cursor.execute(
            _CLAIM_FOLLOWING_SQL, _params(WebhookDelivery, lease_expires_at=lease, updated_at=now, id=following.pk)
        )
        if cursor.rowcount != 1:
            if slow and not holds:
                slow_slots.give_back()
            return None
    following.status, following.lease_expires_at, following.parked_at = DeliveryStatus.SENDING, lease, None
    following.holds_slow_slot = slow
    return following


def _state_after(outcome: AttemptOutcome, number: int, now) -> tuple[str, object]:
    if outcome.succeeded:
        return DeliveryStatus.SUCCEEDED, None
    if outcome.status_code == 410 or number >= max_attempts():
        return DeliveryStatus.FAILED, None
    return DeliveryStatus.PENDING, now + timedelta(seconds=settings.WEBHOOK_RETRY_DELAYS[number - 1])


def delivery_attempt(*, delivery_id, expected_attempts: int) -> WebhookDelivery | None:
    """Claim, send, record (the task then hands the webhook's turn over: deliveries_unpark)."""
    delivery = delivery_claim(delivery_id=delivery_id, expected_attempts=expected_attempts)
    return delivery_attempt_claimed(delivery) if delivery is not None else None


def delivery_attempt_claimed(delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a claimed delivery and record the attempt; its lease is renewed meanwhile, its slow slot given back."""
    recorded, _ = _attempt(delivery, pass_turn=False)
    return recorded


def delivery_attempt_passing_turn(delivery: WebhookDelivery) -> WebhookDelivery | None:
    """delivery_attempt_claimed, then the webhook's next parked delivery, already claimed (or None)."""
    _, following = _attempt(delivery, pass_turn=True)
    return following


def _attempt(delivery: WebhookDelivery, *, pass_turn: bool) -> tuple[WebhookDelivery, WebhookDelivery | None]:
    number = delivery.attempt_count + 1
    try:
        with keeper.holding(delivery.pk, delivery.attempt_count):
            attempted_at = timezone.now()
            outcome = delivery_send(delivery)
            recorded, following = _record(
                delivery=delivery, outcome=outcome, attempted_at=attempted_at, pass_turn=pass_turn
            )
    finally:
        if getattr(delivery, "holds_slow_slot", False):
            slow_slots.give_back()
    _attempt_log(delivery=delivery, number=number, outcome=outcome, status=recorded.status)
    return recorded, following


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


def deliveries_claim_due(*, limit: int = DISPATCH_BATCH, first_attempts: bool = True) -> list[tuple]:
    """Due retries, messages that never arrived and leases of dead workers, each queued once.

    A first attempt past its guard is taken only with `first_attempts`: the dispatcher passes False while
    the broker's queue still holds messages, since its message is most likely one of them (a backlog
    longer than the guard would otherwise be queued twice, and the copies slow the backlog down more).
    SKIP LOCKED lets several beats or dispatchers run without taking the same rows.
    """
    now = timezone.now()
    pending = Q(status=DeliveryStatus.PENDING, next_attempt_at__lte=now, parked_at__isnull=True)
    if not first_attempts:
        pending &= Q(attempt_count__gt=0)
    with transaction.atomic():
        due = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(
                # Parked deliveries wait for their webhook's turn (deliveries_unpark_stalled, below).
                pending | Q(status=DeliveryStatus.SENDING, lease_expires_at__lte=now)
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
