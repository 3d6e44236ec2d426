"""Writes on API credentials and webhooks."""

import base64
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from foundation.exceptions import ValidationFailed
from helpdesk.audit import audit_record, change
from helpdesk.models import Organization, User
from integrations.exceptions import OrganizationSuspended, OriginNotAllowed, ScopeMissing, WebhookInactive
from integrations.keys import display_prefix, generate_key, key_digest
from integrations.models import SUBSCRIBABLE_EVENTS, ApiCredential, DeliveryStatus, Webhook, WebhookDelivery
from integrations.scopes import MAX_NETWORKS, Scope, address_in_networks, network_of
from integrations.signing import SECRET_PREFIX
from integrations.webhook_urls import UnsafeWebhookUrl, validate_webhook_url
from tickets.payloads import iso, ticket_blocks_chosen, ticket_blocks_unknown, ticket_blocks_unknown_message


def credential_create(
    *,
    organization: Organization,
    name: str,
    created_by: User | None = None,
    scopes: list[str] | None = None,
    expires_at: datetime | None = None,
    allowed_networks: list[str] | None = None,
) -> tuple[ApiCredential, str]:
    """Returns the credential and the full key, which exists only in this return value. Without
    scopes, expiry or networks the key may do everything, forever, from anywhere (as before they existed)."""
    restrictions = credential_restrictions_clean(
        scopes=scopes, expires_at=expires_at, allowed_networks=allowed_networks
    )
    key = generate_key()
    with transaction.atomic():
        # The organization row lock makes the per-organization limit hold under concurrent creates.
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        credential_limit_check(organization=organization)
        credential = ApiCredential.objects.create(
            organization=organization,
            name=name,
            key_prefix=display_prefix(key),
            key_digest=key_digest(key),
            created_by=created_by,
            **restrictions,
        )
        audit_record(
            "credencial.criada",
            organization_id=organization.pk,
            resource_type="credencial",
            resource_id=credential.pk,
            changes=_credential_summary(credential),
        )
    return credential, key


def _credential_summary(credential: ApiCredential) -> dict:
    """What an audit record says of a key: never the key, its digest or anything that opens it."""
    return {
        "nome": change(None, credential.name),
        "key_prefix": change(None, credential.key_prefix),
        "escopos": change(None, credential.scopes),
        "expira_em": change(None, iso(credential.expires_at)),  # as the API writes it
        "redes_permitidas": change(None, credential.allowed_networks),
    }


def credential_restrictions_clean(
    *, scopes: list[str] | None, expires_at: datetime | None, allowed_networks: list[str] | None
) -> dict:
    """The model's values of what a key may do, or a 422 naming each bad field (`escopos`, `expira_em`,
    `redes_permitidas`). Scopes are kept in the catalogue's order, networks normalised, each once."""
    errors: dict[str, list[str]] = {}
    cleaned = {}
    for field, name, value, clean in (
        ("escopos", "scopes", scopes, _scopes_clean),
        ("expira_em", "expires_at", expires_at, _expiry_clean),
        ("redes_permitidas", "allowed_networks", allowed_networks, _networks_clean),
    ):
        try:
            cleaned[name] = None if value is None else clean(value)
        except ValueError as error:
            errors[field] = [str(error)]
    if errors:
        raise ValidationFailed(errors)
    return cleaned


def _scopes_clean(scopes: list[str]) -> list[str]:
    unknown = [str(scope) for scope in scopes if scope not in Scope.values]
    if unknown:
        raise ValueError(f"Escopo desconhecido: {', '.join(unknown)}. Use: {', '.join(Scope.values)}.")
    if not scopes:
        raise ValueError("Informe ao menos um escopo, ou omita o campo para todos.")
    return [scope for scope in Scope.values if scope in scopes]


def _expiry_clean(expires_at: datetime) -> datetime:
    if expires_at <= timezone.now():
        raise ValueError("A data de expiração deve estar no futuro.")
    return expires_at


def _networks_clean(values: list[str]) -> list[str]:
    networks, bad = [], []
    for value in values:
        try:
            network = str(network_of(value))
        except ValueError:
            bad.append(str(value))
            continue
        if network not in networks:
            networks.append(network)
    if bad:
        raise ValueError(f"Rede inválida (use a notação CIDR, como 203.0.113.0/24): {', '.join(bad)}.")
    if not networks:
        raise ValueError("Informe ao menos uma rede, ou omita o campo para qualquer origem.")
    if len(networks) > MAX_NETWORKS:
        raise ValueError(f"No máximo {MAX_NETWORKS} redes por credencial.")
    return networks


def credential_authorize(*, credential: ApiCredential, scope: str | None, address: str) -> None:
    """What a valid key may do on this request: its networks first (a key used from elsewhere may be
    stolen: it learns nothing more), then the action's scope. `scope` None: the action declares none."""
    if credential.allowed_networks is not None and not address_in_networks(address, credential.allowed_networks):
        raise OriginNotAllowed()
    if credential.scopes is not None and scope not in credential.scopes:
        raise ScopeMissing(scope or "desconhecido")


