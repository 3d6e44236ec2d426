"""Every write on tickets with a business rule: the API, the admin, the CLI and tasks call these.

Each service moves the change list itself where the partner sees a change (a save that writes the
ticket's updated_at, or tickets_touch), and announces what it did right after its write
(tickets.signals), with who did it: those announcements are its only other side effects.
"""

import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, connection, transaction
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from foundation.db import db_value, model_sql
from foundation.exceptions import ApplicationError, ValidationFailed
from foundation.feeds import change_fields
from foundation.ids import parse_uuid
from foundation.purge import delete_in_batches
from foundation.retention import purge_cutoff
from helpdesk.actors import PARTNER, SYSTEM, Actor
from helpdesk.audit import audit_record, change
from helpdesk.models import Agent, Organization
from helpdesk.selectors import agent_get
from tickets import signals
from tickets.exceptions import (
    ContactAnonymized,
    ContactExternalIdTaken,
    RatingClosed,
    ReplyNotEditable,
    StatusUnavailable,
    TicketClosed,
    TicketMerged,
    TicketNotFound,
    TicketNotResolved,
)
from tickets.fields.rules import FieldChange, custom_values_clean, values_ordered
from tickets.fields.selectors import field_definitions
from tickets.fields.values import FieldDefinition, value_columns
from tickets.models import (
    EMAIL_MAX_LENGTH,
    Attachment,
    AttachmentSender,
    Channel,
    Contact,
    Priority,
    Reply,
    ReplyOrigin,
    StatusCategory,
    Ticket,
    TicketFieldValue,
    TicketRating,
    TicketSequence,
    TicketStatus,
    TicketTombstone,
)
from tickets.selectors import status_cache_forget, status_default_open, status_first_of_category, status_get
from tickets.service_levels import sla_moved, sla_started
from tickets.tags import tags_check_count, tags_normalize

DEFAULT_STATUSES = [
    ("Aberto", StatusCategory.OPEN, "#3B82F6"),
    ("Em andamento", StatusCategory.IN_PROGRESS, "#F59E0B"),
    ("Aguardando cliente", StatusCategory.WAITING, "#8B5CF6"),
    ("Resolvido", StatusCategory.RESOLVED, "#10B981"),
    ("Fechado", StatusCategory.CLOSED, "#6B7280"),
]

REOPENING_CATEGORIES = {StatusCategory.WAITING, StatusCategory.RESOLVED}

UNCHANGED = object()  # "not given", where None means "clear it"


def ticketing_setup(*, organization: Organization) -> None:
    """The default statuses and the ticket number sequence of a new organization."""
    TicketStatus.objects.bulk_create(
        [
            TicketStatus(organization=organization, name=name, category=category, color=color, position=index)
            for index, (name, category, color) in enumerate(DEFAULT_STATUSES)
        ]
    )
    TicketSequence.objects.get_or_create(organization=organization)


@dataclass(frozen=True)
class RequesterData:
    """Who asks, as the partner describes them; blank or null text means "not given"."""

    name: str
    email: str | None = ""
    phone: str | None = ""
    external_id: str | None = None

    def normalized(self) -> "RequesterData":
        """E-mails are compared and stored lower-cased, whatever door they come through."""
        return RequesterData(
            name=self.name,
            email=(self.email or "").strip().lower(),
            phone=self.phone or "",
            external_id=self.external_id or None,
        )


def ticket_create(
    *,
    organization: Organization,
    subject: str,
    description: str,
    requester: RequesterData,
    priority: str | None = None,
    external_id: str | None = None,
    channel: str = Channel.API,
    tags: list[str] | tuple[str, ...] = (),
    actor: Actor = PARTNER,
    custom_fields: dict | None = None,
) -> tuple[Ticket, bool]:
    """Create a ticket, or return the existing one for the same external_id (as it is: `tags` are the new
    ticket's, never added to the existing one).

    Returns (ticket, created). Bumping the sequence row locks it, so creation is
    serialised within an organization and numbers have no gaps. Two requests with
    one new external_id both miss the first look; the second one's insert then
    fails on the unique constraint, and the request runs again (EnvelopeViewMixin)
    and finds the first one's ticket.

    `custom_fields` (`campos`, `{chave: valor}`) are checked for the actor's door before anything is written
    (tickets.fields.rules); a known external_id's ticket keeps the values it has.
    """
    tags = tags_normalize(tags)
    tags_check_count(tags)
    if external_id is not None:
        existing = _ticket_with_external_id(organization, external_id)
        if existing is not None:
            return existing, False
    values, definitions = {}, ()
    if custom_fields:
        definitions = field_definitions(organization.pk)  # one read for the checks and the writes
        cleaned = custom_values_clean(definitions=definitions, values=custom_fields, actor=actor)
        values = values_ordered(definitions, cleaned)
    status = status_default_open(organization=organization)
    with transaction.atomic(savepoint=False):
        number = _next_ticket_number(organization)
        ticket = Ticket(
            organization=organization,
            number=number,
            subject=subject,
            description=description,
            priority=priority or Priority.MEDIUM,
            channel=channel,
            source_system=channel,
            status=status,
            requester=contact_upsert(organization=organization, requester=requester, actor=actor),
            external_id=external_id,
            custom_fields=values,
            tags=tags,
        )
        sla_started(ticket, now=timezone.now())
        ticket.save(force_insert=True)
        _field_rows_insert(ticket, values, definitions)
        signals.ticket_created.send(sender=Ticket, ticket=ticket, actor=actor)
    return ticket, True


def ticket_open(
    *,
    organization: Organization,
    actor: Actor,
    subject: str,
    description: str,
    requester: RequesterData,
    priority: str | None = None,
    assignee: Agent | None = None,
    custom_fields: dict | None = None,
) -> Ticket:
    """A ticket an agent opens for a requester (the admin, the agent panel API): channel `painel`, the
    requester found or made as for a partner's ticket, announced as created, then as assigned. An agent may
    give any active custom field (`custom_fields`), hidden ones too."""
    if assignee is not None:
        _assignee_check(organization.pk, assignee)
    with transaction.atomic(savepoint=False):
        ticket, _created = ticket_create(
            organization=organization,
            subject=subject,
            description=description,
            requester=requester,
            priority=priority,
            channel=Channel.PANEL,
            actor=actor,
            custom_fields=custom_fields,
        )
        if assignee is not None:
            ticket = ticket_update(ticket=ticket, assignee=assignee, actor=actor)
    return ticket


