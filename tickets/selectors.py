"""Read queries for tickets: each list runs a fixed number of queries."""

import re
import uuid

from django.db.models import Prefetch, Q, QuerySet

from helpdesk.models import Organization
from tickets.exceptions import ReplyNotFound, StatusNotFound, TicketNotFound
from tickets.models import Reply, StatusCategory, Ticket, TicketStatus

_TICKET_NUMBER_RE = re.compile(r"[0-9]{1,9}")


def _as_uuid(value) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None


def public_replies_prefetch() -> Prefetch:
    return Prefetch(
        "replies",
        queryset=Reply.objects.filter(is_internal=False)
        .select_related("author_agent", "author_contact")
        .order_by("created_at", "id"),
        to_attr="public_replies",
    )


def ticket_public_queryset(*, organization: Organization) -> QuerySet[Ticket]:
    """Tickets with everything the partner payload shows; internal notes never loaded."""
    return (
        Ticket.objects.filter(organization=organization)
        .select_related("status", "requester")
        .prefetch_related(public_replies_prefetch())
    )


def ticket_list_public(
    *, organization: Organization, priority: str | None = None, number: int | None = None, search: str | None = None
) -> QuerySet[Ticket]:
    """Newest first; filters combine with AND; `search` as DESIGN.md, Tickets."""
    queryset = ticket_public_queryset(organization=organization)
    if priority:
        queryset = queryset.filter(priority=priority)
    if number is not None:
        queryset = queryset.filter(number=number)
    if search:
        matches = (
            Q(subject__icontains=search)
            | Q(description__icontains=search)
            | Q(requester__name__icontains=search)
            | Q(requester__email__icontains=search)
        )
        if _TICKET_NUMBER_RE.fullmatch(search):
            matches |= Q(number=int(search))
        queryset = queryset.filter(matches)
    return queryset.order_by("-created_at", "-number")


def ticket_get(*, organization: Organization, ticket_id, queryset: QuerySet[Ticket] | None = None) -> Ticket:
    """Another organization's ticket answers exactly like a missing one."""
    pk = _as_uuid(ticket_id)
    queryset = Ticket.objects.all() if queryset is None else queryset
    ticket = queryset.filter(organization=organization, pk=pk).first() if pk else None
    if ticket is None:
        raise TicketNotFound()
    return ticket


def ticket_get_public(*, organization: Organization, ticket_id) -> Ticket:
    return ticket_get(
        organization=organization, ticket_id=ticket_id, queryset=ticket_public_queryset(organization=organization)
    )


def reply_get_public(*, ticket: Ticket, reply_id) -> Reply:
    """Internal notes do not exist as far as the partner can tell."""
    pk = _as_uuid(reply_id)
    reply = (
        Reply.objects.select_related("author_agent", "author_contact")
        .filter(ticket=ticket, pk=pk, is_internal=False)
        .first()
        if pk
        else None
    )
    if reply is None:
        raise ReplyNotFound()
    return reply


def reply_for_output(reply: Reply) -> Reply:
    return Reply.objects.select_related("author_agent", "author_contact").get(pk=reply.pk)


def status_default_open(*, organization: Organization) -> TicketStatus:
    return (
        TicketStatus.objects.filter(organization=organization, category=StatusCategory.OPEN)
        .order_by("position", "name")
        .first()
    )


def ticket_panel_queryset(*, organization: Organization) -> QuerySet[Ticket]:
    """Tickets as agents see them: the whole thread, internal notes included."""
    return (
        Ticket.objects.filter(organization=organization)
        .select_related("status", "requester", "assignee")
        .prefetch_related(
            Prefetch(
                "replies",
                queryset=Reply.objects.select_related("author_agent", "author_contact").order_by("created_at", "id"),
                to_attr="thread",
            )
        )
    )


def ticket_list_panel(
    *,
    organization: Organization,
    priority: str | None = None,
    number: int | None = None,
    search: str | None = None,
    status_id=None,
    assignee_id=None,
) -> QuerySet[Ticket]:
    queryset = ticket_list_public(organization=organization, priority=priority, number=number, search=search)
    queryset = (
        queryset.select_related("assignee")
        .prefetch_related(None)
        .prefetch_related(
            Prefetch(
                "replies",
                queryset=Reply.objects.select_related("author_agent", "author_contact").order_by("created_at", "id"),
                to_attr="thread",
            )
        )
    )
    if status_id is not None:
        queryset = queryset.filter(status_id=status_id)
    if assignee_id is not None:
        queryset = queryset.filter(assignee_id=assignee_id)
    return queryset


def reply_get(*, ticket: Ticket, reply_id) -> Reply:
    """Any reply of the ticket, internal notes included (agents' view)."""
    pk = _as_uuid(reply_id)
    reply = (
        Reply.objects.select_related("author_agent", "author_contact").filter(ticket=ticket, pk=pk).first()
        if pk
        else None
    )
    if reply is None:
        raise ReplyNotFound()
    return reply


def status_list(*, organization: Organization) -> QuerySet[TicketStatus]:
    return TicketStatus.objects.filter(organization=organization).order_by("position", "name")


def status_get(*, organization: Organization, status_id) -> TicketStatus:
    pk = _as_uuid(status_id)
    status = TicketStatus.objects.filter(organization=organization, pk=pk).first() if pk else None
    if status is None:
        raise StatusNotFound()
    return status
