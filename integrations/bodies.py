"""An event's body as it is stored and sent, and the same body with the `incluir` blocks of its ticket.

An event about a ticket keeps every block of that ticket, read when the event was written, beside its body
(`WebhookEvent.ticket_blocks`). The event feed (`?incluir=`) and a webhook's deliveries (its `incluir`
setting, frozen on each delivery) add the blocks they ask for to `data.ticket`, after the ticket's own keys.
Made from the stored texts alone, the same blocks always give the same bytes: every attempt of a delivery
sends, and signs, what the first one did, and the feed shows what the webhook was sent.
"""

import json

from django.core.serializers.json import DjangoJSONEncoder


def body_dumps(payload: dict) -> str:
    """An event's body as stored: compact, UTF-8 as is (integrations.privacy rewrites bodies the same way)."""
    return json.dumps(payload, cls=DjangoJSONEncoder, ensure_ascii=False, separators=(",", ":"))


def ticket_blocks_dumps(blocks: dict | None) -> str:
    """What an event keeps of its ticket's blocks (by block name); empty for an event without a ticket."""
    return "" if blocks is None else body_dumps(blocks)


def with_blocks(payload: dict, ticket_blocks: str, names) -> dict:
    """The event's payload (parsed) with the blocks `names` asks for added to `data.ticket`, in place, in the
    order of `names` (the blocks' own order: tickets.payloads.ticket_blocks_chosen). An event without a
    ticket, or written before a block existed, has nothing to add."""
    if names and ticket_blocks:
        stored = json.loads(ticket_blocks)
        ticket = payload["data"]["ticket"]
        for name in names:
            ticket.update(stored.get(name, {}))
    return payload


def body_with_blocks(body: str, ticket_blocks: str, names) -> str:
    """The stored body, with the blocks `names` asks for; the stored bytes themselves without any."""
    if not names or not ticket_blocks:
        return body
    return body_dumps(with_blocks(json.loads(body), ticket_blocks, names))


def delivery_blocks(names) -> str:
    """A delivery's blocks as stored (WebhookDelivery.blocks): the names, comma separated."""
    return ",".join(names)


def delivery_block_names(stored: str) -> tuple[str, ...]:
    return tuple(name for name in stored.split(",") if name)
