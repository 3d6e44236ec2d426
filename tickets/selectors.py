"""Read queries for tickets: each list runs a fixed number of queries."""

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.postgres.expressions import ArraySubquery
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    CharField,
    Count,
    DateTimeField,
    F,
    Func,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.expressions import ExpressionWrapper

from api_framework.pagination import Page, paginate
from foundation.feeds import START, Position, feed_end, horizon_expression, page_after
from foundation.rows import row_type
from helpdesk.models import Organization
from helpdesk.selectors import object_by_id
from tickets.exceptions import ContactNotFound, ReplyNotFound, StatusNotFound, TicketNotFound
from tickets.models import (
    Contact,
    Reply,
    StatusCategory,
    Ticket,
    TicketCount,
    TicketNumberGap,
    TicketSequence,
    TicketStatus,
    TicketTombstone,
    phone_normalize,
)

logger = logging.getLogger(__name__)

_TICKET_NUMBER_RE = re.compile(r"[0-9]{1,9}")


def _filtered(
    organization: Organization,
    *,
    priority=None,
    number=None,
    search=None,
    status_id=None,
    assignee_id=None,
    external_id=None,
    requester_id=None,
) -> QuerySet[Ticket]:
    """Newest first; filters combine with AND; `search` as DESIGN.md, Tickets."""
    filters = {
        "priority": priority,
        "number": number,
        "status_id": status_id,
        "assignee_id": assignee_id,
        "external_id": external_id,
        "requester_id": requester_id,
    }
    tickets = Ticket.objects.filter(organization=organization)
    tickets = tickets.filter(**{field: value for field, value in filters.items() if value not in (None, "")})
    if search:
        tickets = tickets.filter(_search_condition(organization, search))
    return tickets.order_by("-created_at", "-number")


TRIGRAM = 3  # pg_trgm indexes answer patterns of at least this many characters


class _EqualsAny(Func):
    """`<column> = ANY(<array>)`: unlike `IN (<subquery>)`, an index can answer it inside an OR."""

    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra_context):
        column_sql, column_params = compiler.compile(self.source_expressions[0])
        array_sql, array_params = compiler.compile(self.source_expressions[1])
        return f"{column_sql} = ANY({array_sql})", (*column_params, *array_params)


def _search_condition(organization: Organization, search: str) -> Q:
    """What `search` finds: a case-insensitive substring of the subject, the description, or the
    requester's name or e-mail, or the ticket number itself.

    Every part is a condition on the ticket row that an index answers on PostgreSQL: the
    trigram indexes of tickets.migrations.0003 for the text, and the requester as
    `requester_id = ANY(ARRAY(<matching contacts>))`, so the planner can either combine
    the indexes (few matches) or walk the newest-first index and stop at the page (many).
    """
    contacts = Contact.objects.filter(organization=organization)
    contacts = contacts.filter(_contact_search_condition(search)).order_by().values("pk")
    if connection.vendor == "postgresql" and len(search) >= TRIGRAM:
        by_requester = Q(_EqualsAny(F("requester_id"), ArraySubquery(contacts)))
    else:  # trigrams cannot help a shorter term: a hashed IN beats a long array compared row by row
        by_requester = Q(requester__in=contacts)
    condition = Q(subject__icontains=search) | Q(description__icontains=search) | by_requester
    if _TICKET_NUMBER_RE.fullmatch(search):
        condition |= Q(number=int(search))
    return condition


def _contact_search_condition(search: str) -> Q:
    """A case-insensitive substring of the contact's name or e-mail (trigram indexes of
    tickets.migrations.0003 on PostgreSQL)."""
    return Q(name__icontains=search) | Q(email__icontains=search)


def ticket_list_public(
    *, organization: Organization, priority: str | None = None, number: int | None = None, search: str | None = None
) -> QuerySet[Ticket]:
    """The organization's tickets, filtered, newest first."""
    return _filtered(organization, priority=priority, number=number, search=search)


# Filters the organization's counters answer (tickets.models.TicketCount); any other one is counted.
COUNTED_FILTERS = frozenset({"priority", "status_id"})
# From this many rows into the list, a page starts at the number the counters point to, not at an OFFSET.
DEEP_PAGE_OFFSET = 1000


