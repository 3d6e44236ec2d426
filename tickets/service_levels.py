"""The SLA clocks of tickets (sla.clock), kept on the ticket row: what the services of tickets call when they
change something a clock counts, and the re-targeting of an organization's open tickets after its calendar or
policies changed.

Every service that creates a ticket, publishes a reply or changes a status or priority calls `sla_moved` inside
its write, under the ticket's row lock, and saves the fields it returns with its own save: the clock costs no
statement of its own (the calendar and policies come from their cache, sla.selectors.service_levels). Lists
filter and sort by the columns written with it (`sla_due_at`, `sla_risk_at`, `sla_breached`): no clock is read
or computed per ticket to answer `sla=`. docs/decisions.md, "The SLA clock".
"""

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from foundation.batches import key_batches
from helpdesk.actors import SYSTEM
from sla.calendar import business_minutes_between
from sla.clock import (
    Phase,
    SlaClock,
    Target,
    clock_adopted,
    clock_agent_replied,
    clock_announced,
    clock_customer_replied,
    clock_from_json,
    clock_phase_changed,
    clock_retargeted,
    clock_started,
    clock_to_json,
)
from sla.models import SlaRetarget
from sla.rules import TARGETS
from sla.selectors import POLICIES_CACHE_SECONDS, ServiceLevels, calendar_of_data, service_levels
from tickets import signals
from tickets.models import StatusCategory, Ticket

PHASES = {
    StatusCategory.OPEN: Phase.RUNNING,
    StatusCategory.IN_PROGRESS: Phase.RUNNING,
    StatusCategory.WAITING: Phase.PAUSED,
    StatusCategory.RESOLVED: Phase.STOPPED,
    StatusCategory.CLOSED: Phase.STOPPED,
}
SLA_FIELDS = ["sla_clock", "sla_version", "sla_due_at", "sla_risk_at", "sla_breached", "sla_event_at"]
RETARGET_BATCH = 500


def phase_of(category: str) -> Phase:
    return PHASES[category]


def _stored(ticket: Ticket, clock: SlaClock, levels: ServiceLevels | None) -> list[str]:
    """The clock and the columns derived from it, on the ticket (`levels` None: the version it had)."""
    ticket.sla_clock = clock_to_json(clock)
    if levels is not None:
        ticket.sla_version = levels.version
    ticket.sla_due_at = clock.next_due()
    ticket.sla_risk_at = clock.next_risk()
    ticket.sla_breached = clock.breached()
    ticket.sla_event_at = clock.next_announcement()
    return list(SLA_FIELDS)


def sla_started(ticket: Ticket, *, now: datetime) -> None:
    """A new ticket's clock, set on the ticket before its insert (the same statement writes it)."""
    levels = service_levels(ticket.organization_id)
    policy = levels.policies.policy_for(ticket.priority)
    clock = clock_started(policy=policy, calendar=levels.calendar, now=now, phase=phase_of(ticket.status.category))
    _stored(ticket, clock, levels)


def clock_of(ticket: Ticket, levels: ServiceLevels, *, phase: Phase, now: datetime) -> SlaClock:
    """The ticket's clock, following the current settings: a ticket opened before clocks were kept is adopted
    (counted from its creation), one targeted with older settings re-targeted now (the beat's pass, SlaRetarget,
    does the same for the tickets nobody writes)."""
    policy = levels.policies.policy_for(ticket.priority)
    if ticket.sla_clock is None:
        return clock_adopted(
            policy=policy,
            calendar=levels.calendar,
            created_at=ticket.created_at,
            first_response_at=ticket.first_response_at,
            resolved_at=ticket.resolved_at,
            phase=phase,
            now=now,
        )
    clock = clock_from_json(ticket.sla_clock)
    if ticket.sla_version != levels.version:
        clock = clock_retargeted(
            clock, policy=policy, now=now, calendar_before=levels.calendar, calendar=levels.calendar
        )
    return clock


def sla_moved(
    ticket: Ticket,
    *,
    now: datetime,
    previous_category: str | None = None,
    previous_priority: str | None = None,
    agent_replied: bool = False,
    customer_replied: bool = False,
) -> list[str]:
    """What a write did to the ticket's clock and metrics (the ticket as it now is, under its row lock): its status
    left `previous_category`, its priority `previous_priority`, an agent's public reply or the customer's reply was
    published at `now`. Returns the fields to save."""
    levels = service_levels(ticket.organization_id)
    after = phase_of(ticket.status.category)
    before = phase_of(previous_category) if previous_category is not None else after
    clock = clock_of(ticket, levels, phase=before, now=now)
    changed = []
    if before is not after:
        clock = clock_phase_changed(clock, calendar=levels.calendar, now=now, before=before, after=after)
        changed += _phase_metrics(ticket, levels, now=now, before=before, after=after)
    policy = levels.policies.policy_for(ticket.priority)
    if previous_priority is not None and previous_priority != ticket.priority:
        clock = clock_retargeted(
            clock, policy=policy, now=now, calendar_before=levels.calendar, calendar=levels.calendar
        )
    if customer_replied:
        changed += _reply_metrics(ticket, levels, now=now, agent=False)
        clock = clock_customer_replied(clock, policy=policy, calendar=levels.calendar, now=now, phase=after)
    if agent_replied:
        changed += _reply_metrics(ticket, levels, now=now, agent=True)
        clock = clock_agent_replied(clock, calendar=levels.calendar, now=now)
    return [*_stored(ticket, clock, levels), *changed]