def _assignee_check(organization_id, assignee: Agent, current_assignee_id=None) -> None:
    if assignee.organization_id != organization_id:
        raise ValidationFailed({"atendente_id": ["Atendente inexistente nesta organização."]})
    if not assignee.is_active and assignee.pk != current_assignee_id:
        raise ValidationFailed({"atendente_id": ["Atendente inativo não pode receber tickets."]})


TICKET_BY_EXTERNAL_ID_SQL = model_sql(
    "SELECT {t.id}, {t.merged_into} FROM {t} WHERE {t.organization} = %s AND {t.external_id} = %s",
    t=Ticket,
)


def _ticket_with_external_id(organization: Organization, external_id: str) -> Ticket | None:
    """Most creates bring a new external_id: they pay one light statement; a repeat loads its ticket (with
    its assignee: the `atendente` block shows it without another statement). A ticket merged into another
    (tickets.merging) answers with that one: its thread is there now, and the idempotency survives the merge."""
    with connection.cursor() as cursor:
        cursor.execute(TICKET_BY_EXTERNAL_ID_SQL, [db_value(Ticket, "organization", organization.pk), external_id])
        found = cursor.fetchone()
    if not found:
        return None
    pk = found[1] or found[0]
    return Ticket.objects.select_related("status", "requester", "assignee").get(pk=pk)


NEXT_NUMBER_SQL = model_sql(
    "UPDATE {s} SET {s.last_number} = {s.last_number} + 1 WHERE {s.organization} = %s RETURNING {s.last_number}",
    s=TicketSequence,
)


def _next_ticket_number(organization: Organization) -> int:
    """One statement: bump the organization's sequence and hold its row lock until commit."""
    with connection.cursor() as cursor:
        cursor.execute(NEXT_NUMBER_SQL, [db_value(TicketSequence, "organization", organization.pk)])
        row = cursor.fetchone()
    if row is None:  # an organization from before sequences existed
        TicketSequence.objects.get_or_create(organization=organization)
        return _next_ticket_number(organization)
    return row[0]


def contact_upsert(*, organization: Organization, requester: RequesterData, actor: Actor = PARTNER) -> Contact:
    """Reuse the organization's contact (by external_id, else by e-mail) or create it.

    A reused contact gets its blank fields filled from the request; values it
    already has are kept. With an external_id this is one statement (INSERT ...
    ON CONFLICT), so concurrent requests for one requester make one contact.
    """
    requester = requester.normalized()
    if requester.external_id:
        return _contact_upsert_by_external_id(organization, requester, actor)
    contact = None
    if requester.email:
        contacts = Contact.objects.filter(organization=organization, email__iexact=requester.email)
        contact = contacts.order_by("created_at").first()
    if contact is None:
        return Contact.objects.create(
            organization=organization, name=requester.name, email=requester.email, phone=requester.phone
        )
    filled = [
        field for field in ("name", "email", "phone") if getattr(requester, field) and not getattr(contact, field)
    ]
    for field in filled:
        setattr(contact, field, getattr(requester, field))
    if filled:
        _contact_save(contact, filled, actor)
    return contact


def _contact_save(contact: Contact, changed: list[str], actor: Actor) -> None:
    """A contact's shown data changed: every ticket it asked moves in the change list (solicitante)."""
    if "external_id" in changed:
        try:
            with transaction.atomic():  # a savepoint: the refused UPDATE leaves the request's transaction usable
                contact.save(update_fields=[*changed, "updated_at"])
        except IntegrityError:  # the one unique constraint a contact's UPDATE can break: (organization, external_id)
            raise ContactExternalIdTaken() from None
    else:
        contact.save(update_fields=[*changed, "updated_at"])
    tickets_touch(tickets=Ticket.objects.filter(requester=contact))
    signals.contact_updated.send(sender=Contact, contact=contact, changed=changed, actor=actor)


# One statement, so concurrent requests for one requester make one contact: blank fields
# are filled from the request, values the contact already has are kept.
CONTACT_UPSERT_SQL = model_sql(
    """
INSERT INTO {c} ({c.id}, {c.organization}, {c.name}, {c.email}, {c.phone}, {c.external_id}, {c.created_at},
    {c.updated_at})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT ({c.organization}, {c.external_id}) WHERE {c.external_id} IS NOT NULL DO UPDATE SET
    {c.name} = CASE WHEN {c}.{c.name} = '' THEN excluded.{c.name} ELSE {c}.{c.name} END,
    {c.email} = CASE WHEN {c}.{c.email} = '' THEN excluded.{c.email} ELSE {c}.{c.email} END,
    {c.phone} = CASE WHEN {c}.{c.phone} = '' THEN excluded.{c.phone} ELSE {c}.{c.phone} END,
    {c.updated_at} = CASE
        WHEN ({c}.{c.name} = '' AND excluded.{c.name} <> '')
          OR ({c}.{c.email} = '' AND excluded.{c.email} <> '')
          OR ({c}.{c.phone} = '' AND excluded.{c.phone} <> '')
        THEN excluded.{c.updated_at} ELSE {c}.{c.updated_at} END
RETURNING {c.id}, {c.organization}, {c.name}, {c.email}, {c.phone}, {c.external_id}, {c.created_at}, {c.updated_at}
""",
    c=Contact,
)


