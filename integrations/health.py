"""Self-healing webhooks: one whose deliveries have all failed for WEBHOOK_DISABLE_AFTER_DAYS days is turned off.

"All failed for N days in a row": the webhook's first failed attempt since its last
successful one (`failing_since`, kept by delivery_record) is more than N days old, and
no attempt has succeeded since. A webhook with no attempts in the period keeps its
streak: nothing has been delivered to it since. Turning it on again clears the streak.
"""

from datetime import timedelta

import structlog
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from helpdesk.audit import audit_record, change
from integrations.models import DeliveryStatus, Webhook, WebhookDelivery

logger = structlog.get_logger(__name__)


def failing_reason(days: int) -> str:
    return f"Falhas consecutivas por {days} {'dia' if days == 1 else 'dias'}."


def webhooks_deactivate_failing(*, now=None) -> int:
    """Turn off every active webhook failing for longer than the setting; returns how many.

    One indexed query finds them (webhook_failing_since); each is turned off by an UPDATE that
    re-checks the streak, so a success recorded meanwhile keeps the webhook on.
    """
    now = now or timezone.now()
    days = settings.WEBHOOK_DISABLE_AFTER_DAYS
    cutoff = now - timedelta(days=days)
    candidates = list(
        Webhook.objects.filter(is_active=True, failing_since__lte=cutoff).values_list("pk", "organization_id")[:500]
    )
    deactivated = 0
    for webhook_id, organization_id in candidates:
        with transaction.atomic():
            changed = Webhook.objects.filter(pk=webhook_id, is_active=True, failing_since__lte=cutoff).update(
                is_active=False, deactivated_at=now, deactivation_reason=failing_reason(days), updated_at=now
            )
            if changed:
                WebhookDelivery.objects.filter(webhook_id=webhook_id, status=DeliveryStatus.PENDING).update(
                    status=DeliveryStatus.CANCELLED, next_attempt_at=None
                )
                audit_record(
                    "webhook.desativado",
                    organization_id=organization_id,
                    resource_type="webhook",
                    resource_id=webhook_id,
                    changes={"ativo": change(True, False), "motivo": change(None, failing_reason(days))},
                )
        if changed:
            deactivated += 1
            logger.warning("webhook_deactivated_failing", webhook_id=str(webhook_id), days=days)
    return deactivated