def ticket_page(*, organization: Organization, filters: dict, page: int, per_page: int, columns: tuple) -> Page:
    """A page of the list (ticket_list_public's filters, and the panel's status_id and assignee_id) as named rows
    of `columns`, at the same cost on page 2 and on page 20,000, with an exact `total` that does not read the
    tickets (docs/performance.md)."""
    given, tickets, total = _filtered_and_total(organization, filters)
    offset = (page - 1) * per_page
    if offset >= total:
        return Page(items=[], total=total, per_page=per_page, number=page)
    start = _nth_newest_number(organization, offset, total) if offset >= DEEP_PAGE_OFFSET and not given else None
    if start is not None:  # numbered in order: the page is the next `per_page` numbers from `start` down
        rows = Ticket.objects.filter(organization=organization, number__lte=start).order_by("-number")
        items = list(rows.values_list(*columns, named=True)[:per_page])
    else:
        tickets = _few_matches_first(tickets, given, total)
        items = list(tickets.values_list(*columns, named=True)[offset : offset + per_page])
    return Page(items=items, total=total, per_page=per_page, number=page)


# A `busca` with at most this many matches is read from its indexes (every match, then sorted), not by
# walking the newest-first index until the page is full: for a rare term that walk reads the whole list.
FEW_MATCHES = 5000


def _few_matches_first(tickets: QuerySet[Ticket], filters: dict, total: int) -> QuerySet[Ticket]:
    """PostgreSQL's planner guesses a trigram match's frequency from the table, and for a rare term guesses
    high: it walks the list's index and filters (6 s at 1,000,000 tickets). The count has just told the
    truth; with few matches, an order the index cannot give makes it collect them from the trigram indexes
    (30 ms). Same rows, same order."""
    if connection.vendor != "postgresql" or not filters.get("search") or total > FEW_MATCHES:
        return tickets
    not_by_index = ExpressionWrapper(F("created_at") + Value(timedelta(0)), output_field=DateTimeField())
    return tickets.order_by(not_by_index.desc(), F("number").desc())


def _filtered_and_total(organization: Organization, filters: dict) -> tuple[dict, QuerySet[Ticket], int]:
    """The filters given, the list they select, and its exact total: from the counters when they answer
    the filters, else counted from the filters' indexes."""
    given = {name: value for name, value in filters.items() if value not in (None, "")}
    tickets = _filtered(organization, **given)
    total = _counted_total(organization, given) if set(given) <= COUNTED_FILTERS else tickets.count()
    return given, tickets, total


def _counted_total(organization: Organization, filters: dict) -> int:
    counts = TicketCount.objects.filter(organization=organization, **filters)
    return counts.aggregate(total=Sum("tickets"))["total"] or 0


def _nth_newest_number(organization: Organization, offset: int, total: int) -> int | None:
    """The number of the list's ticket at `offset` (newest first), from the sequence and the numbers
    deleted tickets left; None when the numbers do not follow creation, or do not add up to `total`
    (the page then reads by OFFSET)."""
    gap_count = TicketNumberGap.objects.filter(organization=OuterRef("organization")).values("organization")
    gap_count = gap_count.annotate(n=Count("pk")).values("n")
    sequence = TicketSequence.objects.filter(organization=organization, numbered_in_order=True)
    found = sequence.annotate(gaps=Subquery(gap_count)).values_list("last_number", "gaps").first()
    if found is None:
        return None
    last_number, gaps = found[0], found[1] or 0
    if last_number - gaps != total:
        return None
    # Without gaps above it, the ticket at `offset` has this number; each gap at or above it moves it one down.
    number = last_number - offset
    lowest = number - gaps
    above = TicketNumberGap.objects.filter(organization=organization, number__gte=lowest, number__lte=last_number)
    for gap in above.order_by("-number").values_list("number", flat=True):
        if gap < number:
            break
        number -= 1
    return number


@dataclass(frozen=True)
class TicketsAfter:
    """A page of the list in cursor mode: its rows, and the last one's place in the order (None at the end)."""

    items: list
    total: int
    last: tuple | None


class _RowBefore(Func):
    """`(a, b) < (c, d)`: the list's order as one comparison an index answers."""

    arity = 4
    output_field = BooleanField()

    def as_sql(self, compiler, connection, **extra_context):
        compiled = [compiler.compile(expression) for expression in self.source_expressions]
        sql = [part for part, _ in compiled]
        params = [param for _, part_params in compiled for param in part_params]
        return f"({sql[0]}, {sql[1]}) < ({sql[2]}, {sql[3]})", params


def ticket_page_after(
    *, organization: Organization, filters: dict, after: tuple | None, per_page: int, columns: tuple
) -> TicketsAfter:
    """The `per_page` tickets after `after` ((created_at, number) of the last one read), newest first, as
    named rows of `columns` (which name created_at and number: the next page starts from them): a keyset
    read that costs the same anywhere in the list, and never skips nor repeats a ticket that stays,
    whatever is created meanwhile."""
    given, tickets, total = _filtered_and_total(organization, filters)
    tickets = _few_matches_first(tickets, given, total)
    if after is not None:
        created_at, number = after
        tickets = tickets.filter(
            _RowBefore(F("created_at"), F("number"), Value(created_at, output_field=DateTimeField()), Value(number))
        )
    rows = list(tickets.values_list(*columns, named=True)[: per_page + 1])
    last = (rows[per_page - 1].created_at, rows[per_page - 1].number) if len(rows) > per_page else None
    return TicketsAfter(items=rows[:per_page], total=total, last=last)


