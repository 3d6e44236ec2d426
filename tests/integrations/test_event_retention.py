"""Retention: expired events go with their deliveries and attempts, in batches; the feed answers 410
on a `depois_de` older than the retention; beat also purges idempotency records and refresh tokens."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from foundation.purge import delete_in_batches
from integrations import tasks
from integrations.delivery import AttemptOutcome, delivery_claim, delivery_record
from integrations.idempotency import RETENTION, idempotency_purge_expired
from integrations.models import (
    ApiCredential,
    EventPurgeHorizon,
    IdempotencyRecord,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEvent,
)
from integrations.retention import events_purge_expired
from tests.assertions import assert_error, assert_success, assert_validation_error
from tests.factories import make_agent_reply, make_test_delivery, make_ticket, make_webhook

EVENTS = "/api/v1/eventos"
PURGED = "Evento fora da retenção."

pytestmark = pytest.mark.usefixtures("generous_rate_limits", "queued", "example_dns")


def backdate(event_ids, days: float) -> None:
    WebhookEvent.objects.filter(pk__in=event_ids).update(created_at=timezone.now() - timedelta(days=days))


def feed_ids(organization) -> list:
    return list(
        WebhookEvent.objects.filter(organization=organization, kind__startswith="ticket.")
        .order_by("change_tx", "change_seq")
        .values_list("pk", flat=True)
    )


@pytest.fixture
def replies(organization, agent):
    """Three public replies (three feed events), each delivered once to a webhook, with one attempt each."""
    webhook = make_webhook(organization)
    ticket = make_ticket(organization)
    for number in range(3):
        make_agent_reply(ticket, agent, body=f"Resposta {number}")
    for delivery in WebhookDelivery.objects.filter(webhook=webhook):
        claimed = delivery_claim(delivery_id=delivery.pk, expected_attempts=0)
        delivery_record(delivery=claimed, outcome=AttemptOutcome(200, 5), attempted_at=timezone.now())
    return feed_ids(organization)


def test_expired_events_go_with_their_deliveries_and_attempts_in_batches(organization, other_organization, replies):
    old, recent = replies[:2], replies[2:]
    backdate(old, 31)
    other_ticket = make_ticket(other_organization)
    make_test_delivery(make_webhook(other_organization, url="https://hooks.example.com/o"))
    WebhookEvent.objects.filter(organization=other_organization).update(created_at=timezone.now() - timedelta(days=40))
    assert WebhookDeliveryAttempt.objects.filter(delivery__event_id__in=old).count() == 2

    assert events_purge_expired(batch=1) == 3

    assert feed_ids(organization) == recent
    assert not WebhookDelivery.objects.filter(event_id__in=old).exists()
    assert not WebhookDeliveryAttempt.objects.filter(delivery__event_id__in=old).exists()
    assert WebhookDeliveryAttempt.objects.filter(delivery__event_id__in=recent).count() == 1
    assert not WebhookEvent.objects.filter(organization=other_organization).exists()
    assert other_ticket.pk  # tickets are not events: they stay
    assert set(EventPurgeHorizon.objects.values_list("organization_id", flat=True)) == {
        organization.pk,
        other_organization.pk,
    }
    assert events_purge_expired() == 0


def test_the_retention_is_a_setting(organization, replies, settings):
    settings.EVENT_RETENTION_DAYS = 2
    backdate(replies[:1], 3)
    backdate(replies[1:2], 1)

    assert events_purge_expired() == 1
    assert feed_ids(organization) == replies[1:]


def test_the_feed_answers_410_on_depois_de_for_an_event_older_than_the_retention_before_the_purge(partner, replies):
    backdate(replies[:1], 31)

    response = partner.get(EVENTS, {"depois_de": str(replies[0])})

    assert_error(response, 410, PURGED, "depois_de")
    assert "lista de alterações" in response.json()["errors"]["message"]


def test_after_a_purge_an_unknown_id_is_410_and_a_kept_one_still_pages(partner, replies):
    backdate(replies[:1], 31)
    events_purge_expired()

    assert_error(partner.get(EVENTS, {"depois_de": str(replies[0])}), 410, PURGED, "depois_de")
    data = assert_success(partner.get(EVENTS, {"depois_de": str(replies[1])}), 200, "Eventos listados.")
    assert [item["id"] for item in data["itens"]] == [str(replies[2])]
    # Without depois_de the feed starts again at its oldest kept event.
    data = assert_success(partner.get(EVENTS), 200, "Eventos listados.")
    assert [item["id"] for item in data["itens"]] == [str(pk) for pk in replies[1:]]


def test_an_event_just_past_the_retention_is_no_longer_listed_but_stays_a_valid_place_for_an_hour(partner, replies):
    backdate(replies[:1], 30 + 0.5 / 24)  # half an hour past the retention
    backdate(replies[1:2], 30 + 2 / 24)  # two hours past it

    # The feed's start is within the retention: neither is listed any more.
    data = assert_success(partner.get(EVENTS), 200, "Eventos listados.")
    assert [item["id"] for item in data["itens"]] == [str(replies[2])]
    # A client that read the first a moment ago may still continue from it; not from the second.
    data = assert_success(partner.get(EVENTS, {"depois_de": str(replies[0])}), 200, "Eventos listados.")
    assert [item["id"] for item in data["itens"]] == [str(pk) for pk in replies[1:]]
    assert_error(partner.get(EVENTS, {"depois_de": str(replies[1])}), 410, PURGED, "depois_de")
    # The purge takes what the feed refuses, and only that.
    assert events_purge_expired() == 1
    assert not WebhookEvent.objects.filter(pk=replies[1]).exists()
    assert WebhookEvent.objects.filter(pk=replies[0]).exists()


def test_an_unknown_id_is_still_404_when_nothing_was_purged_and_a_malformed_one_always_422(
    partner, organization, other_organization, replies
):
    unknown = "0190f3a2-0000-7000-8000-000000000000"
    assert_error(partner.get(EVENTS, {"depois_de": unknown}), 404, "Evento não encontrado.", "depois_de")
    # Another organization's purge says nothing to this one.
    EventPurgeHorizon.objects.create(organization=other_organization, purged_before=timezone.now())
    assert_error(partner.get(EVENTS, {"depois_de": unknown}), 404, "Evento não encontrado.", "depois_de")

    EventPurgeHorizon.objects.create(organization=organization, purged_before=timezone.now())
    assert_error(partner.get(EVENTS, {"depois_de": unknown}), 410, PURGED, "depois_de")
    assert_validation_error(partner.get(EVENTS, {"depois_de": "abc"}), "depois_de")


def test_beat_schedules_the_event_idempotency_and_token_purges(settings, replies):
    tasks_by_name = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {
        "integrations.purge_expired_events",
        "integrations.purge_idempotency_records",
        "helpdesk.flush_expired_tokens",
    } <= tasks_by_name
    backdate(replies, 31)

    assert tasks.purge_expired_events.name == "integrations.purge_expired_events"
    assert tasks.purge_expired_events() == 3


def test_expired_idempotency_records_are_purged_a_batch_at_a_time(api_key):
    credential = ApiCredential.objects.get()
    for number in range(5):
        IdempotencyRecord.objects.create(credential=credential, key=f"k{number}", request_fingerprint="f")
    IdempotencyRecord.objects.filter(key__in=["k0", "k1", "k2"]).update(
        created_at=timezone.now() - RETENTION - timedelta(minutes=1)
    )
    expired = IdempotencyRecord.objects.filter(created_at__lt=timezone.now() - RETENTION)

    with CaptureQueriesContext(connection) as queries:
        assert delete_in_batches(expired, batch=2) == 3
    assert sum(query["sql"].startswith("DELETE") for query in queries.captured_queries) == 2

    IdempotencyRecord.objects.filter(key="k3").update(created_at=timezone.now() - RETENTION - timedelta(minutes=1))
    assert idempotency_purge_expired() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["k4"]
