"""Partner API credentials (and, later, webhooks and their deliveries)."""

import uuid

from django.conf import settings
from django.db import models

from helpdesk.models import Organization


class ApiCredential(models.Model):
    """An application key of one organization; only its SHA-256 digest is stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="api_credentials"
    )
    name = models.CharField("nome", max_length=100)
    key_prefix = models.CharField("prefixo da chave", max_length=12)
    key_digest = models.CharField("digest da chave", max_length=64, unique=True, editable=False)
    is_active = models.BooleanField("ativa", default=True)
    last_used_at = models.DateTimeField("último uso em", null=True, blank=True)
    revoked_at = models.DateTimeField("revogada em", null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name="criada por",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField("criada em", auto_now_add=True)

    class Meta:
        verbose_name = "credencial de API"
        verbose_name_plural = "credenciais de API"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["organization", "-created_at"], name="credential_org_newest")]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…)"


class IdempotencyRecord(models.Model):
    """The first response to a partner POST sent with an Idempotency-Key, replayed on retries for 24 h."""

    id = models.BigAutoField(primary_key=True)
    credential = models.ForeignKey(ApiCredential, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    response_body = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["credential", "key"], name="idempotency_credential_key_unique")]

    def __str__(self) -> str:
        return self.key