def _contact_upsert_by_external_id(organization: Organization, requester: RequesterData, actor: Actor) -> Contact:
    now = timezone.now()
    values = {
        "id": uuid.uuid4(),
        "organization": organization.pk,
        "name": requester.name,
        "email": requester.email,
        "phone": requester.phone,
        "external_id": requester.external_id,
        "created_at": now,
        "updated_at": now,
    }
    params = [db_value(Contact, name, value) for name, value in values.items()]
    contact = next(iter(Contact.objects.raw(CONTACT_UPSERT_SQL, params)))
    if contact.updated_at == now and contact.created_at != now:
        # Blank fields of a known contact were filled: its other tickets show the new solicitante.
        tickets_touch(tickets=Ticket.objects.filter(requester=contact))
        # Which blanks were filled is not told by the one statement that filled them.
        signals.contact_updated.send(sender=Contact, contact=contact, changed=None, actor=actor)
    return contact


def reply_create_by_customer(*, organization: Organization, ticket_id, body: str) -> Reply:
    """The ticket's contact answers through the partner API; reopens a waiting or resolved ticket.

    The ticket is read once, under its row lock: another organization's or a missing one is
    TicketNotFound. Errors are raised after the block, so the request's transaction (and a
    stored Idempotency-Key answer) is not marked for rollback.
    """
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket_of(organization, ticket_id)
        merged = ticket is not None and ticket.merged_into_id is not None
        closed = ticket is not None and ticket.status.category == StatusCategory.CLOSED
        if ticket is not None and not closed and not merged:
            previous_status = ticket.status
            if _reopening_due(ticket):
                _apply_status(ticket, _reopened_status(ticket))
            now = timezone.now()
            clock_fields = sla_moved(ticket, now=now, previous_category=previous_status.category, customer_replied=True)
            ticket.save(update_fields=["status", "resolved_at", "updated_at", *clock_fields])
            reply = Reply.objects.create(
                ticket=ticket,
                body=body,
                origin=ReplyOrigin.CUSTOMER_API,
                author_contact=ticket.requester,
                created_at=now,  # never newer than the ticket's atualizado_em; the instant the clock counted
            )
            if ticket.status_id != previous_status.pk:
                signals.ticket_status_changed.send(
                    sender=Ticket, ticket=ticket, previous_status=previous_status, actor=PARTNER
                )
            signals.reply_published.send(sender=Reply, reply=reply, actor=PARTNER)
    if ticket is None:
        raise TicketNotFound()
    if merged:  # closed too, but the partner needs to know where the conversation went
        target = Ticket.objects.values_list("id", "number", named=True).get(pk=ticket.merged_into_id)
        raise TicketMerged(target_id=target.id, target_number=target.number)
    if closed:
        raise TicketClosed()
    return reply


def reply_create_by_agent(*, ticket: Ticket, agent: Agent, body: str, internal: bool = False) -> Reply:
    """A public reply or an internal note written by an agent.

    A note changes nothing the partner can see: the ticket keeps its atualizado_em and its place
    in the change list (docs/decisions.md).
    """
    if agent.organization_id != ticket.organization_id:
        raise ValidationFailed({"atendente": ["Atendente de outra organização."]})
    actor = Actor.of_agent(agent)
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket(ticket)
        now = timezone.now()
        if not internal:  # the thread changed: the change list moves, the responses owed are met
            clock_fields = sla_moved(ticket, now=now, agent_replied=True)
            ticket.save(update_fields=["updated_at", *clock_fields])
        reply = Reply.objects.create(
            ticket=ticket,
            body=body,
            is_internal=internal,
            origin=ReplyOrigin.AGENT,
            author_agent=agent,
            # Never newer than the ticket's atualizado_em, which it moved; the instant the clock met its targets.
            created_at=now,
        )
        announcement = signals.note_added if internal else signals.reply_published
        announcement.send(sender=Reply, reply=reply, actor=actor)
    return reply


def reply_ensure_editable_by_customer(reply: Reply) -> None:
    """The partner may edit only what was sent through the API (by any of its keys)."""
    if reply.origin != ReplyOrigin.CUSTOMER_API:
        raise ReplyNotEditable()


def reply_ensure_editable_by_agent(reply: Reply, agent: Agent) -> None:
    """An agent edits their own replies and notes, never the customer's words."""
    if reply.origin != ReplyOrigin.AGENT or reply.author_agent_id != agent.pk:
        raise ReplyNotEditable(detail="Somente o autor da resposta pode editá-la.")


def reply_edit_as_customer(*, reply: Reply, body: str) -> Reply:
    reply_ensure_editable_by_customer(reply)
    return _reply_set_body(reply, body, PARTNER)


def reply_edit_as_agent(*, reply: Reply, agent: Agent, body: str) -> Reply:
    reply_ensure_editable_by_agent(reply, agent)
    return _reply_set_body(reply, body, Actor.of_agent(agent))


def _reply_set_body(reply: Reply, body: str, actor: Actor) -> Reply:
    """An edit of a public reply changes the ticket the partner sees (`editado` too); an edit of a note does not."""
    previous_body = reply.body
    visible = not reply.is_internal and (body != previous_body or not reply.edited)
    with transaction.atomic(savepoint=False):
        # The ticket's row before the reply's, in the order a deletion takes them (the ticket, then its replies
        # by cascade): the other order deadlocked an edit with a deletion of its ticket on PostgreSQL.
        if not Ticket.objects.select_for_update().filter(pk=reply.ticket_id).values_list("pk", flat=True).first():
            raise TicketNotFound()
        reply.body = body
        reply.edited = True
        reply.save(update_fields=["body", "edited", "updated_at"])
        if visible:
            tickets_touch(tickets=Ticket.objects.filter(pk=reply.ticket_id))
        if body != previous_body:
            signals.reply_edited.send(sender=Reply, reply=reply, previous_body=previous_body, actor=actor)
    return reply


def ticket_update(
    *,
    ticket: Ticket,
    status: TicketStatus | None = None,
    assignee: Agent | None = None,
    priority: str | None = None,
    unassign: bool = False,
    tags_add: list[str] | tuple[str, ...] = (),
    tags_remove: list[str] | tuple[str, ...] = (),
    actor: Actor = SYSTEM,
) -> Ticket:
    """An agent's (or the system's) change of status, assignee, priority or tags; entering `resolvido` stamps
    resolvido_em. Each change is announced, status first, then priority, then assignee, then tags."""
    ticket_update_check(ticket=ticket, status=status, assignee=assignee, priority=priority)
    tags = TagsChange.of(tags_add, tags_remove)
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket(ticket)
        _ticket_change(
            ticket, status=status, assignee=assignee, priority=priority, unassign=unassign, tags=tags, actor=actor
        )
    return ticket


