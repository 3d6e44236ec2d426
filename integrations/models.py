"""Partner API credentials (and, later, webhooks and their deliveries)."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from foundation.feeds import WrittenOnce
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
    # None: every scope, those added later included (integrations.scopes).
    scopes = models.JSONField("escopos", null=True, blank=True, default=None)
    expires_at = models.DateTimeField("expira em", null=True, blank=True)
    # None: any address. CIDRs, normalised (integrations.scopes.network_of).
    allowed_networks = models.JSONField("redes permitidas", null=True, blank=True, default=None)
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
    """The first response to a request sent with an Idempotency-Key, replayed on retries for 24 h: a partner's
    POST (keys of its credential) or a panel user's bulk edit (keys of the user)."""

    id = models.BigAutoField(primary_key=True)
    credential = models.ForeignKey(ApiCredential, on_delete=models.CASCADE, related_name="+", null=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", null=True)
    key = models.CharField(max_length=255)
    request_fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    response_body = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["credential", "key"], name="idempotency_credential_key_unique"),
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_user_key_unique"),
            models.CheckConstraint(
                condition=Q(credential__isnull=True) ^ Q(user__isnull=True), name="idempotency_one_owner"
            ),
        ]

    def __str__(self) -> str:
        return self.key


class EventKind(models.TextChoices):
    """Every change a partner can see, by an agent or the system (docs/webhooks.md has each body)."""

    TICKET_CREATED = "ticket.criado", "Ticket criado"
    PUBLIC_REPLY = "ticket.resposta_publica", "Resposta pública"
    REPLY_EDITED = "ticket.resposta_editada", "Resposta editada"
    STATUS_CHANGED = "ticket.status_alterado", "Status alterado"
    RESOLVED = "ticket.resolvido", "Ticket resolvido"
    PRIORITY_CHANGED = "ticket.prioridade_alterada", "Prioridade alterada"
    ASSIGNED = "ticket.atribuido", "Ticket atribuído"
    TAGS_CHANGED = "ticket.tags_alteradas", "Tags alteradas"
    ATTACHMENT_ADDED = "ticket.anexo_adicionado", "Anexo adicionado"
    DELETED = "ticket.excluido", "Ticket excluído"
    CONTACT_ANONYMIZED = "contato.anonimizado", "Contato anonimizado"
    FIELDS_CHANGED = "ticket.campos_alterados", "Campos alterados"
    SLA_AT_RISK = "ticket.sla_em_risco", "SLA em risco"
    SLA_BREACHED = "ticket.sla_violado", "SLA violado"
    MERGED = "ticket.mesclado", "Ticket mesclado"
    TEST = "webhook.teste", "Teste"


SUBSCRIBABLE_EVENTS = [kind for kind in EventKind if kind != EventKind.TEST]
# What GET /api/v1/eventos answers: what a webhook may subscribe to (never a webhook's test event).
FEED_EVENTS = SUBSCRIBABLE_EVENTS


