"""Data-subject requests (LGPD art. 18, GDPR art. 15 and 17): what the service holds about one contact, and
the removal of its copies outside the contact's row (docs/decisions.md, "Data-subject requests").

A person's data is copied into stored event bodies (`data.ticket.solicitante`, a customer reply's
`autor`), the answers stored for Idempotency-Key replays, and the excerpts of receivers' answers in the
delivery log. The contact's own row, its tickets' files and the change list are tickets' business
(tickets.services.contact_anonymize); this module handles the copies integrations keeps.
"""

import json
import re
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Prefetch, Q
from django.utils import timezone

from helpdesk.audit import audit_record
from integrations.models import IdempotencyRecord, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from tickets.attachments.selectors import PUBLIC
from tickets.models import Attachment, Contact, Ticket
from tickets.payloads import (
    EXPORTED_ATTACHMENT_COLUMNS,
    TICKET_COLUMNS,
    attachments_exported,
    contact_public,
    iso,
    tickets_public,
)
from tickets.services import ContactIdentity

ANONYMIZED_TEXT = "[anonimizado]"
# Bodies are searched for a ticket's id in chunks, to keep each statement's pattern list short.
TICKET_ID_CHUNK = 100


# --- finding the person in a stored body ----------------------------------------------------------


def _is_them(person: dict, identity: ContactIdentity | None) -> bool:
    """A `solicitante` or customer `autor` that shows this person: by the partner's id or the e-mail, else
    (a person shown without either) by the name and phone together."""
    if identity is None:
        return False
    if identity.external_id and person.get("external_id") == identity.external_id:
        return True
    if identity.email and (person.get("email") or "").lower() == identity.email:
        return True
    if person.get("email") or person.get("external_id"):
        return False
    return person.get("nome") == identity.name and (person.get("telefone") or "") == identity.phone


def _about_their_ticket(node: dict, ticket_ids: set[str]) -> bool:
    """A ticket of theirs, or what holds one (an event's `data`: its `resposta` is in that ticket)."""
    if node.get("id") in ticket_ids and "solicitante" in node:
        return True
    ticket = node.get("ticket")
    return isinstance(ticket, dict) and ticket.get("id") in ticket_ids


def _person_of(key: str, value) -> bool:
    return isinstance(value, dict) and (key == "solicitante" or (key == "autor" and value.get("tipo") == "cliente"))


def _walk(node, identity, ticket_ids: set[str], *, replace: bool, theirs: bool = False) -> bool:
    """Whether the person is in `node`; with `replace`, their copies become the neutral values in place."""
    found = False
    if isinstance(node, list):
        for item in node:
            found |= _walk(item, identity, ticket_ids, replace=replace, theirs=theirs)
    elif isinstance(node, dict):
        theirs = theirs or _about_their_ticket(node, ticket_ids)
        for key, value in node.items():
            if _person_of(key, value) and (theirs or _is_them(value, identity)):
                found = True
                if replace:
                    _neutralize(value)
            else:
                found |= _walk(value, identity, ticket_ids, replace=replace, theirs=theirs)
    return found


def _neutralize(person: dict) -> None:
    person["nome"] = Contact.ANONYMOUS_NAME
    for key in ("email", "telefone", "external_id"):
        if key in person:
            person[key] = None


def _dumps(payload) -> str:
    """As integrations.events writes a body, so an unchanged part keeps its bytes."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _fragment(value: str) -> str:
    """How a value appears inside a stored JSON body."""
    return _dumps(value)[1:-1]


def _candidate_events(organization_id, identity: ContactIdentity | None, ticket_ids: list[str]) -> Iterable:
    """Events whose text may name the person (a superset, checked by _walk), in the feed's order."""
    patterns = [_fragment(value) for value in identity.values()] if identity else []
    seen = set()
    queries = []
    if patterns:
        queries.append(_any_contains(patterns))
    for start in range(0, len(ticket_ids), TICKET_ID_CHUNK):
        queries.append(_any_contains(ticket_ids[start : start + TICKET_ID_CHUNK]))
    for query in queries:
        events = WebhookEvent.objects.filter(query, organization_id=organization_id).order_by("change_tx", "change_seq")
        for event in events.iterator(chunk_size=500):
            if event.pk not in seen:
                seen.add(event.pk)
                yield event


def _any_contains(patterns: list[str]) -> Q:
    query = Q()
    for pattern in patterns:
        query |= Q(body__contains=pattern)
    return query


def _events_naming(contact: Contact, identity: ContactIdentity | None, replace: bool) -> list[WebhookEvent]:
    ticket_ids = [str(pk) for pk in Ticket.objects.filter(requester=contact).values_list("pk", flat=True)]
    found = []
    for event in _candidate_events(contact.organization_id, identity, ticket_ids):
        body = json.loads(event.body)
        if _walk(body, identity, set(ticket_ids), replace=replace):
            if replace:
                event.body = _dumps(body)
            found.append(event)
    return sorted(found, key=lambda event: (event.change_tx, event.change_seq))