@dataclass(frozen=True)
class ChangesPage:
    """A page of the change list: changed tickets (named rows of the columns asked for) and deleted ones
    (tombstones), each in the list's order, and where the next page starts."""

    tickets: list
    deleted: list[TicketTombstone]
    next: Position
    has_more: bool


# A tombstone read beside tickets (one UNION ALL): its columns at the tickets' places, nulls elsewhere,
# then its excluido_em, which the ticket rows leave null.
_TOMBSTONE_AS_TICKET = {"id": F("id"), "number": F("number"), "external_id": F("external_id")}


def ticket_changes(
    *, organization: Organization, start: Position | datetime | None, limit: int, columns: tuple
) -> ChangesPage:
    """The organization's tickets changed, and those deleted, after `start` (a position from a cursor,
    a moment, or None for all of them), oldest change first, the tickets as named rows of `columns`
    (which name id, number and external_id: a tombstone's row fills them); a fixed number of statements
    whatever the limit (one more to place a moment)."""
    if isinstance(start, datetime):
        start = _changes_start(organization, start)
    tombstone_columns = (
        *(_TOMBSTONE_AS_TICKET.get(name, Value(None, output_field=CharField())) for name in columns),
        "deleted_at",
    )
    page = page_after(
        Ticket.objects.filter(organization=organization),
        start or START,
        limit=limit,
        columns=(*columns, Value(None, output_field=DateTimeField())),
        also=[(TicketTombstone.objects.filter(organization=organization), tombstone_columns)],
    )
    row = row_type(columns)
    tickets, deleted = [], []
    for *values, deleted_at, branch, _tx, _seq in page.rows:
        read = row._make(values)
        if branch == 0:
            tickets.append(read)
        else:
            deleted.append(
                TicketTombstone(id=read.id, number=read.number, external_id=read.external_id, deleted_at=deleted_at)
            )
    return ChangesPage(tickets=tickets, deleted=deleted, next=page.next, has_more=page.has_more)


def _changes_start(organization: Organization, moment: datetime) -> Position:
    """Where the changes at or after `moment` start: just before the first ticket whose atualizado_em
    is at or after it (or the first deleted at or after it), and never after a transaction still
    running (its rows may land there). A few changed shortly before `moment` may come too; none
    changed after it is left out. One statement."""
    tickets = Ticket.objects.filter(organization=organization)
    tombstones = TicketTombstone.objects.filter(organization=organization)
    firsts = [
        tickets.filter(updated_at__gte=moment).order_by("change_tx", "change_seq"),
        tombstones.filter(deleted_at__gte=moment).order_by("change_tx", "change_seq"),
    ]
    lasts = [tickets.order_by("-change_tx", "-change_seq"), tombstones.order_by("-change_tx", "-change_seq")]
    *values, horizon = (
        Organization.objects.filter(pk=organization.pk)
        .values_list(
            *(
                Subquery(rows.values(column)[:1])
                for rows in (*firsts, *lasts)
                for column in ("change_tx", "change_seq")
            ),
            horizon_expression(),
        )
        .get()
    )
    positions = [
        Position(tx, seq) if tx is not None else None for tx, seq in zip(values[::2], values[1::2], strict=True)
    ]
    first = min((position for position in positions[:2] if position), default=None)
    if first is not None:
        return min(first.just_before, Position(horizon, -1))
    last = max((position for position in positions[2:] if position), default=None)
    return feed_end(last=last, horizon=horizon)


def ticket_get(*, organization: Organization, ticket_id, queryset: QuerySet[Ticket] | None = None) -> Ticket:
    """Another organization's ticket answers exactly like a missing one."""
    queryset = Ticket.objects.all() if queryset is None else queryset
    return object_by_id(queryset.filter(organization=organization), ticket_id, missing=TicketNotFound)


def contact_get(*, organization: Organization, contact_id) -> Contact:
    """Another organization's contact answers exactly like a missing one."""
    return object_by_id(Contact.objects.filter(organization=organization), contact_id, missing=ContactNotFound)


def contact_row_get(*, organization: Organization, contact_id, columns: tuple) -> tuple:
    """The contact as a named row of `columns`; another organization's answers exactly like a missing one."""
    rows = Contact.objects.values_list(*columns, named=True)
    return object_by_id(rows.filter(organization=organization), contact_id, missing=ContactNotFound)


