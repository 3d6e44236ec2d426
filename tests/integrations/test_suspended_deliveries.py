"""A suspended organization sends nothing: no delivery is written for it, and the ones already pending
are held (neither sent nor lost) until it is restored, when they go out with their own ids.

Run on SQLite and, in CI's second pass, on PostgreSQL (the claim's raw SQL and row locks).
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from helpdesk.models import User
from helpdesk.services import organization_set_active
from integrations import delivery as delivery_module
from integrations import tasks
from integrations.delivery import AttemptOutcome, delivery_attempt, delivery_attempt_passing_turn, delivery_claim
from integrations.events import delivery_resend, webhook_test_send
from integrations.exceptions import OrganizationSuspended
from integrations.models import DeliveryStatus, EventKind, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from tests.factories import PASSWORD, make_agent, make_agent_reply, make_test_delivery, make_ticket, make_webhook

pytestmark = pytest.mark.usefixtures("queued")


@pytest.fixture(autouse=True)
def delivery_settings(settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.WEBHOOK_MAX_IN_FLIGHT = 1
    settings.WEBHOOK_REQUEUE_AFTER = 60.0


@pytest.fixture
def webhook(organization):
    return make_webhook(organization, url="http://127.0.0.1:9/erp", events=[EventKind.PUBLIC_REPLY])


@pytest.fixture
def sent(monkeypatch) -> list:
    """The deliveries that reached the receiver (a stub that answers 204)."""
    posted = []

    def send(delivery):
        posted.append(delivery.pk)
        return AttemptOutcome(status_code=204, duration_ms=1)

    monkeypatch.setattr(delivery_module, "delivery_send", send)
    return posted


def stored(delivery) -> WebhookDelivery:
    return WebhookDelivery.objects.get(pk=delivery.pk)


def assert_held(delivery, attempts: int = 0) -> None:
    row = stored(delivery)
    assert (row.status, row.attempt_count, row.next_attempt_at, row.parked_at, row.lease_expires_at) == (
        DeliveryStatus.PENDING,
        attempts,
        None,
        None,
        None,
    )


def test_a_pending_delivery_of_a_suspended_organization_is_held_and_never_sent(webhook, organization, sent, queued):
    row = make_test_delivery(webhook)
    organization_set_active(organization=organization, is_active=False)

    assert delivery_attempt(delivery_id=row.pk, expected_attempts=0) is None

    assert sent == []
    assert not WebhookDeliveryAttempt.objects.exists()
    assert_held(row)
    queued.clear()
    assert tasks.dispatch_due_deliveries() == 0  # held: no dispatcher run takes it again
    assert queued == []


def test_a_retry_or_a_dead_workers_delivery_is_held_too(webhook, organization, sent, queued):
    retry, orphan = make_test_delivery(webhook), make_test_delivery(webhook)
    past = timezone.now() - timedelta(seconds=1)
    WebhookDelivery.objects.filter(pk=retry.pk).update(attempt_count=1, next_attempt_at=past)
    WebhookDelivery.objects.filter(pk=orphan.pk).update(status=DeliveryStatus.SENDING, lease_expires_at=past)
    organization_set_active(organization=organization, is_active=False)
    queued.clear()

    assert tasks.dispatch_due_deliveries() == 2
    for delivery_id, attempts in queued:
        assert delivery_attempt(delivery_id=delivery_id, expected_attempts=attempts) is None

    assert sent == []
    assert_held(retry, attempts=1)
    assert_held(orphan)


def test_restoring_the_organization_sends_what_was_held_with_the_same_ids(webhook, organization, sent, queued):
    row = make_test_delivery(webhook)
    organization_set_active(organization=organization, is_active=False)
    delivery_attempt(delivery_id=row.pk, expected_attempts=0)
    queued.clear()

    organization_set_active(organization=organization, is_active=True)

    assert stored(row).next_attempt_at <= timezone.now()
    assert tasks.dispatch_due_deliveries() == 1
    assert queued == [[str(row.pk), 0]]
    delivery_attempt(delivery_id=row.pk, expected_attempts=0)
    assert sent == [row.pk]
    assert stored(row).status == DeliveryStatus.SUCCEEDED


def test_restoring_from_the_organizations_admin_page_sends_what_was_held(client, webhook, organization, sent):
    row = make_test_delivery(webhook)
    superuser = User.objects.create_superuser(email="root@helpdesk.test", password=PASSWORD)
    client.force_login(superuser)
    page = f"/admin/helpdesk/organization/{organization.pk}/change/"
    client.post(page, {"name": organization.name, "_save": "Salvar"})  # "ativa" unticked: suspended
    organization.refresh_from_db()
    assert organization.is_active is False
    delivery_attempt(delivery_id=row.pk, expected_attempts=0)
    assert_held(row)

    client.post(page, {"name": organization.name, "is_active": "on", "_save": "Salvar"})

    assert stored(row).next_attempt_at <= timezone.now()
    assert tasks.dispatch_due_deliveries() == 1


def test_no_delivery_is_written_while_the_organization_is_suspended(webhook, organization, queued):
    agent = make_agent(organization)
    ticket = make_ticket(organization)
    organization_set_active(organization=organization, is_active=False)
    queued.clear()

    reply = make_agent_reply(ticket, agent)

    event = WebhookEvent.objects.get(kind=EventKind.PUBLIC_REPLY)  # the feed still has it, for later
    assert f'"id":"{reply.pk}"' in event.body
    assert not WebhookDelivery.objects.exists()
    assert queued == []

    organization_set_active(organization=organization, is_active=True)
    make_agent_reply(ticket, agent, body="Depois")
    assert WebhookDelivery.objects.count() == 1  # after the restore, events go out again
    assert not WebhookDelivery.objects.filter(event=event).exists()


def test_a_test_event_or_a_resend_for_a_suspended_organization_is_refused(webhook, organization, queued):
    earlier = make_test_delivery(webhook)
    organization_set_active(organization=organization, is_active=False)
    queued.clear()

    with pytest.raises(OrganizationSuspended):
        webhook_test_send(webhook=webhook)
    with pytest.raises(OrganizationSuspended):
        delivery_resend(delivery=earlier)

    assert list(WebhookDelivery.objects.values_list("pk", flat=True)) == [earlier.pk]
    assert WebhookEvent.objects.count() == 1
    assert queued == []


def test_an_ending_attempt_does_not_hand_its_turn_to_a_suspended_organizations_delivery(webhook, organization, sent):
    running = delivery_claim(delivery_id=make_test_delivery(webhook).pk, expected_attempts=0)
    parked = make_test_delivery(webhook)
    assert delivery_claim(delivery_id=parked.pk, expected_attempts=0) is None  # its webhook is at its cap
    organization_set_active(organization=organization, is_active=False)

    assert delivery_attempt_passing_turn(running) is None

    assert sent == [running.pk]  # already on its way when the organization was suspended
    assert stored(parked).status == DeliveryStatus.PENDING
    assert sent.count(parked.pk) == 0


def test_other_organizations_keep_sending(webhook, organization, other_organization, sent):
    theirs = make_test_delivery(make_webhook(other_organization, url="http://127.0.0.1:9/globex"))
    organization_set_active(organization=organization, is_active=False)

    delivery_attempt(delivery_id=theirs.pk, expected_attempts=0)

    assert sent == [theirs.pk]
