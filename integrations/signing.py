"""Delivery signatures: our X-Service-Signature and the Standard Webhooks headers.

X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">,
keyed with the whole secret string (whsec_ included). webhook-signature:
"v1,<base64 HMAC-SHA256 of "<id>.<t>.<raw body>">", keyed with the
base64-decoded part of the secret. One signature per secret in use.
"""

import base64
import hashlib
import hmac

SECRET_PREFIX = "whsec_"


def service_signature(secret: str, timestamp: int, body: bytes) -> str:
    message = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def standard_webhooks_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    message = f"{message_id}.{timestamp}.".encode() + body
    return base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode("ascii")


def signed_headers(*, secrets: list[str], delivery_id: str, event_kind: str, timestamp: int, body: bytes) -> dict:
    service = ",".join(f"v1={service_signature(secret, timestamp, body)}" for secret in secrets)
    standard = " ".join(f"v1,{standard_webhooks_signature(secret, delivery_id, timestamp, body)}" for secret in secrets)
    return {
        "Content-Type": "application/json",
        "X-Service-Event": event_kind,
        "X-Service-Delivery": delivery_id,
        "X-Service-Signature": f"t={timestamp},{service}",
        "webhook-id": delivery_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": standard,
    }
