"""Celery tasks of the core app."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone
from rest_framework_simplejwt.token_blacklist.models import OutstandingToken

from foundation.purge import delete_in_batches
from helpdesk.models import AuditRecord


@shared_task(name="helpdesk.flush_expired_tokens", ignore_result=True)
def flush_expired_tokens() -> int:
    """Expired refresh tokens, blacklisted or not, are of no use any more: delete them (with their
    blacklist rows), as simplejwt's flushexpiredtokens does. A blacklisted token that has not
    expired stays, or it would work again."""
    return delete_in_batches(OutstandingToken.objects.filter(expires_at__lte=timezone.now()))


@shared_task(name="helpdesk.purge_expired_audit_records", ignore_result=True)
def purge_expired_audit_records() -> int:
    """Audit records older than AUDIT_RETENTION_DAYS, in batches like events (no long lock)."""
    cutoff = timezone.now() - timedelta(days=settings.AUDIT_RETENTION_DAYS)
    return delete_in_batches(AuditRecord.objects.filter(created_at__lt=cutoff))