def credential_limit_check(*, organization: Organization) -> None:
    """Active keys are capped (revoked and expired ones stay for audit and do not count)."""
    limit = settings.API_KEYS_PER_ORGANIZATION
    usable = ApiCredential.objects.filter(organization=organization, is_active=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
    )
    if usable.count() >= limit:
        raise ValidationFailed(
            {"credencial": [f"Limite de {limit} credenciais ativas por organização atingido. Revogue uma antes."]}
        )


def credential_revoke(*, credential: ApiCredential) -> ApiCredential:
    """Idempotent; the row stays for audit. Keys are looked up in the database on
    every request, so the key fails on the very next request on every worker."""
    if not credential.is_active:
        return credential
    revoked_at = timezone.now()
    with transaction.atomic():
        # Conditional: of two revocations at once, one revokes (and is recorded), the other finds it done.
        revoked = ApiCredential.objects.filter(pk=credential.pk, is_active=True).update(
            is_active=False, revoked_at=revoked_at
        )
        credential.is_active = False
        if not revoked:
            credential.refresh_from_db(fields=["revoked_at"])
            return credential
        credential.revoked_at = revoked_at
        audit_record(
            "credencial.revogada",
            organization_id=credential.organization_id,
            resource_type="credencial",
            resource_id=credential.pk,
            changes={"ativa": change(True, False)},
        )
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


MAX_WEBHOOKS_PER_ORGANIZATION = 10
PREVIOUS_SECRET_GRACE = timedelta(hours=24)


