"""Writes on API credentials."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from helpdesk.models import Organization, User
from integrations.keys import display_prefix, generate_key, key_digest
from integrations.models import ApiCredential


def credential_create(
    *, organization: Organization, name: str, created_by: User | None = None
) -> tuple[ApiCredential, str]:
    """Returns the credential and the full key, which exists only in this return value."""
    key = generate_key()
    credential = ApiCredential.objects.create(
        organization=organization,
        name=name,
        key_prefix=display_prefix(key),
        key_digest=key_digest(key),
        created_by=created_by,
    )
    return credential, key


def credential_revoke(*, credential: ApiCredential) -> ApiCredential:
    """Idempotent; the row stays for audit. Keys are looked up in the database on
    every request, so the key fails on the very next request on every worker."""
    if credential.is_active:
        credential.is_active = False
        credential.revoked_at = timezone.now()
        credential.save(update_fields=["is_active", "revoked_at"])
    return credential


def credential_record_use(*, credential: ApiCredential) -> None:
    """At most one write a minute per key, whatever the request rate."""
    now = timezone.now()
    resolution = timedelta(seconds=settings.CREDENTIAL_LAST_USED_RESOLUTION)
    if credential.last_used_at is not None and now - credential.last_used_at < resolution:
        return
    ApiCredential.objects.filter(pk=credential.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - resolution)
    ).update(last_used_at=now)
    credential.last_used_at = now