@dataclass(frozen=True)
class TagsChange:
    """Tags to add and to remove, normalised (tickets.tags); a tag in both is refused (422 on `remover`): which
    one would the caller mean? Removing a tag the ticket lacks, or adding one it has, is no error."""

    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()

    @classmethod
    def of(cls, add=(), remove=(), *, fields: tuple[str, str] = ("adicionar", "remover")) -> "TagsChange":
        add_field, remove_field = fields
        errors: dict[str, list[str]] = {}
        normalized = {}
        for field, values in ((add_field, add), (remove_field, remove)):
            try:
                normalized[field] = tags_normalize(values, field=field)
            except ValidationFailed as error:
                errors.update(error.errors)
        if errors:
            raise ValidationFailed(errors)
        both = sorted(set(normalized[add_field]) & set(normalized[remove_field]))
        if both:
            named = ", ".join(f'"{tag}"' for tag in both)
            raise ValidationFailed({remove_field: [f"Tag em adicionar e em remover ao mesmo tempo: {named}."]})
        return cls(tuple(normalized[add_field]), tuple(normalized[remove_field]))

    def applied_to(self, tags: list[str]) -> list[str]:
        """The ticket's tags after this change: sorted, each once."""
        return sorted((set(tags) | set(self.add)) - set(self.remove))


NO_TAGS_CHANGE = TagsChange()


def ticket_tags_change_by_customer(*, organization: Organization, ticket_id, change: TagsChange) -> Ticket:
    """The partner adds and removes tags (PATCH /api/v1/tickets/{id}/tags), under the ticket's row lock: two
    writers at once each apply their own change to what the other left, so both win. A change that adds
    nothing new and removes nothing present writes nothing. Announced with the partner as actor: audited, no
    event (no echo). Errors are raised after the block, as in reply_create_by_customer."""
    error: ApplicationError | ValidationFailed | None = None
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket_of(organization, ticket_id)
        if ticket is None:
            error = TicketNotFound()
        else:
            try:
                _ticket_change(ticket, tags=change, actor=PARTNER)
            except ValidationFailed as refused:  # checked before any write
                error = refused
    if error is not None:
        raise error
    return ticket


def _ticket_change(
    ticket: Ticket,
    *,
    status: TicketStatus | None = None,
    assignee: Agent | None = None,
    priority: str | None = None,
    unassign: bool = False,
    tags: TagsChange = NO_TAGS_CHANGE,
    actor: Actor,
) -> None:
    """The write of every status, assignee, priority or tags change, on a ticket read under its row lock: each
    moves atualizado_em (and the change list), the assignee too since the `atendente` block of `incluir` shows it
    (issue 21), the tags since the `tags` block does (issue 22), and each change is announced. The tags' limit
    is checked before anything is written."""
    before = (ticket.status, ticket.priority, ticket.assignee)
    previous_tags = list(ticket.tags)
    tags_changed = _apply_tags(ticket, tags)
    changed = [
        *_apply_status(ticket, status),
        *_apply_priority(ticket, priority),
        *_apply_assignee(ticket, assignee, unassign),
        *tags_changed,
    ]
    if "resolved_at" in changed and ticket.resolved_at is not None:
        changed += _resolution_counted(ticket, actor)
    if "status" in changed or "priority" in changed:
        # A resolution meets its target at the ticket's resolvido_em.
        now = ticket.resolved_at if "resolved_at" in changed and ticket.resolved_at else timezone.now()
        changed += sla_moved(ticket, now=now, previous_category=before[0].category, previous_priority=before[1])
    if changed:
        ticket.save(update_fields=[*changed, "updated_at"])
    _announce_changes(ticket, *before, actor=actor)
    if tags_changed:
        signals.ticket_tags_changed.send(
            sender=Ticket,
            ticket=ticket,
            added=sorted(set(ticket.tags) - set(previous_tags)),
            removed=sorted(set(previous_tags) - set(ticket.tags)),
            actor=actor,
        )


def _resolution_counted(ticket: Ticket, actor: Actor) -> list[str]:
    """A new resolution cycle, to be rated (POST /api/v1/tickets/{id}/avaliacao): by the agent who resolved it, or
    by its assignee when the customer or the system did; the last cycle's rating is no longer the current one."""
    ticket.resolution_count += 1
    ticket.resolved_by = actor.agent if actor.kind == Actor.AGENT else ticket.assignee
    ticket.current_rating = None
    return ["resolution_count", "resolved_by", "current_rating"]


RATING_CHANGE_DAYS = 7


def ticket_rate_by_customer(*, organization: Organization, ticket_id, score: int, comment: str = "") -> tuple:
    """The customer's rating of the ticket's last resolution, collected by the partner (POST .../avaliacao): the
    first of a cycle is kept (created True), another within RATING_CHANGE_DAYS of it replaces its score and comment;
    later it is refused (RatingClosed), as is a rating of a ticket never resolved (TicketNotResolved). Under the
    ticket's row lock: two at once are one rating, then its replacement. The ticket moves in the change list (its
    `avaliacao` block changed). Returns (rating, created); errors are raised after the block, as in
    reply_create_by_customer."""
    error: ApplicationError | None = None
    rating, created = None, False
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket_of(organization, ticket_id)
        if ticket is None:
            error = TicketNotFound()
        elif ticket.resolution_count == 0:
            error = TicketNotResolved()
        else:
            now = timezone.now()
            rating = TicketRating.objects.filter(ticket=ticket, cycle=ticket.resolution_count).first()
            if rating is None:
                rating = TicketRating.objects.create(
                    organization=organization,
                    ticket=ticket,
                    cycle=ticket.resolution_count,
                    score=score,
                    comment=comment,
                    agent=ticket.resolved_by,
                    resolved_at=ticket.resolved_at,
                    created_at=now,
                )
                created = True
            elif now - rating.created_at > timedelta(days=RATING_CHANGE_DAYS):
                error = RatingClosed()
            else:
                rating.score, rating.comment = score, comment
                rating.save(update_fields=["score", "comment", "updated_at"])
            if error is None:
                ticket.current_rating = rating
                ticket.save(update_fields=["current_rating", "updated_at"])
    if error is not None:
        raise error
    return rating, created


