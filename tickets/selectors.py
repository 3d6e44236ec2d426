"""Read queries for tickets: each list runs a fixed number of queries."""

import re

from django.db.models import Prefetch, Q, QuerySet

from helpdesk.models import Organization
from helpdesk.selectors import object_by_id
from tickets.exceptions import ReplyNotFound, StatusNotFound, TicketNotFound
from tickets.models import Reply, StatusCategory, Ticket, TicketStatus

_TICKET_NUMBER_RE = re.compile(r"[0-9]{1,9}")


def _replies_prefetch(queryset: QuerySet[Reply], to_attr: str) -> Prefetch:
    return Prefetch(
        "replies",
        queryset=queryset.select_related("author_agent", "author_contact").order_by("created_at", "id"),
        to_attr=to_attr,
    )


def public_replies_prefetch() -> Prefetch:
    """Internal notes are never even loaded for the partner."""
    return _replies_prefetch(Reply.objects.filter(is_internal=False), "public_replies")


def thread_prefetch() -> Prefetch:
    """The whole thread, internal notes included, as agents see it."""
    return _replies_prefetch(Reply.objects.all(), "thread")


def ticket_public_queryset(*, organization: Organization) -> QuerySet[Ticket]:
    """Tickets with everything the partner payload shows."""
    return (
        Ticket.objects.filter(organization=organization)
        .select_related("status", "requester")
        .prefetch_related(public_replies_prefetch())
    )


def ticket_panel_queryset(*, organization: Organization) -> QuerySet[Ticket]:
    """Tickets as agents see them: the whole thread and the assignee."""
    return (
        Ticket.objects.filter(organization=organization)
        .select_related("status", "requester", "assignee")
        .prefetch_related(thread_prefetch())
    )


def _filtered(
    queryset: QuerySet[Ticket], *, priority=None, number=None, search=None, status_id=None, assignee_id=None
) -> QuerySet[Ticket]:
    """Newest first; filters combine with AND; `search` as DESIGN.md, Tickets."""
    filters = {"priority": priority, "number": number, "status_id": status_id, "assignee_id": assignee_id}
    queryset = queryset.filter(**{field: value for field, value in filters.items() if value not in (None, "")})
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


def ticket_list_public(
    *, organization: Organization, priority: str | None = None, number: int | None = None, search: str | None = None
) -> QuerySet[Ticket]:
    return _filtered(ticket_public_queryset(organization=organization), priority=priority, number=number, search=search)


def ticket_list_panel(
    *,
    organization: Organization,
    priority: str | None = None,
    number: int | None = None,
    search: str | None = None,
    status_id=None,
    assignee_id=None,
) -> QuerySet[Ticket]:
    return _filtered(
        ticket_panel_queryset(organization=organization),
        priority=priority,
        number=number,
        search=search,
        status_id=status_id,
        assignee_id=assignee_id,
    )


def ticket_get(*, organization: Organization, ticket_id, queryset: QuerySet[Ticket] | None = None) -> Ticket:
    """Another organization's ticket answers exactly like a missing one."""
    queryset = Ticket.objects.all() if queryset is None else queryset
    return object_by_id(queryset.filter(organization=organization), ticket_id, missing=TicketNotFound)


def ticket_get_public(*, organization: Organization, ticket_id) -> Ticket:
    return ticket_get(
        organization=organization, ticket_id=ticket_id, queryset=ticket_public_queryset(organization=organization)
    )


def ticket_get_panel(*, organization: Organization, ticket_id) -> Ticket:
    return ticket_get(
        organization=organization, ticket_id=ticket_id, queryset=ticket_panel_queryset(organization=organization)
    )


def _replies_of(ticket) -> QuerySet[Reply]:
    return Reply.objects.select_related("author_agent", "author_contact").filter(ticket=ticket)


def reply_get_public(*, ticket: Ticket, reply_id) -> Reply:
    """Internal notes do not exist as far as the partner can tell."""
    return object_by_id(_replies_of(ticket).filter(is_internal=False), reply_id, missing=ReplyNotFound)


def reply_get(*, ticket: Ticket, reply_id) -> Reply:
    """Any reply of the ticket, internal notes included (agents' view)."""
    return object_by_id(_replies_of(ticket), reply_id, missing=ReplyNotFound)


def reply_for_output(reply: Reply) -> Reply:
    return _replies_of(reply.ticket_id).get(pk=reply.pk)


def status_first_of_category(*, organization_id, category: str) -> TicketStatus | None:
    """The organization's first status of a category: where a new ticket starts, where "resolve" goes."""
    return (
        TicketStatus.objects.filter(organization_id=organization_id, category=category)
        .order_by("position", "name")
        .first()
    )


def status_default_open(*, organization: Organization) -> TicketStatus:
    return status_first_of_category(organization_id=organization.pk, category=StatusCategory.OPEN)


def status_list(*, organization: Organization) -> QuerySet[TicketStatus]:
    return TicketStatus.objects.filter(organization=organization).order_by("position", "name")


def status_get(*, organization: Organization, status_id) -> TicketStatus:
    return object_by_id(status_list(organization=organization), status_id, missing=StatusNotFound)
