"""Read queries for tickets: each list runs a fixed number of queries."""

import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median

from django.contrib.postgres.expressions import ArraySubquery
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import (
    Avg,
    BigIntegerField,
    BooleanField,
    Case,
    CharField,
    Count,
    DateTimeField,
    F,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.expressions import ExpressionWrapper
from django.db.models.functions import Cast, Coalesce

from api_framework.pagination import Page, paginate
from foundation.db import db_value, model_sql
from foundation.feeds import FEED_ORDER, START, Position, feed_end, horizon_expression, page_after
from foundation.metrics.instruments import search_totals_read
from foundation.rows import row_type
from helpdesk.models import Agent, AuditRecord, Organization
from helpdesk.selectors import object_by_id
from tickets.exceptions import ContactNotFound, ReplyNotFound, StatusNotFound, TicketNotFound
from tickets.fields.selectors import field_filter_condition, field_filters_count
from tickets.models import (
    Contact,
    Reply,
    StatusCategory,
    Ticket,
    TicketCount,
    TicketNumberGap,
    TicketRating,
    TicketSequence,
    TicketStatus,
    TicketTombstone,
    phone_normalize,
)
from tickets.service_levels import sla_condition
from tickets.tags import tags_condition

logger = logging.getLogger(__name__)

_TICKET_NUMBER_RE = re.compile(r"[0-9]{1,9}")


# The list's orders, by the partner's `ordenacao` (tickets.api.serializers): each ends with `number`, unique in
# the organization, so every order is total, a keyset can continue it, and an index answers it
# (docs/performance.md, "Lookups, filters and orders").
ORDERS = {
    "-created_at": ("-created_at", "-number"),
    "created_at": ("created_at", "number"),
    "-updated_at": ("-updated_at", "-number"),
    "updated_at": ("updated_at", "number"),
    "-number": ("-number",),
    "number": ("number",),
}
DEFAULT_ORDER = "-created_at"


def _filtered(
    organization: Organization,
    *,
    order: str = DEFAULT_ORDER,
    priority=None,
    number=None,
    search=None,
    status_id=None,
    status_ids=None,
    status_categories=None,
    assignee_id=None,
    external_id=None,
    requester_id=None,
    requester_external_id=None,
    requester_email=None,
    updated_since=None,
    created_since=None,
    created_until=None,
    custom_field_filters=(),
    tags=None,
    sla_state=None,
) -> QuerySet[Ticket]:
    """The organization's tickets in `order` (newest first by default); filters combine with AND; `search` as
    DESIGN.md, Tickets. Every filter is a condition an index starting with the organization answers."""
    contacts = Contact.objects.filter(organization=organization).order_by()
    conditions = {
        "priority": priority,
        "number": number,
        "status_id": status_id,
        "status_id__in": status_ids,  # the statuses of `status_categories`, as the counters found them
        "assignee_id": assignee_id,
        "external_id": external_id,
        "requester_id": requester_id,
        "updated_at__gte": updated_since,
        "created_at__gte": created_since,
        "created_at__lte": created_until,
    }
    tickets = Ticket.objects.filter(organization=organization)
    tickets = tickets.filter(**{lookup: value for lookup, value in conditions.items() if _is_given(value)})
    if _is_given(status_categories):
        statuses = TicketStatus.objects.filter(organization=organization, category__in=status_categories)
        tickets = tickets.filter(status_id__in=statuses.order_by().values("pk"))
    if _is_given(requester_external_id):
        # At most one contact (unique in the organization): its tickets in the list's order, from its index.
        tickets = tickets.filter(
            requester_id=Subquery(contacts.filter(external_id=requester_external_id).values("pk")[:1])
        )
    if _is_given(requester_email):
        # E-mails are stored trimmed and lower-cased (RequesterData.normalized): an exact match on that form is
        # the case-insensitive one, on the (organization, email) index.
        email = requester_email.strip().lower()
        tickets = tickets.filter(requester_id__in=contacts.filter(email=email).values("pk"))
    if _is_given(search):
        tickets = tickets.filter(_search_condition(organization, search))
    for field_filter in custom_field_filters or ():
        tickets = tickets.filter(field_filter_condition(field_filter))
    if _is_given(tags):
        tickets = tickets.filter(tags_condition(tags))  # all of them; the GIN index on PostgreSQL
    if _is_given(sla_state):
        tickets = tickets.filter(sla_condition(sla_state))  # the partial indexes of the SLA columns
    return tickets.order_by(*ORDERS[order])


def _is_given(value) -> bool:
    """Absent, blank and empty-list filters filter nothing."""
    return value not in (None, "") and not (isinstance(value, tuple | list | set | frozenset) and not value)


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


# Filters the organization's counters answer (tickets.models.TicketCount), and how; any other one is counted.
_COUNTER_LOOKUPS = {"priority": "priority", "status_id": "status_id", "status_categories": "status__category__in"}
COUNTED_FILTERS = frozenset(_COUNTER_LOOKUPS)
# From this many rows into the list, a page starts at the number the counters point to, not at an OFFSET.
DEEP_PAGE_OFFSET = 1000


def ticket_page(
    *, organization: Organization, filters: dict, page: int, per_page: int, columns: tuple, order: str = DEFAULT_ORDER
) -> Page:
    """A page of the list (the filters of `_filtered`: the partner's, the panel's status_id and assignee_id, a
    contact's requester_id) in `order`, as named rows of `columns`, with an exact `total` that does not read the
    tickets when the counters answer the filters; newest first, page 20,000 costs what page 2 costs
    (docs/performance.md)."""
    given, tickets, total = _filtered_and_total(organization, filters, order)
    offset = (page - 1) * per_page
    if offset >= total:
        return Page(items=[], total=total, per_page=per_page, number=page)
    deep = offset >= DEEP_PAGE_OFFSET and not given and order == DEFAULT_ORDER
    start = _nth_newest_number(organization, offset, total) if deep else None
    if start is not None:  # numbered in order: the page is the next `per_page` numbers from `start` down
        rows = Ticket.objects.filter(organization=organization, number__lte=start).order_by("-number")
        items = list(rows.values_list(*columns, named=True)[:per_page])
    else:
        tickets = _few_matches_first(tickets, given, total, order)
        items = list(tickets.values_list(*columns, named=True)[offset : offset + per_page])
    return Page(items=items, total=total, per_page=per_page, number=page)


# A `busca` with at most this many matches is read from its indexes (every match, then sorted), not by
# walking the order's index until the page is full: for a rare term that walk reads the whole list.
FEW_MATCHES = 5000
FEW_FIELD_MATCHES = 2000


def _few_matches_first(tickets: QuerySet[Ticket], filters: dict, total: int, order: str) -> QuerySet[Ticket]:
    """PostgreSQL's planner guesses a trigram match's frequency from the table, and for a rare term guesses
    high: it walks the list's index and filters (6 s at 1,000,000 tickets). The count has just told the truth;
    with few matches, an order the index cannot give makes it collect them from the trigram indexes (30 ms).
    Same rows, same order."""
    # Custom field filters (issue 22) too, with fewer matches: their rows are an exact index range, so walking
    # the list's index finds a page of a 5% value at once (8 ms at 100,000 tickets; collecting 5,000: 140 ms),
    # while a 1% value is collected faster (24 ms) than walked (113 ms). docs/performance.md has the plans.
    few = FEW_MATCHES if filters.get("search") else FEW_FIELD_MATCHES if filters.get("custom_field_filters") else -1
    if connection.vendor != "postgresql" or total > few:
        return tickets
    first, *rest = ORDERS[order]
    column = first.lstrip("-")
    if column == "number":
        not_by_index = ExpressionWrapper(F(column) + Value(0), output_field=IntegerField())
    else:
        not_by_index = ExpressionWrapper(F(column) + Value(timedelta(0)), output_field=DateTimeField())
    ordered = [not_by_index.desc() if first.startswith("-") else not_by_index.asc()]
    ordered += [F(name.lstrip("-")).desc() if name.startswith("-") else F(name).asc() for name in rest]
    return tickets.order_by(*ordered)


def _filtered_and_total(organization: Organization, filters: dict, order: str) -> tuple[dict, QuerySet[Ticket], int]:
    """The filters given, the list they select in `order`, and its exact total: from the counters when they
    answer the filters, else counted from the filters' indexes."""
    given = {name: value for name, value in filters.items() if _is_given(value)}
    if set(given) <= COUNTED_FILTERS:
        total, given = _counted(organization, given)
        return given, _filtered(organization, order=order, **given), total
    if "status_categories" in given and connection.vendor == "postgresql":
        total, given = _count_naming_statuses(organization, given)
        return given, _filtered(organization, order=order, **given), total
    if set(given) == {"custom_field_filters"}:
        # Custom fields alone: counted on their value rows' indexes, without reading a ticket (its field
        # belongs to the organization, and so do the tickets of its rows).
        total = field_filters_count(given["custom_field_filters"])
        if total is not None:
            return given, _filtered(organization, order=order, **given), total
    tickets = _filtered(organization, order=order, **given)
    if "search" in given and not set(given) & _NOT_KEPT_FILTERS:
        return given, tickets, _search_total(organization, given, tickets)
    return given, tickets, tickets.count()


# How long a search's total is kept (it is only ever served while the organization's tickets stand still).
SEARCH_TOTAL_CACHE_SECONDS = 600
# A search beside these is always counted: the clock moves `sla`'s answer; a hidden custom field's value is
# written without moving the ticket (partners do not see it), and so is an assignee removed with its user.
_NOT_KEPT_FILTERS = frozenset({"sla_state", "custom_field_filters", "assignee_id"})
# Part of the key: a release that changes what a search finds never reads the totals of the one before.
_SEARCH_TOTAL_VERSION = 1


def _search_total_key(organization: Organization, filters: dict) -> str:
    described = json.dumps(sorted((name, repr(value)) for name, value in filters.items()))
    digest = hashlib.sha256(described.encode()).hexdigest()
    return f"tickets:search-total:v{_SEARCH_TOTAL_VERSION}:{organization.pk}:{digest}"


def _search_total(organization: Organization, filters: dict, tickets: QuerySet[Ticket]) -> int:
    """A search's exact total, counted once for as long as the organization's tickets stand still.

    The count of a broad search re-reads every match (trigram indexes are lossy): 100,000 rows at 1,000,000
    tickets. Every change a search or its filters can see moves a ticket in the change list, or leaves a
    tombstone there (foundation.feeds), so the last position of both is a generation: a total kept with it
    is exact while it is the same. One statement either way: it reads the generation, and counts only when
    the generation differs from the kept one (the count's subquery is then never run). A total is kept only
    when no transaction still running can later commit a change placed before that generation (the feed's
    horizon is past it), outside any transaction. Cold, a search costs what it did; docs/performance.md.

    On PostgreSQL one request at a time counts a given search: the statement counts only under a lock of the
    search's own (pg_try_advisory_xact_lock, in the CASE, so taken only when a count is due and released
    with the statement), and the others wait for the total it keeps instead of counting the same matches at
    once (a cold broad search asked by 16 clients at 10,000,000 tickets made 16 counts of 1,000,000 rows).
    """
    key = _search_total_key(organization, filters)
    lock = _search_total_lock(key) if connection.vendor == "postgresql" and not connection.in_atomic_block else None
    waiting_since = time.monotonic()
    while True:
        kept = _search_total_kept(key)
        current, horizon, total = _search_total_read(organization, tickets, kept, lock)
        if total != _COUNTING_ELSEWHERE:
            break
        if time.monotonic() - waiting_since > SEARCH_TOTAL_WAIT_SECONDS:
            lock = None  # the one counting is stuck: count here
        else:
            time.sleep(SEARCH_TOTAL_POLL_SECONDS)
    if total is None:  # the generation is the kept one
        search_totals_read(kept=True)
        return kept[-1]
    search_totals_read(kept=False)
    # Inside a transaction the count may see its own writes, which a rollback would take back.
    if horizon > max(current[0], current[2]) and not connection.in_atomic_block:
        try:
            cache.set(key, (*current, total), SEARCH_TOTAL_CACHE_SECONDS)
        except Exception:
            logger.warning("cache unavailable for %s", key, exc_info=True)
    return total


# What the statement answers when another request holds the search's lock (counts it now); the others wait
# for its kept total, looking every SEARCH_TOTAL_POLL_SECONDS, and count themselves after
# SEARCH_TOTAL_WAIT_SECONDS (past the web's statement timeout, 5 s: the count that held it has failed).
_COUNTING_ELSEWHERE = -1
SEARCH_TOTAL_POLL_SECONDS = 0.05
SEARCH_TOTAL_WAIT_SECONDS = 6.0


def _search_total_kept(key: str) -> tuple | None:
    try:
        return cache.get(key)
    except Exception:  # the cache is an accelerator; the database answers when it is down
        logger.warning("cache unavailable for %s", key, exc_info=True)
        return None


def _search_total_lock(key: str) -> int:
    """The advisory lock of a search's count: 64 bits of its cache key (no other advisory lock is taken)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


class _TryLock(Func):
    """pg_try_advisory_xact_lock(key): true for one transaction at a time (here one statement)."""

    function = "pg_try_advisory_xact_lock"
    output_field = BooleanField()


def _search_total_read(
    organization: Organization, tickets: QuerySet[Ticket], kept, lock: int | None
) -> tuple[list[int], int, int | None]:
    """The generation, the feed's horizon, and the count: None when the generation is the kept one,
    _COUNTING_ELSEWHERE when `lock` is held by another statement."""
    lasts = (
        Ticket.objects.filter(organization=organization).order_by("-change_tx", "-change_seq"),
        TicketTombstone.objects.filter(organization=organization).order_by("-change_tx", "-change_seq"),
    )
    generation = {
        f"g{n}": Coalesce(Subquery(rows.values(column)[:1]), -1)
        for n, (rows, column) in enumerate((rows, column) for rows in lasts for column in FEED_ORDER)
    }
    count = Coalesce(Subquery(tickets.order_by().values("organization").annotate(n=Count("pk")).values("n")), 0)
    cases = []
    if isinstance(kept, tuple) and len(kept) == len(generation) + 1:
        same = Q(**dict(zip(generation, kept[:-1], strict=True)))
        cases.append(When(same, then=Value(None)))
    if lock is not None:  # evaluated in order, lazily: the lock is tried only when a count is due
        cases.append(When(_TryLock(Cast(Value(lock), BigIntegerField())), then=count))
        count = Case(*cases, default=Value(_COUNTING_ELSEWHERE), output_field=IntegerField())
    elif cases:
        count = Case(*cases, default=count, output_field=IntegerField())
    read = Organization.objects.filter(pk=organization.pk).annotate(**generation)
    *current, horizon, total = read.values_list(*generation, horizon_expression(), count).get()
    return current, horizon, total


def _counted(organization: Organization, filters: dict) -> tuple[int, dict]:
    """The total the counters give, and the filters to read the page with: status categories become the
    statuses the counters have tickets of (one statement), so the planner weighs each status by its own
    frequency instead of guessing a category's share from the statuses table."""
    counts = TicketCount.objects.filter(organization=organization)
    counts = counts.filter(**{_COUNTER_LOOKUPS[name]: value for name, value in filters.items()})
    if "status_categories" not in filters:
        return counts.aggregate(total=Sum("tickets"))["total"] or 0, filters
    counts = counts.filter(status__organization=organization)  # the statuses' (organization, category) index
    rows = list(counts.values_list("status_id", "tickets"))
    statuses = tuple(sorted({status_id for status_id, _tickets in rows}, key=str))
    if not statuses:  # none of them has a ticket: the categories themselves select nothing
        return 0, filters
    rest = {name: value for name, value in filters.items() if name != "status_categories"}
    return sum(tickets for _status_id, tickets in rows), {**rest, "status_ids": statuses}


def _count_naming_statuses(organization: Organization, filters: dict) -> tuple[int, dict]:
    """The count of filters the counters do not answer, and in the same statement the organization's statuses
    of the categories asked for: the page then names them. A category as a subquery of statuses hides which
    statuses they are, so the planner can neither weigh them nor read (organization, status, criado_em) in
    order: `status=aberto&criado_desde=...` collected and sorted 80,000 rows of 100,000 (1.1 s)."""
    statuses = TicketStatus.objects.filter(organization=organization, category__in=filters["status_categories"])
    tickets = _filtered(organization, **filters).order_by().values("organization")
    count = tickets.annotate(n=Count("pk")).values("n")
    total, ids = (
        Organization.objects.filter(pk=organization.pk)
        .values_list(Coalesce(Subquery(count), 0), ArraySubquery(statuses.order_by("pk").values("pk")))
        .get()
    )
    if not ids:  # the organization has no status of these categories: they select nothing
        return total, filters
    rest = {name: value for name, value in filters.items() if name != "status_categories"}
    return total, {**rest, "status_ids": tuple(ids)}


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


class _RowAfter(Func):
    """`(a, b) < (c, d)` (or `>`): a place in the list's order as one comparison an index answers."""

    output_field = BooleanField()

    def __init__(self, columns: list, values: list, *, descending: bool):
        super().__init__(*columns, *values)
        self.operator = "<" if descending else ">"

    def as_sql(self, compiler, connection, **extra_context):
        compiled = [compiler.compile(expression) for expression in self.source_expressions]
        half = len(compiled) // 2
        columns, values = [part for part, _ in compiled[:half]], [part for part, _ in compiled[half:]]
        params = [param for _, part_params in compiled for param in part_params]
        return f"({', '.join(columns)}) {self.operator} ({', '.join(values)})", params


def order_place(row, order: str) -> tuple:
    """Where `row` (a named row that has the order's columns) stands in `order`: what a cursor carries."""
    return tuple(getattr(row, name.lstrip("-")) for name in ORDERS[order])


def ticket_page_after(
    *,
    organization: Organization,
    filters: dict,
    after: tuple | None,
    per_page: int,
    columns: tuple,
    order: str = DEFAULT_ORDER,
) -> TicketsAfter:
    """The `per_page` tickets after `after` (order_place of the last one read) in `order`, as named rows of
    `columns` (which name the order's columns: the next page starts from them): a keyset read that costs the
    same anywhere in the list, and never skips nor repeats a ticket that keeps its place, whatever is created
    meanwhile (a change moves a ticket in the orders by atualizado_em)."""
    given, tickets, total = _filtered_and_total(organization, filters, order)
    tickets = _few_matches_first(tickets, given, total, order)
    if after is not None:
        fields = [Ticket._meta.get_field(name.lstrip("-")) for name in ORDERS[order]]
        values = [Value(value, output_field=field) for value, field in zip(after, fields, strict=True)]
        descending = ORDERS[order][0].startswith("-")
        tickets = tickets.filter(_RowAfter([F(field.name) for field in fields], values, descending=descending))
    rows = list(tickets.values_list(*columns, named=True)[: per_page + 1])
    last = order_place(rows[per_page - 1], order) if len(rows) > per_page else None
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


# Each tag of the organization's tickets and how many carry it, by name in code-point order on both databases
# (PostgreSQL's "C" collation is SQLite's BINARY): one statement, over the organization's tickets.
TAG_COUNTS_SQL = {
    "postgresql": model_sql(
        """
SELECT tag, COUNT(*) FROM {t} CROSS JOIN LATERAL jsonb_array_elements_text({t.tags}) AS tag
WHERE {t.organization} = %s GROUP BY tag ORDER BY tag COLLATE "C"
""",
        t=Ticket,
    ),
    "sqlite": model_sql(
        """
SELECT tag.value, COUNT(*) FROM {t}, json_each({t}.{t.tags}) AS tag
WHERE {t.organization} = %s GROUP BY tag.value ORDER BY tag.value
""",
        t=Ticket,
    ),
}


@dataclass(frozen=True)
class TagCount:
    name: str
    tickets: int


def tag_counts(*, organization: Organization) -> list[TagCount]:
    """The organization's tags, each with how many of its tickets carry it, by name (code-point order). Another
    organization's tickets never count. Reads every ticket of the organization: what it costs grows with them
    (docs/performance.md)."""
    with connection.cursor() as cursor:
        cursor.execute(TAG_COUNTS_SQL[connection.vendor], [db_value(Ticket, "organization", organization.pk)])
        return [TagCount(name, count) for name, count in cursor.fetchall()]


TICKET_CHANGE_ACTIONS = (
    "ticket.status_alterado",
    "ticket.prioridade_alterada",
    "ticket.atribuido",
    "ticket.tags_alteradas",
)


def ticket_change_history(*, ticket: Ticket) -> tuple[list[AuditRecord], dict[str, str]]:
    """The ticket's changes of status, priority, assignee and tags, oldest first, as the audit trail recorded
    them, whoever made them (an agent, the customer through the partner API, the system), and the names of the
    agents they name by id: two queries, the first on the audit trail's resource index. Kept as long as the
    trail (AUDIT_RETENTION_DAYS)."""
    records = AuditRecord.objects.filter(
        organization_id=ticket.organization_id,
        resource_type="ticket",
        resource_id=str(ticket.pk),
        action__in=TICKET_CHANGE_ACTIONS,
    )
    history = list(
        records.order_by("created_at", "id").only("created_at", "action", "actor_type", "actor_name", "changes")
    )
    agent_ids = {value for record in history for value in record.changes.get("atendente_id", {}).values() if value}
    names = {}
    if agent_ids:
        agents = Agent.objects.filter(organization_id=ticket.organization_id, pk__in=agent_ids)
        names = {str(pk): name for pk, name in agents.values_list("pk", "name")}
    return history, names


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


# --- satisfaction ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentSatisfaction:
    """One agent's line of the satisfaction report of a period: the ratings given to their resolutions in it, and
    the business minutes to the first answer and to the resolution of the tickets they resolved in it."""

    agent_id: object
    name: str
    ratings: int
    average: float | None
    satisfied_share: float | None  # the share of ratings of 4 or 5
    first_response_median: float | None
    resolution_median: float | None


def satisfaction_report(*, organization_id, since: datetime, until: datetime) -> list[AgentSatisfaction]:
    """Per agent of the organization (who was rated or resolved a ticket in [since, until)), by name: two grouped
    statements and one read of the minutes of the period's resolutions (medians are computed here, alike on both
    databases). A rating or a resolution without an agent is left out."""
    ratings = (
        TicketRating.objects.filter(organization_id=organization_id, created_at__gte=since, created_at__lt=until)
        .exclude(agent=None)
        .values("agent_id")
        .annotate(count=Count("pk"), average=Avg("score"), satisfied=Count("pk", filter=Q(score__gte=4)))
        .order_by()
    )
    by_agent = {row["agent_id"]: row for row in ratings}
    minutes: dict = {}
    resolved = Ticket.objects.filter(
        organization_id=organization_id, resolved_at__gte=since, resolved_at__lt=until, resolved_by__isnull=False
    )
    for agent_id, first_response, resolution in resolved.values_list(
        "resolved_by_id", "first_response_minutes", "resolution_minutes"
    ):
        entry = minutes.setdefault(agent_id, ([], []))
        if first_response is not None:
            entry[0].append(first_response)
        if resolution is not None:
            entry[1].append(resolution)
    agents = Agent.objects.filter(organization_id=organization_id, pk__in={*by_agent, *minutes}).order_by("name", "pk")
    report = []
    for agent in agents:
        row = by_agent.get(agent.pk)
        first_responses, resolutions = minutes.get(agent.pk, ([], []))
        report.append(
            AgentSatisfaction(
                agent_id=agent.pk,
                name=agent.name,
                ratings=row["count"] if row else 0,
                average=float(row["average"]) if row else None,
                satisfied_share=row["satisfied"] / row["count"] if row else None,
                first_response_median=median(first_responses) if first_responses else None,
                resolution_median=median(resolutions) if resolutions else None,
            )
        )
    return report