def _apply_tags(ticket: Ticket, change: TagsChange) -> list[str]:
    tags = change.applied_to(ticket.tags)
    if tags == ticket.tags:
        return []
    tags_check_count(tags)
    ticket.tags = tags
    return ["tags"]


def _announce_changes(ticket: Ticket, previous_status, previous_priority, previous_assignee, *, actor: Actor) -> None:
    if ticket.status_id != previous_status.pk:
        signals.ticket_status_changed.send(sender=Ticket, ticket=ticket, previous_status=previous_status, actor=actor)
    if ticket.priority != previous_priority:
        signals.ticket_priority_changed.send(
            sender=Ticket, ticket=ticket, previous_priority=previous_priority, actor=actor
        )
    if ticket.assignee_id != (previous_assignee.pk if previous_assignee else None):
        signals.ticket_assigned.send(sender=Ticket, ticket=ticket, previous_assignee=previous_assignee, actor=actor)


def ticket_update_by_ids(
    *,
    ticket: Ticket,
    status_id=UNCHANGED,
    assignee_id=UNCHANGED,
    priority: str | None = None,
    custom_fields=UNCHANGED,
    tags: TagsChange = NO_TAGS_CHANGE,
    actor: Actor = SYSTEM,
) -> Ticket:
    """ticket_update for callers holding ids (the agent panel API); `assignee_id=None` unassigns; `custom_fields`
    as ticket_fields_set takes them (checked before anything is written), announced after the other changes.

    An id outside the ticket's organization is a 404 on its field, exactly like one that does not exist.
    """
    status = None
    if status_id is not UNCHANGED:
        status = status_get(organization_id=ticket.organization_id, status_id=status_id)
    assignee = None
    if assignee_id not in (UNCHANGED, None):
        assignee = agent_get(organization_id=ticket.organization_id, agent_id=assignee_id)
    cleaned, definitions = {}, ()
    if custom_fields is not UNCHANGED:
        definitions = field_definitions(ticket.organization_id)
        cleaned = custom_values_clean(definitions=definitions, values=custom_fields, actor=actor)
    ticket_update_check(ticket=ticket, status=status, assignee=assignee, priority=priority)
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket(ticket)
        _ticket_change(
            ticket,
            status=status,
            assignee=assignee,
            priority=priority,
            unassign=assignee_id is None,
            tags=tags,
            actor=actor,
        )
        if cleaned:
            _fields_write(ticket, cleaned, actor, definitions)
    return ticket


def ticket_resolve(*, ticket: Ticket, actor: Actor = SYSTEM) -> bool:
    """Move the ticket to its organization's first `resolvido` status; False when it already is resolved."""
    resolved = _resolved_status(ticket) if _resolution_due(ticket) else None
    if resolved is None:
        return False
    ticket_update(ticket=ticket, status=resolved, actor=actor)
    return True


def _resolution_due(ticket: Ticket) -> bool:
    return ticket.status.category != StatusCategory.RESOLVED


def _resolved_status(ticket: Ticket) -> TicketStatus | None:
    """Where resolving takes a ticket: its organization's first `resolvido` status (None: it has none)."""
    return status_first_of_category(organization_id=ticket.organization_id, category=StatusCategory.RESOLVED)


def _reopening_due(ticket: Ticket) -> bool:
    """The customer's word (a reply, or reabrir) takes back a ticket that waits for them or is resolved."""
    return ticket.status.category in REOPENING_CATEGORIES


def _reopened_status(ticket: Ticket) -> TicketStatus | None:
    """Where reopening takes a ticket: its organization's default `aberto` status (None: it has none)."""
    return status_default_open(organization=ticket.organization)


@dataclass(frozen=True)
class _CustomerMove:
    """What the customer may ask of a ticket's status through the partner API: when the move is due, where
    it goes, and the category named when the organization has no status to go to."""

    due: Callable[[Ticket], bool]
    destination: Callable[[Ticket], TicketStatus | None]
    category: str


_RESOLVE = _CustomerMove(_resolution_due, _resolved_status, StatusCategory.RESOLVED)
_REOPEN = _CustomerMove(_reopening_due, _reopened_status, StatusCategory.OPEN)


def ticket_resolve_by_customer(*, organization: Organization, ticket_id) -> Ticket:
    """The customer says the problem is solved (POST /api/v1/tickets/{id}/resolver): the ticket goes to the
    organization's first `resolvido` status, resolvido_em stamped. Already resolved: nothing changes."""
    return _ticket_move_by_customer(organization, ticket_id, _RESOLVE)


def ticket_reopen_by_customer(*, organization: Organization, ticket_id) -> Ticket:
    """The customer says the problem is back (POST /api/v1/tickets/{id}/reabrir): from `aguardando` or
    `resolvido` to the default `aberto`, resolvido_em cleared. Already `aberto` or `em_andamento`: nothing
    changes."""
    return _ticket_move_by_customer(organization, ticket_id, _REOPEN)


def _ticket_move_by_customer(organization: Organization, ticket_id, move: _CustomerMove) -> Ticket:
    """The ticket is read once, under its row lock, and judged there: two moves at once run one after the
    other, the second seeing the first's result. The customer cannot move a closed ticket (409).
    The move is ticket_update's write, announced with the partner as actor: the audit trail records it,
    no event is emitted (no echo). Errors are raised after the block, as in reply_create_by_customer."""
    error: ApplicationError | None = None
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket_of(organization, ticket_id)
        if ticket is None:
            error = TicketNotFound()
        elif ticket.status.category == StatusCategory.CLOSED:
            error = TicketClosed(detail="Um ticket fechado não pode ser resolvido nem reaberto pelo cliente.")
        elif move.due(ticket):
            destination = move.destination(ticket)
            if destination is None:
                error = StatusUnavailable(category=move.category)
            else:
                _ticket_change(ticket, status=destination, actor=PARTNER)
    if error is not None:
        raise error
    return ticket