class Webhook(models.Model):
    """An outbound endpoint of the partner; deliveries are signed with `secret`.

    The secret is kept readable because every delivery signs with it; it is
    never shown again after create or regeneration. The previous secret keeps
    signing for 24 hours after a regeneration, so partners can roll it.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="webhooks"
    )
    name = models.CharField("nome", max_length=100)
    url = models.URLField("URL", max_length=2048)
    events = models.JSONField("eventos", default=list)
    is_active = models.BooleanField("ativo", default=True)
    secret = models.CharField("segredo", max_length=100, editable=False)
    previous_secret = models.CharField(max_length=100, blank=True, editable=False)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField("criado em", auto_now_add=True)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)
    # When and why it was turned off (410 Gone, days of failures, by hand); cleared when turned on again.
    deactivated_at = models.DateTimeField("desativado em", null=True, blank=True, editable=False)
    deactivation_reason = models.CharField("motivo da desativação", max_length=200, blank=True, editable=False)
    # The first failed attempt since the last successful one; null while deliveries succeed.
    failing_since = models.DateTimeField("falhando desde", null=True, blank=True, editable=False)
    # Since its attempts fail or take WEBHOOK_SLOW_SECONDS or more; null while it answers fast.
    slow_since = models.DateTimeField("lento desde", null=True, blank=True, editable=False)
    # The `incluir` blocks its deliveries add to `data.ticket` (names of tickets.payloads.TICKET_BLOCKS).
    blocks = models.JSONField("blocos (incluir)", default=list, blank=True)

    class Meta:
        verbose_name = "webhook"
        verbose_name_plural = "webhooks"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["organization", "is_active"], name="webhook_org_active"),
            models.Index(fields=["is_active", "failing_since"], name="webhook_failing_since"),
        ]

    def __str__(self) -> str:
        return self.name


class WebhookEvent(WrittenOnce):
    """Something a partner is told about; the body is frozen so every delivery and retry sends the same bytes.

    Written whether or not a webhook subscribes: GET /api/v1/eventos reads them in order.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="webhook_events"
    )
    kind = models.CharField("evento", max_length=40, choices=EventKind.choices)
    body = models.TextField("corpo")
    # Every `incluir` block of the event's ticket as it was when the event was written (JSON, by block name),
    # kept beside the body: the feed and each webhook add the ones they ask for. Empty without a ticket.
    ticket_blocks = models.TextField("blocos do ticket", blank=True, default="", db_default="", editable=False)
    created_at = models.DateTimeField("criado em", auto_now_add=True)
    # change_tx, change_seq: the event's place in the event feed (foundation.feeds), written with the event.

    class Meta:
        verbose_name = "evento de webhook"
        verbose_name_plural = "eventos de webhook"
        constraints = [
            # The event feed's order, and the proof that no two events share a place in it.
            models.UniqueConstraint(fields=["organization", "change_tx", "change_seq"], name="event_org_feed_position")
        ]
        # The retention purge finds the oldest events (integrations/retention.py).
        indexes = [models.Index(fields=["created_at"], name="event_created")]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class EventPurgeHorizon(models.Model):
    """Up to when an organization's events were purged: the feed answers 410 (not 404) on an unknown
    `depois_de` once some of its events are gone, because the partner may hold the id of one of them."""

    organization = models.OneToOneField(
        Organization, on_delete=models.CASCADE, primary_key=True, related_name="+", verbose_name="organização"
    )
    purged_before = models.DateTimeField("eventos removidos até")

    class Meta:
        verbose_name = "horizonte de retenção de eventos"
        verbose_name_plural = "horizontes de retenção de eventos"

    def __str__(self) -> str:
        return f"{self.organization_id} < {self.purged_before}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pendente", "Pendente"
    SENDING = "enviando", "Enviando"
    SUCCEEDED = "sucesso", "Entregue"
    FAILED = "falhou", "Falhou"
    CANCELLED = "cancelada", "Cancelada"


class WebhookDelivery(models.Model):
    """One event to one webhook (the outbox row). Its id is the X-Service-Delivery header,
    stable across retries; the retry schedule lives here, not in the broker."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, verbose_name="webhook", on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(WebhookEvent, verbose_name="evento", on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField("situação", max_length=20, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    # Its webhook's `incluir` when the event was written (names, comma separated): every attempt sends the
    # same body, whatever the webhook's setting becomes.
    blocks = models.CharField("blocos (incluir)", max_length=255, blank=True, default="", db_default="")
    attempt_count = models.PositiveSmallIntegerField("tentativas", default=0)
    next_attempt_at = models.DateTimeField("próxima tentativa em", null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Waiting for its turn: its webhook had WEBHOOK_MAX_IN_FLIGHT attempts running (integrations/delivery.py).
    parked_at = models.DateTimeField("aguardando a vez desde", null=True, blank=True, editable=False)
    last_attempt_at = models.DateTimeField("última tentativa em", null=True, blank=True)
    created_at = models.DateTimeField("criada em", auto_now_add=True)
    updated_at = models.DateTimeField("atualizada em", auto_now=True)

    class Meta:
        verbose_name = "entrega de webhook"
        verbose_name_plural = "entregas de webhook"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due"),
            models.Index(fields=["status", "lease_expires_at"], name="delivery_lease"),
            models.Index(fields=["webhook", "-created_at"], name="delivery_webhook_newest"),
            # A webhook's attempts in flight (its cap) and its deliveries waiting for their turn.
            models.Index(
                fields=["webhook"], condition=Q(status=DeliveryStatus.SENDING), name="delivery_webhook_sending"
            ),
            models.Index(
                fields=["webhook", "parked_at"], condition=Q(parked_at__isnull=False), name="delivery_webhook_parked"
            ),
        ]

    def __str__(self) -> str:
        return str(self.id)


class WebhookDeliveryAttempt(models.Model):
    """One HTTP attempt of a delivery, kept for the delivery log."""

    id = models.BigAutoField(primary_key=True)
    delivery = models.ForeignKey(
        WebhookDelivery, verbose_name="entrega", on_delete=models.CASCADE, related_name="attempts"
    )
    number = models.PositiveSmallIntegerField("tentativa")
    attempted_at = models.DateTimeField("enviada em")
    status_code = models.PositiveSmallIntegerField("código HTTP", null=True, blank=True)
    duration_ms = models.PositiveIntegerField("duração (ms)")
    error = models.TextField("erro", blank=True)
    response_excerpt = models.TextField("início da resposta", blank=True)
    succeeded = models.BooleanField("sucesso", default=False)

    class Meta:
        verbose_name = "tentativa de entrega"
        verbose_name_plural = "tentativas de entrega"
        ordering = ["number", "id"]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}"
