"""Idempotent retries of partner POSTs (DESIGN.md, "Idempotent retries").

The first request with a key claims it with an insert (the unique constraint
decides races); its final response is stored and replayed for retries with the
same body. A claim whose request died mid-way is taken over after a while.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from foundation.exceptions import Conflict, ValidationFailed
from foundation.purge import delete_in_batches
from integrations.models import ApiCredential, IdempotencyRecord

HEADER = "Idempotency-Key"
RETENTION = timedelta(hours=24)
ABANDONED_AFTER = timedelta(minutes=2)


@dataclass(frozen=True)
class Replay:
    status_code: int
    body: dict


def fingerprint(method: str, path: str, body: bytes) -> str:
    """Equal JSON is the same request, whatever its spacing or key order."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    except (ValueError, UnicodeDecodeError, RecursionError):
        canonical = body
    return hashlib.sha256(b"\n".join([method.encode(), path.encode(), canonical])).hexdigest()


def multipart_fingerprint(method: str, path: str, fields: dict[str, list[str]], files: list[tuple]) -> str:
    """An upload is the same request when its fields and its files (field, name, size, SHA-256 computed
    while streaming) are the same; the body is never held in memory to hash it."""
    canonical = json.dumps({"campos": fields, "arquivos": sorted(files)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(b"\n".join([method.encode(), path.encode(), canonical.encode()])).hexdigest()


def idempotency_claim(
    *, credential: ApiCredential | None = None, user=None, key: str, request_fingerprint: str
) -> IdempotencyRecord | Replay:
    """Claim the key for this request, or return the stored response to replay. Keys belong to who sends them:
    the partner's credential, or the panel's user."""
    owner = {"credential": credential} if credential is not None else {"user": user}
    if not 1 <= len(key) <= 255:
        raise ValidationFailed({HEADER: ["Informe de 1 a 255 caracteres."]})
    now = timezone.now()
    for _attempt in range(2):
        try:
            with transaction.atomic():
                return IdempotencyRecord.objects.create(**owner, key=key, request_fingerprint=request_fingerprint)
        except IntegrityError:
            existing = IdempotencyRecord.objects.filter(**owner, key=key).first()
        if existing is None:
            continue
        expired = existing.created_at < now - RETENTION
        abandoned = existing.status_code is None and existing.created_at < now - ABANDONED_AFTER
        if expired or abandoned:
            IdempotencyRecord.objects.filter(pk=existing.pk, created_at=existing.created_at).delete()
            continue
        if existing.request_fingerprint != request_fingerprint:
            raise ValidationFailed({HEADER: ["Esta chave já foi usada com outra requisição."]})
        if existing.status_code is None:
            raise Conflict(
                "Requisição em andamento.",
                field=HEADER,
                detail="Uma requisição com esta chave ainda está sendo processada.",
            )
        return Replay(status_code=existing.status_code, body=existing.response_body)
    raise Conflict("Requisição em andamento.", field=HEADER, detail="Tente novamente em instantes.")


def idempotency_complete(*, record: IdempotencyRecord, status_code: int, body: dict) -> None:
    """Keep the response to replay; a server error frees the key so a retry runs again. So does a refusal that
    echoes a NUL the request sent (a 422 naming an unknown `incluir` block): PostgreSQL's jsonb cannot hold
    one, and the retry answers the same refusal anyway. Only refusals echo what was sent (stored data never
    holds a NUL), so only their bodies are looked at."""
    if status_code >= 500 or (status_code >= 400 and _holds_nul(body)):
        IdempotencyRecord.objects.filter(pk=record.pk).delete()
        return
    IdempotencyRecord.objects.filter(pk=record.pk).update(status_code=status_code, response_body=body)


def _holds_nul(body) -> bool:
    """A NUL anywhere in the body (a literal backslash-u0000 text is taken for one: the key is only freed)."""
    return "\\u0000" in json.dumps(body)


def idempotency_purge_expired() -> int:
    return delete_in_batches(IdempotencyRecord.objects.filter(created_at__lt=timezone.now() - RETENTION))