# --- anonymisation ------------------------------------------------------------------------------


def contact_copies_anonymize(*, contact: Contact, previous: ContactIdentity) -> int:
    """Replace the person's copies in the organization's event bodies, stored Idempotency-Key answers and
    delivery attempts' excerpts and errors; called in contact_anonymize's transaction. How many events changed."""
    events = _events_naming(contact, previous, replace=True)
    WebhookEvent.objects.bulk_update(events, ["body"], batch_size=500)
    attempts = WebhookDeliveryAttempt.objects.filter(delivery__event__in=[event.pk for event in events])
    _attempts_anonymize(attempts, previous)
    _stored_answers_anonymize(contact, previous)
    return len(events)


def _text_pattern(previous: ContactIdentity) -> re.Pattern | None:
    values = sorted({fragment for value in previous.values() for fragment in (value, _fragment(value))}, key=len)
    if not values:
        return None
    alternatives = "|".join(re.escape(value) for value in reversed(values))  # longest first
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def _attempts_anonymize(attempts, previous: ContactIdentity) -> None:
    """A receiver's answer may echo the body it got: its excerpt loses the person's values."""
    pattern = _text_pattern(previous)
    if pattern is None:
        return
    changed = []
    for attempt in attempts.only("id", "response_excerpt", "error").iterator(chunk_size=500):
        excerpt = pattern.sub(ANONYMIZED_TEXT, attempt.response_excerpt)
        error = pattern.sub(ANONYMIZED_TEXT, attempt.error)
        if (excerpt, error) != (attempt.response_excerpt, attempt.error):
            attempt.response_excerpt, attempt.error = excerpt, error
            changed.append(attempt)
    WebhookDeliveryAttempt.objects.bulk_update(changed, ["response_excerpt", "error"], batch_size=500)


def _stored_answers_anonymize(contact: Contact, previous: ContactIdentity) -> None:
    """A partner's retry within 24 hours replays the stored answer: it must not bring the person back."""
    ticket_ids = {str(pk) for pk in Ticket.objects.filter(requester=contact).values_list("pk", flat=True)}
    records = IdempotencyRecord.objects.filter(
        Q(credential__organization_id=contact.organization_id) | Q(user__organization_id=contact.organization_id),
        response_body__isnull=False,
    )
    changed = []
    for record in records.only("id", "response_body").iterator(chunk_size=500):
        if _walk(record.response_body, previous, ticket_ids, replace=True):
            changed.append(record)
    IdempotencyRecord.objects.bulk_update(changed, ["response_body"], batch_size=500)


# --- export -------------------------------------------------------------------------------------


def contact_export(*, contact: Contact, request) -> dict:
    """Everything the service holds about the person (an access request): the contact, the tickets it asked
    with their public replies (never an internal note), their public files' metadata with download links,
    ratings (none yet), and the events and deliveries whose bodies name them. Recorded in the audit trail:
    an export is a disclosure."""
    with transaction.atomic():
        identity = None if contact.anonymized_at else ContactIdentity.of(contact)
        ticket_rows = Ticket.objects.filter(requester=contact).order_by("number")
        tickets = tickets_public(list(ticket_rows.values_list(*TICKET_COLUMNS, named=True)))
        events = _events_naming(contact, identity, replace=False)
        document = {
            "contato": contact_public(contact),
            "tickets": tickets,
            "anexos": _attachments(contact, request),
            "avaliacoes": [],  # the service keeps no ratings yet
            "eventos": [json.loads(event.body) for event in events],
            "entregas": _deliveries([event.pk for event in events]),
            "exportado_em": iso(timezone.now()),
        }
        audit_record(
            "contato.exportado",
            organization_id=contact.organization_id,
            resource_type="contato",
            resource_id=contact.pk,
        )
    return document


def _attachments(contact: Contact, request) -> list[dict]:
    attachments = Attachment.objects.filter(PUBLIC, ticket__requester=contact).order_by("created_at", "id")
    return attachments_exported(request, attachments.values_list(*EXPORTED_ATTACHMENT_COLUMNS, named=True))


def _deliveries(event_ids: list) -> list[WebhookDelivery]:
    """The deliveries of these events, oldest first, with their attempts (DeliveryOut's shape)."""
    attempts = Prefetch("attempts", queryset=WebhookDeliveryAttempt.objects.order_by("number", "id"))
    return list(
        WebhookDelivery.objects.filter(event_id__in=event_ids)
        .select_related("event")
        .prefetch_related(attempts)
        .order_by("created_at", "id")
    )