def _phase_metrics(ticket: Ticket, levels: ServiceLevels, *, now: datetime, before: Phase, after: Phase) -> list:
    if after is Phase.STOPPED:
        ticket.resolution_minutes = business_minutes_between(levels.calendar, ticket.created_at, now)
        return ["resolution_minutes"]
    if before is Phase.STOPPED:  # the time to resolve is the next resolution's
        ticket.reopen_count += 1
        ticket.resolution_minutes = None
        return ["reopen_count", "resolution_minutes"]
    return []


def _reply_metrics(ticket: Ticket, levels: ServiceLevels, *, now: datetime, agent: bool) -> list[str]:
    """A public reply counted; the first agent reply's time and business minutes since creation."""
    if not agent:
        ticket.customer_reply_count += 1
        return ["customer_reply_count"]
    ticket.agent_reply_count += 1
    if ticket.first_response_at is not None:
        return ["agent_reply_count"]
    ticket.first_response_at = now
    ticket.first_response_minutes = business_minutes_between(levels.calendar, ticket.created_at, now)
    return ["agent_reply_count", "first_response_at", "first_response_minutes"]


# --- what partners are shown -------------------------------------------------------------------------------


def sla_view(clock_json: dict | None, *, now: datetime) -> dict | None:
    """The `sla` block of a stored clock at `now`: the policy and each target it gives (met and breached ones keep
    theirs), or None when the ticket has no policy (nor had one that gave it a target). A paused target has no
    deadline (it moves while paused); a met one keeps the deadline it had."""
    if clock_json is None:
        return None
    clock = clock_from_json(clock_json)
    shown = clock.shown
    if not clock.has_policy and not shown:
        return None
    return {"politica": clock.policy, "metas": [target_view(target, now=now) for target in shown]}


def target_view(target: Target, *, now: datetime) -> dict:
    return {
        "tipo": TARGETS[target.kind],
        "vence_em": target.due_at,
        "cumprida_em": target.met_at,
        "violada": target.violated(now),
        "pausada": target.paused,
    }


# --- after a change of the calendar or the policies -----------------------------------------------------


OPEN_CATEGORIES = (StatusCategory.OPEN, StatusCategory.IN_PROGRESS, StatusCategory.WAITING)


RETARGET_LEASE = timedelta(minutes=10)  # a pass not finished by then (its process died) is taken again


def sla_retargets_run(*, now: datetime | None = None) -> int:
    """The pending re-targets (sla.models.SlaRetarget) whose pass is due: each organization's open tickets still
    targeted with other settings take the current ones. A re-target runs twice: at once, and once the settings'
    cache can no longer hand the old version to a writer (a write that read it meanwhile stamped the old version
    and is taken again). A beat claims a row (SKIP LOCKED, then a lease: two beats take different rows) and runs
    its pass in batches, each its own transaction: writers wait for a batch at most, never for the whole pass.
    Returns the tickets re-targeted."""
    now = now or timezone.now()
    moved = 0
    while True:
        with transaction.atomic():
            pending = (
                SlaRetarget.objects.select_for_update(skip_locked=True)
                .filter(next_pass_at__lte=now)
                .order_by("next_pass_at", "pk")
                .first()
            )
            if pending is None:
                return moved
            SlaRetarget.objects.filter(pk=pending.pk).update(next_pass_at=timezone.now() + RETARGET_LEASE)
        moved += _retarget_pass(pending)
        if pending.passes == 0:
            next_pass = pending.changed_at + timedelta(seconds=POLICIES_CACHE_SECONDS + 5)
            SlaRetarget.objects.filter(pk=pending.pk).update(passes=1, next_pass_at=next_pass)
        else:
            SlaRetarget.objects.filter(pk=pending.pk).delete()


def _retarget_pass(pending: SlaRetarget) -> int:
    """One pass over the organization's open tickets, by batches each under its rows' locks."""
    levels = service_levels(pending.organization_id, fresh=True)
    calendar_before = calendar_of_data(pending.previous_calendar)
    stale = Ticket.objects.filter(
        ~Q(sla_version=levels.version), organization_id=pending.organization_id, status__category__in=OPEN_CATEGORIES
    )
    return sum(
        _retarget_batch(ids, levels, calendar_before, pending.changed_at) for ids in key_batches(stale, RETARGET_BATCH)
    )