def contact_page(
    *,
    organization: Organization,
    page: int,
    per_page: int,
    columns: tuple,
    external_id: str | None = None,
    email: str | None = None,
    phone: str | None = None,
    search: str | None = None,
) -> Page:
    """A page of the organization's contacts, newest first, as named rows of `columns`: two statements (the
    count, the page) whatever the filters, which combine with AND, each answered by an index that starts with
    the organization (docs/performance.md). `email` is compared as stored (lower-cased, contact_upsert);
    `phone` without the separators a phone may be written with (Contact.phone_normalized)."""
    contacts = Contact.objects.filter(organization=organization)
    if external_id:
        contacts = contacts.filter(external_id=external_id)
    if email:
        contacts = contacts.filter(email=email.strip().lower())
    if phone:
        contacts = contacts.filter(phone_normalized=phone_normalize(phone))
    if search:
        contacts = contacts.filter(_contact_search_condition(search))
    return paginate(contacts.order_by("-created_at", "-id"), page=page, per_page=per_page, columns=columns)


def ticket_row_get(*, organization: Organization, ticket_id, columns: tuple) -> tuple:
    """The ticket as a named row of `columns`; another organization's answers exactly like a missing one."""
    rows = Ticket.objects.values_list(*columns, named=True)
    return object_by_id(rows.filter(organization=organization), ticket_id, missing=TicketNotFound)


def _replies_of(ticket) -> QuerySet[Reply]:
    return Reply.objects.select_related("author_agent", "author_contact").filter(ticket=ticket)


def reply_get_public(*, ticket: Ticket, reply_id) -> Reply:
    """Internal notes do not exist as far as the partner can tell."""
    return object_by_id(_replies_of(ticket).filter(is_internal=False), reply_id, missing=ReplyNotFound)


def reply_get(*, ticket: Ticket, reply_id) -> Reply:
    """Any reply of the ticket, internal notes included (agents' view)."""
    return object_by_id(_replies_of(ticket), reply_id, missing=ReplyNotFound)


def reply_rows_by_ticket(ticket_ids: list, *, columns: tuple, include_internal: bool = False) -> dict:
    """The replies of these tickets as named rows of `columns` (which name ticket_id), by ticket, oldest
    first, in one query."""
    replies = Reply.objects.filter(ticket_id__in=ticket_ids)
    if not include_internal:
        replies = replies.filter(is_internal=False)
    by_ticket: dict = {ticket_id: [] for ticket_id in ticket_ids}
    for row in replies.order_by("created_at", "id").values_list(*columns, named=True):
        by_ticket[row.ticket_id].append(row)
    return by_ticket


def status_first_of_category(*, organization_id, category: str) -> TicketStatus | None:
    """The organization's first status of a category: where a new ticket starts, where "resolve" goes."""
    return (
        TicketStatus.objects.filter(organization_id=organization_id, category=category)
        .order_by("position", "name")
        .first()
    )


_STATUS_FIELDS = ("id", "organization_id", "name", "category", "color", "position")
STATUS_CACHE_SECONDS = 300


def _default_status_key(organization_id) -> str:
    return f"tickets:default-open-status:{organization_id}"


def status_default_open(*, organization: Organization) -> TicketStatus:
    """Where a new ticket starts, asked for on every create: cached per organization, and
    forgotten as soon as any status of the organization changes (status_cache_forget)."""
    key = _default_status_key(organization.pk)
    try:
        cached = cache.get(key)
    except Exception:  # the cache is an accelerator; the database answers when it is down
        logger.warning("cache unavailable for %s", key, exc_info=True)
        cached = None
    if cached is not None:
        return TicketStatus.from_db("default", _STATUS_FIELDS, cached)
    status = status_first_of_category(organization_id=organization.pk, category=StatusCategory.OPEN)
    if status is not None:
        try:
            cache.set(key, tuple(getattr(status, name) for name in _STATUS_FIELDS), STATUS_CACHE_SECONDS)
        except Exception:
            logger.warning("cache unavailable for %s", key, exc_info=True)
    return status


def status_cache_forget(organization_id) -> None:
    """Now, and again once the change commits: a read racing with the change cannot keep the old value."""

    def forget() -> None:
        try:
            cache.delete(_default_status_key(organization_id))
        except Exception:
            logger.warning("could not drop the cached default status of %s", organization_id, exc_info=True)

    forget()
    transaction.on_commit(forget)


def status_list(*, organization: Organization) -> QuerySet[TicketStatus]:
    return TicketStatus.objects.filter(organization=organization).order_by("position", "name")


def status_get(*, organization_id, status_id) -> TicketStatus:
    """A status of the organization; another organization's is StatusNotFound, as a missing one."""
    return object_by_id(TicketStatus.objects.filter(organization_id=organization_id), status_id, missing=StatusNotFound)