def ticket_update_check(*, ticket: Ticket, status=None, assignee=None, priority=None) -> None:
    """ticket_update's rules, for forms that show a field error before anything is saved (the admin)."""
    errors: dict[str, list[str]] = {}
    if status is not None and status.organization_id != ticket.organization_id:
        errors["status_id"] = ["Status inexistente nesta organização."]
    if assignee is not None:
        try:
            _assignee_check(ticket.organization_id, assignee, ticket.assignee_id)
        except ValidationFailed as error:
            errors.update(error.errors)
    if priority is not None and priority not in Priority.values:
        errors["prioridade"] = ["Prioridade inválida."]
    if errors:
        raise ValidationFailed(errors)


def _apply_status(ticket: Ticket, status: TicketStatus | None) -> list[str]:
    if status is None or status.pk == ticket.status_id:
        return []
    was_resolved = ticket.status.category == StatusCategory.RESOLVED
    ticket.status = status
    if status.category == StatusCategory.RESOLVED and not was_resolved:
        ticket.resolved_at = timezone.now()
        return ["status", "resolved_at"]
    if status.category != StatusCategory.RESOLVED and ticket.resolved_at is not None:
        ticket.resolved_at = None
        return ["status", "resolved_at"]
    return ["status"]


def _apply_assignee(ticket: Ticket, assignee: Agent | None, unassign: bool) -> list[str]:
    if assignee is not None and assignee.pk != ticket.assignee_id:
        ticket.assignee = assignee
        return ["assignee"]
    if assignee is None and unassign and ticket.assignee_id is not None:
        ticket.assignee = None
        return ["assignee"]
    return []


def _apply_priority(ticket: Ticket, priority: str | None) -> list[str]:
    if priority is not None and priority != ticket.priority:
        ticket.priority = priority
        return ["priority"]
    return []


def ticket_fields_set(*, ticket: Ticket, values, actor: Actor) -> Ticket:
    """Set (or, with None, clear) some of a ticket's custom fields: PATCH /api/v1/tickets/{id}/campos (the
    partner), the panel's PATCH /api/tickets/{id} and the admin (agents: every field). A value equal to the kept
    one changes nothing, and a request that changes nothing writes and announces nothing. A change of a field
    partners see moves atualizado_em and the change list; of hidden fields alone, neither. The value rows the
    list's filters read are written in the same transaction."""
    definitions = field_definitions(ticket.organization_id)
    cleaned = custom_values_clean(definitions=definitions, values=values, actor=actor)
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket(ticket)
        _fields_write(ticket, cleaned, actor, definitions)
    return ticket


def ticket_fields_set_by_customer(*, organization: Organization, ticket_id, values) -> Ticket:
    """PATCH /api/v1/tickets/{id}/campos: ticket_fields_set for the partner, the ticket read once, under its row
    lock (another organization's or a missing one is TicketNotFound, before the values are looked at). Errors are
    raised after the block, as in reply_create_by_customer."""
    error: Exception | None = None
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket_of(organization, ticket_id)
        if ticket is None:
            error = TicketNotFound()
        else:
            try:
                definitions = field_definitions(organization.pk)
                cleaned = custom_values_clean(definitions=definitions, values=values, actor=PARTNER)
            except ValidationFailed as refused:
                error = refused
            else:
                _fields_write(ticket, cleaned, PARTNER, definitions)
    if error is not None:
        raise error
    return ticket


def _fields_write(ticket: Ticket, cleaned: dict, actor: Actor, definitions: tuple[FieldDefinition, ...]) -> None:
    """Checked values (custom_values_clean, with these `definitions`) onto a ticket read under its row lock."""
    by_key = {d.key: d for d in definitions}
    kept = dict(ticket.custom_fields or {})
    changes = {
        key: FieldChange(kept.get(key), value, by_key[key].shown_to_partner)
        for key, value in cleaned.items()
        if kept.get(key) != value
    }
    if not changes:
        return
    ticket.custom_fields = values_ordered(definitions, {**kept, **cleaned})
    shown = any(item.shown_to_partner for item in changes.values())
    ticket.save(update_fields=["custom_fields", "updated_at"] if shown else ["custom_fields"])
    TicketFieldValue.objects.filter(ticket=ticket, field_id__in=[by_key[key].id for key in changes]).delete()
    _field_rows_insert(ticket, ticket.custom_fields, [by_key[key] for key in changes])
    signals.ticket_fields_changed.send(sender=Ticket, ticket=ticket, changes=changes, actor=actor)


def _field_rows_insert(ticket: Ticket, values: dict, definitions: Iterable[FieldDefinition]) -> None:
    """The TicketFieldValue rows of a ticket's values of these fields, in one INSERT."""
    rows = [
        TicketFieldValue(organization_id=ticket.organization_id, ticket=ticket, field_id=d.id, **columns)
        for d in definitions
        if values.get(d.key) is not None
        for columns in value_columns(d, values[d.key])
    ]
    if rows:
        TicketFieldValue.objects.bulk_create(rows)


def ticket_delete(*, ticket: Ticket, actor: Actor) -> TicketTombstone:
    """A ticket deleted (a test ticket, a mistake): its replies and files go with it. A tombstone stays
    for every copy to delete it too (the change list's `excluidos`), and the deletion is announced."""
    with transaction.atomic(savepoint=False):
        ticket = _locked_ticket(ticket)
        # Written before the ticket goes: on SQLite its place counts from the ticket's own.
        tombstone = TicketTombstone.objects.create(
            id=ticket.pk,
            organization=ticket.organization,
            number=ticket.number,
            external_id=ticket.external_id,
            deleted_at=timezone.now(),
        )
        ticket.delete()  # replies and attachments by cascade; their files after the commit (tickets.lifecycle)
        signals.ticket_deleted.send(sender=Ticket, tombstone=tombstone, actor=actor)
    return tombstone