def generate_secret() -> str:
    """Standard Webhooks format: whsec_ + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def webhook_validate(*, name=None, url=None, events=None, blocks=None) -> dict:
    """The webhook rules, shared by the API and the admin; returns the cleaned model fields."""
    errors: dict[str, list[str]] = {}
    cleaned: dict = {}
    if name is not None:
        name = name.strip()
        if not 1 <= len(name) <= 100:
            errors["nome"] = ["Informe um nome de 1 a 100 caracteres."]
        cleaned["name"] = name
    if url is not None:
        try:
            cleaned["url"] = validate_webhook_url(url.strip())
        except UnsafeWebhookUrl as error:
            errors["url"] = [str(error)]
    if events is not None:
        unknown = [event for event in events if event not in SUBSCRIBABLE_EVENTS]
        if not events:
            errors["eventos"] = ["Informe ao menos um evento."]
        elif unknown:
            known = ", ".join(SUBSCRIBABLE_EVENTS)
            errors["eventos"] = [f"Evento desconhecido: {', '.join(unknown)}. Eventos aceitos: {known}."]
        cleaned["events"] = list(dict.fromkeys(events))
    if blocks is not None:
        cleaned["blocks"] = _blocks_validate(blocks, errors)
    if errors:
        raise ValidationFailed(errors)
    return cleaned


def _blocks_validate(blocks: list[str], errors: dict) -> list[str]:
    """A webhook's `incluir`: known names, each once, in the blocks' order."""
    unknown = ticket_blocks_unknown(blocks)
    if unknown:
        errors["incluir"] = [ticket_blocks_unknown_message(unknown)]
    return list(ticket_blocks_chosen(blocks))


MANUAL_DEACTIVATION_REASON = "Desativado manualmente."


def webhook_create(
    *,
    organization: Organization,
    name: str,
    url: str,
    events: list[str],
    is_active: bool = True,
    blocks: list[str] | None = None,
) -> Webhook:
    """A webhook with a fresh secret (returned once by the caller). Added off (the admin's form), it says it
    was turned off by hand, as one turned off later does. `blocks`: its `incluir` (none by default)."""
    cleaned = webhook_validate(name=name, url=url, events=events, blocks=blocks)
    if not is_active:
        cleaned.update(is_active=False, deactivated_at=timezone.now(), deactivation_reason=MANUAL_DEACTIVATION_REASON)
    with transaction.atomic():
        # The organization row lock makes the per-organization limit hold under concurrent creates.
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        webhook_limit_check(organization=organization)
        webhook = Webhook.objects.create(organization=organization, secret=generate_secret(), **cleaned)
        audit_record(
            "webhook.criado",
            organization_id=organization.pk,
            resource_type="webhook",
            resource_id=webhook.pk,
            changes={
                "nome": change(None, webhook.name),
                "url": change(None, url_for_audit(webhook.url)),
                "eventos": change(None, webhook.events),
                **({"incluir": change(None, webhook.blocks)} if webhook.blocks else {}),
                **({} if is_active else {"ativo": change(None, False)}),
            },
        )
        return webhook


def webhook_limit_check(*, organization: Organization) -> None:
    if Webhook.objects.filter(organization=organization).count() >= MAX_WEBHOOKS_PER_ORGANIZATION:
        raise ValidationFailed(
            {"webhook": [f"Limite de {MAX_WEBHOOKS_PER_ORGANIZATION} webhooks por organização atingido."]}
        )


def webhook_update(
    *,
    webhook: Webhook,
    name: str | None = None,
    url: str | None = None,
    events: list[str] | None = None,
    is_active: bool | None = None,
    regenerate_secret: bool = False,
    blocks: list[str] | None = None,
) -> Webhook:
    """Only the given fields change; a regenerated secret is returned once by the caller. A change of `blocks`
    reaches the events written after it (a delivery keeps the blocks it was made with)."""
    cleaned = webhook_validate(name=name, url=url, events=events, blocks=blocks)
    if is_active is not None:
        cleaned["is_active"] = is_active
    if is_active is not None and is_active != webhook.is_active:
        # Turned on again: a fresh start, no old failure streak nor slowness. Turned off by hand: said so.
        cleaned["deactivated_at"] = None if is_active else timezone.now()
        cleaned["deactivation_reason"] = "" if is_active else MANUAL_DEACTIVATION_REASON
        cleaned["failing_since"] = None
        cleaned["slow_since"] = None
    audited = {
        _WEBHOOK_FIELD_NAMES[field]: _audited_change(field, getattr(webhook, field), value)
        for field, value in cleaned.items()
        if field in _WEBHOOK_FIELD_NAMES and getattr(webhook, field) != value
    }
    if regenerate_secret:
        cleaned["previous_secret"] = webhook.secret
        cleaned["previous_secret_expires_at"] = timezone.now() + PREVIOUS_SECRET_GRACE
        cleaned["secret"] = generate_secret()
    for field, value in cleaned.items():
        setattr(webhook, field, value)
    if cleaned:
        with transaction.atomic():
            webhook.save(update_fields=[*cleaned, "updated_at"])
            _webhook_audit(webhook, audited, regenerated=regenerate_secret)
            if is_active is False:
                _deliveries_cancel_pending(webhook.pk)
    return webhook


def webhook_deactivate(*, webhook_id, reason: str, organization_id=None, still: Q | None = None, now=None) -> bool:
    """The service turns an active webhook off by itself (its receiver answered 410 Gone, or it has failed
    for days: integrations.health): the reason is shown on it and recorded (webhook.desativado). `still`
    re-checks, in the same UPDATE, why it goes: one that no longer matches is left on. True when this call
    turned it off. `organization_id`: the webhook's, when the caller has read it (else read for the record)."""
    now = now or timezone.now()
    with transaction.atomic():
        changed = Webhook.objects.filter(still or Q(), pk=webhook_id, is_active=True).update(
            is_active=False, deactivated_at=now, deactivation_reason=reason, updated_at=now
        )
        if changed or still is None:  # off now, by this call or before it
            _deliveries_cancel_pending(webhook_id)
        if changed:
            webhook = Webhook.objects.filter(pk=webhook_id)
            organization_id = organization_id or webhook.values_list("organization_id", flat=True).first()
            audit_record(
                "webhook.desativado",
                organization_id=organization_id,
                resource_type="webhook",
                resource_id=webhook_id,
                changes={"ativo": change(True, False), "motivo": change(None, reason)},
            )
    return bool(changed)


def _deliveries_cancel_pending(webhook_id) -> None:
    """A webhook turned off stops its pending deliveries (one being sent is recorded as it ends; a retry it
    schedules is cancelled when its turn comes: delivery_claim)."""
    WebhookDelivery.objects.filter(webhook_id=webhook_id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.CANCELLED, next_attempt_at=None
    )


_WEBHOOK_FIELD_NAMES = {"name": "nome", "url": "url", "events": "eventos", "is_active": "ativo", "blocks": "incluir"}


def url_for_audit(url: str) -> str:
    """A webhook URL without what may carry a credential (user info, query, fragment)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _audited_change(field: str, before, after) -> dict:
    return change(url_for_audit(before), url_for_audit(after)) if field == "url" else change(before, after)


def _webhook_audit(webhook: Webhook, changes: dict, *, regenerated: bool) -> None:
    """The fields that changed, and a secret's regeneration as its own action (never the secret)."""
    where = {"organization_id": webhook.organization_id, "resource_type": "webhook", "resource_id": webhook.pk}
    if changes:
        audit_record("webhook.atualizado", changes=changes, **where)
    if regenerated:
        audit_record("webhook.segredo_regenerado", **where)


def webhook_ensure_active(webhook: Webhook) -> None:
    """Nothing is sent to an inactive webhook, nor for a suspended organization: not a test, not a
    resend, not a queued attempt."""
    if not webhook.is_active:
        raise WebhookInactive()
    if not Organization.objects.filter(pk=webhook.organization_id, is_active=True).exists():
        raise OrganizationSuspended()


def webhook_delete(*, webhook: Webhook) -> None:
    with transaction.atomic():
        audit_record(
            "webhook.removido",
            organization_id=webhook.organization_id,
            resource_type="webhook",
            resource_id=webhook.pk,
            changes={"nome": change(webhook.name, None), "url": change(url_for_audit(webhook.url), None)},
        )
        webhook.delete()


def webhook_signing_secrets(webhook: Webhook) -> list[str]:
    """The current secret, plus the previous one during its grace period."""
    secrets_in_use = [webhook.secret]
    if (
        webhook.previous_secret
        and webhook.previous_secret_expires_at
        and webhook.previous_secret_expires_at > timezone.now()
    ):
        secrets_in_use.append(webhook.previous_secret)
    return secrets_in_use
