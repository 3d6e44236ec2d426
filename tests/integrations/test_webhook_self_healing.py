"""Self-healing webhooks: days of nothing but failures turn a webhook off; 410 Gone too; both say when and why."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from helpdesk.models import AuditRecord
from integrations import tasks
from integrations.delivery import AttemptOutcome, delivery_attempt, delivery_claim, delivery_record
from integrations.health import webhooks_deactivate_failing
from integrations.models import DeliveryStatus, Webhook, WebhookDelivery
from tests.factories import make_test_delivery, make_webhook

pytestmark = pytest.mark.usefixtures("queued", "example_dns")

FAILING = "Falhas consecutivas por 5 dias."
GONE = "Receptor respondeu 410 Gone."


@pytest.fixture
def webhook(organization) -> Webhook:
    return make_webhook(organization)


def record(webhook: Webhook, status_code: int | None, at) -> WebhookDelivery:
    """One attempt of a new delivery, answered with `status_code` (None: no answer), made at `at`."""
    delivery = make_test_delivery(webhook)
    claimed = delivery_claim(delivery_id=delivery.pk, expected_attempts=0)
    outcome = AttemptOutcome(status_code=status_code, duration_ms=5, error="" if status_code == 200 else "x")
    return delivery_record(delivery=claimed, outcome=outcome, attempted_at=at)


def stored(webhook: Webhook) -> Webhook:
    return Webhook.objects.get(pk=webhook.pk)


def test_the_first_failure_starts_the_streak_later_ones_keep_it_and_a_success_ends_it(webhook):
    start = timezone.now() - timedelta(days=3)
    record(webhook, 500, start)
    record(webhook, None, start + timedelta(days=1))
    assert stored(webhook).failing_since == start

    record(webhook, 200, start + timedelta(days=2))
    assert stored(webhook).failing_since is None


def test_a_webhook_failing_for_more_than_the_setting_is_turned_off_and_its_pending_deliveries_cancelled(webhook):
    now = timezone.now()
    record(webhook, 500, now - timedelta(days=5, minutes=1))
    record(webhook, 503, now - timedelta(hours=1))
    pending = make_test_delivery(webhook)

    assert webhooks_deactivate_failing(now=now) == 1

    row = stored(webhook)
    assert (row.is_active, row.deactivated_at, row.deactivation_reason) == (False, now, FAILING)
    assert WebhookDelivery.objects.get(pk=pending.pk).status == DeliveryStatus.CANCELLED
    assert webhooks_deactivate_failing(now=now) == 0


def test_a_shorter_streak_a_success_since_or_no_attempt_at_all_keeps_the_webhook_on(organization, webhook):
    now = timezone.now()
    record(webhook, 500, now - timedelta(days=4, hours=23))
    recovered = make_webhook(organization, name="Recuperado", url="https://hooks.example.com/r")
    record(recovered, 500, now - timedelta(days=9))
    record(recovered, 200, now - timedelta(days=1))
    make_webhook(organization, name="Calado", url="https://hooks.example.com/c")

    assert webhooks_deactivate_failing(now=now) == 0
    assert Webhook.objects.filter(is_active=False).count() == 0


def test_the_number_of_days_is_a_setting_and_is_in_the_reason(webhook, settings):
    settings.WEBHOOK_DISABLE_AFTER_DAYS = 2
    now = timezone.now()
    record(webhook, 500, now - timedelta(days=2, minutes=1))

    assert webhooks_deactivate_failing(now=now) == 1
    assert stored(webhook).deactivation_reason == "Falhas consecutivas por 2 dias."


def test_the_beat_task_is_scheduled_and_runs_the_check(webhook, settings):
    entry = settings.CELERY_BEAT_SCHEDULE["deactivate-failing-webhooks"]
    assert entry["task"] == "integrations.deactivate_failing_webhooks"
    record(webhook, 500, timezone.now() - timedelta(days=6))

    assert tasks.deactivate_failing_webhooks.name == entry["task"]
    assert tasks.deactivate_failing_webhooks() == 1
    assert stored(webhook).is_active is False


def test_the_management_api_shows_when_and_why_and_turning_it_on_clears_both_and_resumes(manager, webhook):
    now = timezone.now()
    record(webhook, 500, now - timedelta(days=6))
    webhooks_deactivate_failing(now=now)
    url = f"/api/webhooks/{webhook.pk}"

    data = manager.get(url).json()["data"]
    assert (data["ativo"], data["motivo_desativacao"]) == (False, FAILING)
    assert data["desativado_em"] == now.isoformat().replace("+00:00", "Z")
    assert list(data)[-2:] == ["desativado_em", "motivo_desativacao"]

    data = manager.patch(url, {"ativo": True}, format="json").json()["data"]
    assert (data["ativo"], data["desativado_em"], data["motivo_desativacao"]) == (True, None, None)
    assert stored(webhook).failing_since is None
    # A new delivery goes out again, and the old streak does not turn it off at the next check.
    resumed = make_test_delivery(webhook)
    assert delivery_claim(delivery_id=resumed.pk, expected_attempts=0) is not None
    assert webhooks_deactivate_failing(now=now) == 0


def test_a_410_turns_the_webhook_off_with_its_reason_shown_in_the_api(manager, webhook):
    record(webhook, 410, timezone.now())

    row = stored(webhook)
    assert (row.is_active, row.deactivation_reason) == (False, GONE)
    data = manager.get(f"/api/webhooks/{webhook.pk}").json()["data"]
    assert data["motivo_desativacao"] == GONE
    assert data["desativado_em"] is not None
    assert delivery_attempt(delivery_id=make_test_delivery(webhook).pk, expected_attempts=0) is None


def test_a_410_cancels_the_webhooks_pending_deliveries_and_is_recorded_once(webhook):
    gone = AttemptOutcome(status_code=410, duration_ms=5, error="http_410")
    first, second = (delivery_claim(delivery_id=make_test_delivery(webhook).pk, expected_attempts=0) for _ in range(2))
    waiting = make_test_delivery(webhook)

    delivery_record(delivery=first, outcome=gone, attempted_at=timezone.now())

    assert WebhookDelivery.objects.get(pk=waiting.pk).status == DeliveryStatus.CANCELLED
    [entry] = AuditRecord.objects.filter(action="webhook.desativado")
    assert (entry.organization_id, entry.resource_id, entry.changes) == (
        webhook.organization_id,
        str(webhook.pk),
        {"ativo": {"antes": True, "depois": False}, "motivo": {"antes": None, "depois": GONE}},
    )
    # The other attempt in flight answered 410 too: the webhook is off already, nothing more is recorded.
    delivery_record(delivery=second, outcome=gone, attempted_at=timezone.now())
    assert AuditRecord.objects.filter(action="webhook.desativado").count() == 1


def test_the_admin_shows_the_fields_and_its_action_turns_webhooks_on_again(client, admin, webhook):
    record(webhook, 410, timezone.now())
    client.force_login(admin)

    page = client.get(f"/admin/integrations/webhook/{webhook.pk}/change/")
    assert page.status_code == 200
    assert GONE in page.content.decode()

    response = client.post(
        "/admin/integrations/webhook/", {"action": "activate", "_selected_action": [str(webhook.pk)]}
    )
    assert response.status_code == 302
    row = stored(webhook)
    assert (row.is_active, row.deactivated_at, row.deactivation_reason) == (True, None, "")


def test_a_success_of_a_healthy_webhook_writes_no_streak_statement(webhook):
    delivery = make_test_delivery(webhook)
    claimed = delivery_claim(delivery_id=delivery.pk, expected_attempts=0)

    with CaptureQueriesContext(connection) as queries:
        delivery_record(delivery=claimed, outcome=AttemptOutcome(200, 5), attempted_at=timezone.now())

    assert not [q["sql"] for q in queries if "failing_since" in q["sql"]]
    assert stored(webhook).failing_since is None