def tombstones_purge_expired(*, now=None) -> int:
    """Tombstones are kept as long as events (EVENT_RETENTION_DAYS and its grace); older ones go, a batch at
    a time. An organization's newest tombstone stays: on SQLite the next change's place counts from it, and
    a place must never be given twice. Returns how many went."""
    newest = TicketTombstone.objects.filter(organization_id=OuterRef("organization_id")).order_by(
        "-change_tx", "-change_seq"
    )
    expired = TicketTombstone.objects.filter(deleted_at__lt=purge_cutoff(now)).exclude(
        pk=Subquery(newest.values("pk")[:1])
    )
    return delete_in_batches(expired)


# --- what tickets show from other rows: the requester and the status -----------------------------


def contact_update(
    *, contact: Contact, actor: Actor, name=UNCHANGED, email=UNCHANGED, phone=UNCHANGED, external_id=UNCHANGED
) -> Contact:
    """An edit of a requester's data (the admin's contact page, PATCH /api/v1/contatos/{id}): every ticket
    it asked shows it as `solicitante`, so they all move in the change list. E-mails are stored as
    contact_upsert stores them; None clears e-mail, phone and external_id.

    An external_id another contact of the organization has is refused by the unique constraint itself (a
    check first would let two concurrent edits both pass it). An anonymised contact is not edited: the
    person's data must not come back to the tickets they asked (docs/decisions.md, "Contacts")."""
    values = {"name": name, "email": email, "phone": phone, "external_id": external_id}
    given = {field: value for field, value in values.items() if value is not UNCHANGED}
    if "email" in given:
        given["email"] = (given["email"] or "").strip()
    if "phone" in given:
        given["phone"] = given["phone"] or ""
    if "external_id" in given:
        given["external_id"] = given["external_id"] or None
    _contact_check(given)
    if "email" in given:
        # Checked as sent, stored lower-cased: lower() may turn a valid address into one the validator refuses
        # (İ becomes i and a combining dot), as the schema's pattern and the create's solicitante accept it,
        # and into a longer one, which the column's room for twice the limit holds (tickets.models).
        given["email"] = given["email"].lower()
    with transaction.atomic(savepoint=False):
        # Under its row lock: an anonymisation committed meanwhile is seen, never written over.
        contact = Contact.objects.select_for_update().get(pk=contact.pk)
        changed = [field for field, value in given.items() if getattr(contact, field) != value]
        if changed and contact.anonymized_at is not None:
            raise ContactAnonymized()
        for field in changed:
            setattr(contact, field, given[field])
        if changed:
            _contact_save(contact, changed, actor)
    return contact


def contact_delete(*, contact: Contact) -> None:
    """A contact without tickets (the ones with tickets are protected): nothing a partner sees changes."""
    with transaction.atomic(savepoint=False):
        audit_record(
            "contato.excluido",
            organization_id=contact.organization_id,
            resource_type="contato",
            resource_id=contact.pk,
            changes={"nome": change(contact.name, None)},
        )
        contact.delete()


@dataclass(frozen=True)
class ContactIdentity:
    """What identifies a person: what contact_anonymize replaces, and what listeners look for in their copies."""

    name: str
    email: str
    phone: str
    external_id: str | None

    @classmethod
    def of(cls, contact: Contact) -> "ContactIdentity":
        return cls(contact.name, contact.email, contact.phone, contact.external_id)

    def values(self) -> list[str]:
        """The non-empty values, as text: what must not survive in any copy."""
        return [value for value in (self.name, self.email, self.phone, self.external_id) if value]


@dataclass(frozen=True)
class TicketRef:
    """A ticket as partners identify it."""

    id: uuid.UUID
    number: int
    external_id: str | None


def contact_anonymize(*, contact: Contact, actor: Actor) -> Contact:
    """A data-subject request (LGPD art. 18, GDPR art. 17): the person's name, e-mail, phone and external id
    become neutral values, and the files they sent are deleted (after the commit); tickets, their numbers,
    timestamps and counts stay. Irreversible; a second call changes nothing (the contact is returned as is).

    Every ticket the contact asked shows the new `solicitante`, so they move in the change list (partners'
    copies take the neutral values too); listeners of `contact_anonymized` remove their own copies (events,
    deliveries, stored answers) in this transaction.
    """
    with transaction.atomic(savepoint=False):
        contact = Contact.objects.select_for_update().get(pk=contact.pk)
        if contact.anonymized_at is not None:
            return contact
        previous = ContactIdentity.of(contact)
        contact.name, contact.email, contact.phone, contact.external_id = Contact.ANONYMOUS_NAME, "", "", None
        contact.anonymized_at = timezone.now()
        contact.save(update_fields=["name", "email", "phone", "external_id", "anonymized_at", "updated_at"])
        tickets = Ticket.objects.filter(requester=contact)
        refs = [TicketRef(*row) for row in tickets.order_by("number").values_list("id", "number", "external_id")]
        # The tickets' rows first, then the files' (whose deletion takes the organization's attachment usage
        # row): every writer locks a ticket before that row, so an upload to one of these never deadlocks.
        tickets_touch(tickets=tickets)
        signals.contact_anonymized.send(sender=Contact, contact=contact, previous=previous, tickets=refs, actor=actor)
        # Last, so the organization's uploads wait on the usage row only for this delete, not for the
        # listeners' scans. The rows go now, their files once this commits (tickets.lifecycle).
        Attachment.objects.filter(ticket__requester=contact, sender=AttachmentSender.PARTNER).delete()
    return contact


def _contact_check(values: dict) -> None:
    errors: dict[str, list[str]] = {}
    if "name" in values and not (values["name"] or "").strip():
        errors["nome"] = ["Este campo não pode estar em branco."]
    elif len(values.get("name") or "") > 255:
        errors["nome"] = ["Certifique-se de que este campo não tenha mais de 255 caracteres."]
    if len(values.get("email") or "") > EMAIL_MAX_LENGTH:
        errors["email"] = [f"Certifique-se de que este campo não tenha mais de {EMAIL_MAX_LENGTH} caracteres."]
    elif values.get("email"):
        try:
            validate_email(values["email"])
        except DjangoValidationError:
            errors["email"] = ["Informe um endereço de e-mail válido."]
    if len(values.get("phone") or "") > 32:
        errors["telefone"] = ["Certifique-se de que este campo não tenha mais de 32 caracteres."]
    if len(values.get("external_id") or "") > 255:
        errors["external_id"] = ["Certifique-se de que este campo não tenha mais de 255 caracteres."]
    if errors:
        raise ValidationFailed(errors)


