"""Celery tasks of the core app."""

from celery import shared_task
from django.utils import timezone
from rest_framework_simplejwt.token_blacklist.models import OutstandingToken

from helpdesk.purge import delete_in_batches


@shared_task(name="helpdesk.flush_expired_tokens", ignore_result=True)
def flush_expired_tokens() -> int:
    """Expired refresh tokens, blacklisted or not, are of no use any more: delete them (with their
    blacklist rows), as simplejwt's flushexpiredtokens does. A blacklisted token that has not
    expired stays, or it would work again."""
    return delete_in_batches(OutstandingToken.objects.filter(expires_at__lte=timezone.now()))
