"""Read queries on API credentials and webhooks."""

import hmac

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from foundation.db import Table, model_sql
from foundation.feeds import START, FeedPage, Position, page_after
from foundation.ids import parse_uuid
from foundation.retention import purge_cutoff, retention_cutoff
from helpdesk.models import Organization
from helpdesk.selectors import object_by_id
from integrations.exceptions import CredentialNotFound, DeliveryNotFound, EventNotFound, EventPurged, WebhookNotFound
from integrations.keys import is_well_formed, key_digest
from integrations.models import (
    FEED_EVENTS,
    ApiCredential,
    EventPurgeHorizon,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEvent,
)

# Every partner request runs this: written out once rather than compiled by the ORM each time.
_CREDENTIAL_SQL = model_sql(
    """
SELECT {c.id}, {c.organization}, {c.name}, {c.key_digest}, {c.key_prefix}, {c.is_active}, {c.last_used_at},
    {c.scopes}, {c.allowed_networks}, {c.expires_at}, {o.name} AS organization_name
FROM {c} JOIN {o} ON {o.id} = {c.organization}
WHERE {c.key_digest} = %s AND {c.is_active} AND ({c.expires_at} IS NULL OR {c.expires_at} > %s) AND {o.is_active}
""",
    c=Table(ApiCredential, "c"),
    o=Table(Organization, "o"),
)


def credential_for_key(key: str) -> ApiCredential | None:
    """The active credential of a key of an active organization, with it, or None.

    A malformed key costs no query."""
    if not is_well_formed(key):
        return None
    digest = key_digest(key)
    # An expired key is refused like a revoked one (401 on `api_key`).
    credential = next(iter(ApiCredential.objects.raw(_CREDENTIAL_SQL, [digest, timezone.now()])), None)
    if credential is None or not hmac.compare_digest(credential.key_digest, digest):
        return None
    credential.organization = Organization.from_db(
        "default", ["id", "name"], [credential.organization_id, credential.organization_name]
    )
    return credential


def credential_list(*, organization: Organization) -> QuerySet[ApiCredential]:
    return ApiCredential.objects.filter(organization=organization).order_by("-created_at", "-id")


def credential_get(*, organization: Organization, credential_id) -> ApiCredential:
    return object_by_id(credential_list(organization=organization), credential_id, missing=CredentialNotFound)


def webhook_list(*, organization: Organization) -> QuerySet[Webhook]:
    return Webhook.objects.filter(organization=organization).order_by("-created_at", "-id")


def webhook_get(*, organization: Organization, webhook_id) -> Webhook:
    return object_by_id(webhook_list(organization=organization), webhook_id, missing=WebhookNotFound)


def delivery_list(*, webhook: Webhook) -> QuerySet[WebhookDelivery]:
    """Newest first, each with its event kind and its attempts: a fixed number of queries."""
    return (
        WebhookDelivery.objects.filter(webhook=webhook)
        .select_related("event")
        .prefetch_related(Prefetch("attempts", queryset=WebhookDeliveryAttempt.objects.order_by("number", "id")))
        .order_by("-created_at", "-id")
    )


def delivery_get(*, webhook: Webhook, delivery_id) -> WebhookDelivery:
    return object_by_id(delivery_list(webhook=webhook), delivery_id, missing=DeliveryNotFound)


def _feed_position(feed, organization: Organization, after_event_id) -> Position:
    """Where `after_event_id` is in the feed; EventPurged when the partner must resync instead.

    410: the event is older than EVENT_RETENTION_DAYS and its grace (purged or about to be), or the id is a
    well-formed UUID that is not in the feed while some of the organization's events have been
    purged (a purged id cannot be told from an unknown one). 404: malformed, or unknown before any purge.
    """
    try:
        tx, seq, created_at = object_by_id(
            feed.values_list("change_tx", "change_seq", "created_at"), after_event_id, missing=EventNotFound
        )
    except EventNotFound:
        if parse_uuid(after_event_id) and EventPurgeHorizon.objects.filter(organization=organization).exists():
            raise EventPurged() from None
        raise
    if created_at < purge_cutoff():
        raise EventPurged()
    return Position(tx, seq)


def event_feed(*, organization: Organization, after_event_id=None, kinds=None, limit: int) -> FeedPage:
    """The organization's events after the event `after_event_id` (from the first one without it),
    in feed order, as (id, body, ticket_blocks) rows; `kinds` narrows them. `webhook.teste` is never in the feed.

    An id that is not one of the feed's events is EventNotFound. Two statements at most, whatever the limit.
    """
    feed = WebhookEvent.objects.filter(organization=organization, kind__in=FEED_EVENTS)
    if after_event_id is None:
        # From the start: the oldest event still within the retention, never one about to be purged.
        position, page = START, feed.filter(created_at__gte=retention_cutoff())
    else:
        position, page = _feed_position(feed, organization, after_event_id), feed
    page = page.filter(kind__in=kinds or FEED_EVENTS)
    return page_after(page, position, limit=limit, columns=("id", "body", "ticket_blocks"))