_COLOR_RE = re.compile(r"^#[0-9A-Fa-f]{6}$")
SHOWN_STATUS_FIELDS = ("name", "category", "color")  # what TicketPublico shows of its status


def status_check(*, organization_id, name: str, color: str, status: TicketStatus | None = None) -> None:
    """A status's rules, for forms that show a field error before anything is saved (the admin)."""
    errors: dict[str, list[str]] = {}
    if not _COLOR_RE.match(color or ""):
        errors["cor"] = ["Use uma cor no formato #RRGGBB."]
    duplicates = TicketStatus.objects.filter(organization_id=organization_id, name__iexact=(name or "").strip())
    if status is not None:
        duplicates = duplicates.exclude(pk=status.pk)
    if not (name or "").strip():
        errors["nome"] = ["Este campo não pode estar em branco."]
    elif duplicates.exists():
        errors["nome"] = ["Já existe um status com este nome."]
    if errors:
        raise ValidationFailed(errors)


def status_create(*, organization_id, name: str, category: str, color: str, position: int = 0) -> TicketStatus:
    """A new status of the organization (no ticket shows it yet)."""
    status_check(organization_id=organization_id, name=name, color=color)
    with transaction.atomic(savepoint=False):
        status = TicketStatus.objects.create(
            organization_id=organization_id,
            name=name.strip(),
            category=category,
            color=color.upper(),
            position=position,
        )
        _status_audit(
            "status.criado",
            status,
            {STATUS_AUDITED[field]: change(None, getattr(status, field)) for field in STATUS_AUDITED},
        )
    status_cache_forget(organization_id)
    return status


# A status's fields as the audit trail names them (in the API's language, as every other record).
STATUS_AUDITED = {"name": "nome", "category": "categoria", "color": "cor", "position": "posicao"}


def _status_audit(action: str, status: TicketStatus, changes: dict) -> None:
    audit_record(
        action, organization_id=status.organization_id, resource_type="status", resource_id=status.pk, changes=changes
    )


def status_update(*, status: TicketStatus, name: str, category: str, color: str, position: int) -> TicketStatus:
    """A renamed, recoloured or recategorised status moves every ticket that shows it in the change list."""
    status_check(organization_id=status.organization_id, name=name, color=color, status=status)
    values = {"name": name.strip(), "category": category, "color": color.upper(), "position": position}
    with transaction.atomic(savepoint=False):
        changed = [field for field, value in values.items() if getattr(status, field) != value]
        audited = {STATUS_AUDITED[field]: change(getattr(status, field), values[field]) for field in changed}
        for field in changed:
            setattr(status, field, values[field])
        if changed:
            status.save(update_fields=changed)
            _status_audit("status.atualizado", status, audited)
            status_cache_forget(status.organization_id)
        if set(changed) & set(SHOWN_STATUS_FIELDS):
            tickets_touch(tickets=Ticket.objects.filter(status=status))
    return status


def status_delete(*, status: TicketStatus) -> None:
    """Only a status no ticket has (the admin refuses the others before asking)."""
    organization_id = status.organization_id
    with transaction.atomic(savepoint=False):
        _status_audit("status.excluido", status, {STATUS_AUDITED["name"]: change(status.name, None)})
        status.delete()
    status_cache_forget(organization_id)


def tickets_of_agent_touch(*, agent: Agent) -> int:
    """An agent's name is the author of its public replies, and the `atendente` of the tickets it is assigned:
    those tickets move (not the ones with only its notes)."""
    replied = Reply.objects.filter(author_agent=agent, is_internal=False).values("ticket_id")
    return tickets_touch(tickets=Ticket.objects.filter(Q(pk__in=replied) | Q(assignee=agent)))


def tickets_touch(*, tickets: QuerySet[Ticket]) -> int:
    """A change the partner sees on these tickets that is not a save of them (an edited reply, a
    renamed status or agent, a requester's new e-mail): each moves its atualizado_em and its place
    in the change list. The one way, with Ticket.save, that a ticket's place moves."""
    now = timezone.now()
    if connection.vendor == "postgresql":  # the shared sequence gives every row a place of its own
        return tickets.update(updated_at=now, **change_fields(Ticket, None))
    # SQLite numbers within the organization inside each statement: one row per statement.
    touched = 0
    for pk, organization_id in tickets.values_list("pk", "organization_id"):
        touched += Ticket.objects.filter(pk=pk).update(updated_at=now, **change_fields(Ticket, organization_id))
    return touched


def _locked(tickets: QuerySet[Ticket]) -> Ticket | None:
    """The ticket under its row lock, read with its status, organization, requester and assignee
    in one statement.

    On PostgreSQL (READ COMMITTED) a row that another transaction changed while this one waited
    for the lock is checked again against the joined rows read before the wait: a ticket whose
    status or assignee changed no longer matches them and is left out, as if it did not exist.
    Then the row is locked alone, which nothing can change any more, and read again.
    """
    lockable = tickets.select_for_update(of=("self",)).select_related(
        "status", "organization", "requester", "assignee", "current_rating"
    )
    found = lockable.first()
    if found is None and tickets.select_for_update().values_list("pk").first() is not None:
        found = lockable.first()
    return found


def _locked_ticket(ticket: Ticket) -> Ticket:
    found = _locked(Ticket.objects.filter(pk=ticket.pk))
    if found is None:
        raise Ticket.DoesNotExist("Ticket matching query does not exist.")
    return found


def _locked_ticket_of(organization: Organization, ticket_id) -> Ticket | None:
    pk = parse_uuid(ticket_id)
    return _locked(Ticket.objects.filter(organization=organization, pk=pk)) if pk else None
