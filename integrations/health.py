"""Self-healing webhooks: one whose deliveries have all failed for WEBHOOK_DISABLE_AFTER_DAYS days is turned off.

"All failed for N days in a row": the webhook's first failed attempt since its last
successful one (`failing_since`, kept by delivery_record) is more than N days old, and
no attempt has succeeded since. A webhook with no attempts in the period keeps its
streak: nothing has been delivered to it since. Turning it on again clears the streak.
"""

from datetime import timedelta

import structlog
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from integrations.models import Webhook
from integrations.services import webhook_deactivate

logger = structlog.get_logger(__name__)


def failing_reason(days: int) -> str:
    return f"Falhas consecutivas por {days} {'dia' if days == 1 else 'dias'}."


def webhooks_deactivate_failing(*, now=None) -> int:
    """Turn off every active webhook failing for longer than the setting; returns how many.

    One indexed query finds them (webhook_failing_since); each is turned off by webhook_deactivate, whose
    UPDATE re-checks the streak, so a success recorded meanwhile keeps the webhook on.
    """
    now = now or timezone.now()
    days = settings.WEBHOOK_DISABLE_AFTER_DAYS
    cutoff = now - timedelta(days=days)
    candidates = list(
        Webhook.objects.filter(is_active=True, failing_since__lte=cutoff).values_list("pk", "organization_id")[:500]
    )
    reason, still_failing = failing_reason(days), Q(failing_since__lte=cutoff)
    deactivated = 0
    for webhook_id, organization_id in candidates:
        if webhook_deactivate(
            webhook_id=webhook_id, reason=reason, organization_id=organization_id, still=still_failing, now=now
        ):
            deactivated += 1
            logger.warning("webhook_deactivated_failing", webhook_id=str(webhook_id), days=days)
    return deactivated