def _retarget_batch(ids, levels: ServiceLevels, calendar_before, changed_at: datetime) -> int:
    moved = 0
    with transaction.atomic():
        tickets = Ticket.objects.select_for_update(of=("self",)).select_related("status").filter(pk__in=ids)
        for ticket in tickets.order_by("pk"):
            if ticket.sla_version == levels.version or ticket.status.category not in OPEN_CATEGORIES:
                continue  # written meanwhile with the new settings, or no longer open
            phase = phase_of(ticket.status.category)
            if ticket.sla_clock is None:
                clock = clock_of(ticket, levels, phase=phase, now=timezone.now())
            else:
                clock = clock_from_json(ticket.sla_clock)
                at = max(changed_at, *(t.since for t in clock.targets if t.since is not None))
                clock = clock_retargeted(
                    clock,
                    policy=levels.policies.policy_for(ticket.priority),
                    now=at,
                    calendar_before=calendar_before,
                    calendar=levels.calendar,
                )
            # New deadlines are a change the partner sees (`incluir=sla`): the ticket moves in the change list.
            ticket.save(update_fields=[*_stored(ticket, clock, levels), "updated_at"])
            moved += 1
    return moved


# --- the beat's announcements --------------------------------------------------------------------------------

ANNOUNCE_BATCH = 100


def sla_announcements_run(*, now: datetime | None = None) -> int:
    """`ticket.sla_em_risco` and `ticket.sla_violado` for every ticket whose announcement is due (`sla_event_at`),
    each once per target and cycle: the ticket is taken under its row lock (SKIP LOCKED: two beats take different
    tickets), its clock marks what it announced in the same transaction as the events (tickets.signals), so a
    beat restarted, or another one, finds nothing left to say. Returns the announcements made."""
    now = now or timezone.now()
    announced = 0
    while True:
        with transaction.atomic():
            due = (
                Ticket.objects.select_for_update(of=("self",), skip_locked=True)
                .select_related("organization", "status", "requester", "assignee")
                .filter(sla_event_at__lte=now)
                .order_by("sla_event_at")[:ANNOUNCE_BATCH]
            )
            tickets = list(due)
            for ticket in tickets:
                announced += _announce(ticket, now)
        if len(tickets) < ANNOUNCE_BATCH:
            return announced


def _announce(ticket: Ticket, now: datetime) -> int:
    clock, announcements = clock_announced(clock_from_json(ticket.sla_clock), now=now)
    # Marked announced: nothing a partner reads changed (`violada` was already what `vence_em` said), so the
    # ticket keeps its place in the change list.
    ticket.save(update_fields=_stored(ticket, clock, None))
    for alert, target in announcements:
        signals.ticket_sla_alert.send(sender=Ticket, ticket=ticket, alert=alert, target=target, actor=SYSTEM)
    return len(announcements)


# --- what agents see ---------------------------------------------------------------------------------------

SLA_STATES = {
    "violado": ("SLA violado", "#B91C1C"),
    "em_risco": ("em risco", "#B45309"),
    "pausado": ("pausado", "#6B7280"),
    "no_prazo": ("no prazo", "#047857"),
}


def sla_state(ticket: Ticket, *, now: datetime) -> str | None:
    """The queue's reading of a ticket (the admin's colour): `violado` (a target breached, met late or past its
    deadline), `em_risco` (a target running past 80%), `pausado` (targets owed, waiting for the customer),
    `no_prazo` (targets running in time); None with nothing owed. From the columns, and the clock for a pause."""
    if ticket.sla_breached or (ticket.sla_due_at is not None and ticket.sla_due_at < now):
        return "violado"
    if ticket.sla_due_at is not None:
        return "em_risco" if ticket.sla_risk_at is not None and ticket.sla_risk_at <= now else "no_prazo"
    if ticket.sla_clock is not None and any(t.paused for t in clock_from_json(ticket.sla_clock).shown):
        return "pausado"
    return None


# --- what lists filter by ---------------------------------------------------------------------------------

SLA_FILTERS = ("violado", "em_risco")


def sla_condition(state: str, *, now: datetime | None = None) -> Q:
    """`sla=violado`: a target breached (met late, or its deadline passed while open); `sla=em_risco`: a target
    open past 80% of its time and none open past its deadline. Served by the partial indexes on the ticket."""
    now = now or timezone.now()
    if state == "violado":
        return Q(sla_breached=True) | Q(sla_due_at__lt=now)
    return Q(sla_risk_at__lte=now, sla_due_at__gte=now)
