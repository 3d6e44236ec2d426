"""The receiver guide's deduplication advice holds: what it tells receivers to key on is signed,
and its example skips a repeated event (finding 7 of the security review)."""

import base64
import json
import re
import secrets
import time
import uuid
from pathlib import Path

import pytest
from standardwebhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError

from integrations.signing import SECRET_PREFIX, service_signature, signed_headers

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def a_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def test_the_receiver_guide_deduplicates_on_signed_values_only():
    guide = GUIDE.read_text()
    advice = guide[guide.index("Deduplicate on an id that is") :]

    assert "deduplicate on the body's `id`" in advice
    assert "deduplicate on `webhook-id`" in advice
    assert re.search(r"`X-Service-Delivery` \| .*not signed, so for logs, not for deduplication", guide)

    example = re.search(r"```python\n(def handle\(.*?)```", advice, re.S).group(1)
    processed = []

    class SeenIds(set):
        def add_if_absent(self, value) -> bool:
            if value in self:
                return False
            self.add(value)
            return True

    namespace = {"process": processed.append}
    exec(example, namespace)  # the guide's own code
    event = {"id": str(uuid.uuid4()), "evento": "ticket.resolvido"}
    seen = SeenIds()
    namespace["handle"](event, seen)
    namespace["handle"](dict(event), seen)  # the same delivery again

    assert processed == [event]


def test_the_body_id_is_covered_by_the_service_signature():
    secret, timestamp = a_secret(), int(time.time())
    body = json.dumps({"id": str(uuid.uuid4()), "evento": "ticket.resolvido"}).encode()
    forged = json.dumps({"id": str(uuid.uuid4()), "evento": "ticket.resolvido"}).encode()

    assert service_signature(secret, timestamp, body) != service_signature(secret, timestamp, forged)


def test_webhook_id_is_covered_by_the_standard_signature():
    secret = a_secret()
    body = json.dumps({"id": str(uuid.uuid4())}).encode()
    headers = signed_headers(
        secrets=[secret],
        delivery_id=str(uuid.uuid4()),
        event_kind="ticket.resolvido",
        timestamp=int(time.time()),
        body=body,
    )

    assert StandardWebhook(secret).verify(body, headers) == json.loads(body)
    with pytest.raises(WebhookVerificationError):
        StandardWebhook(secret).verify(body, {**headers, "webhook-id": str(uuid.uuid4())})
