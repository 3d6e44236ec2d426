"""The SLA clock of one ticket, as a value: its targets, the business time each has spent, and what moves them.

Each target (`Target`) counts business time of the organization's calendar (sla.calendar) while it runs, and
keeps what it spent when it stops: a pause (the ticket waits for the customer) or being met. Its deadline is
where the calendar says its remaining minutes end, counted from when it last started running, so a pause moves
the deadline by exactly the business time spent paused. The ticket's own history decides what runs:

- `first_response` and `resolution` start with the ticket; an agent's public reply meets the first response,
  a resolution meets the resolution (and any response still owed: resolving answers the customer);
- a customer reply with no response owed starts a new `next_response` cycle, met by the next public agent reply;
- the ticket's phase (`RUNNING`, `PAUSED`, `STOPPED`: its status category, mapped by tickets) runs, pauses or
  stops what is not met; reopening a resolved ticket runs its resolution again, from the time it had spent;
- a new policy (the ticket's priority changed, or the organization's policies or calendar) re-targets what is
  running or paused and not yet breached, keeping the time spent; met and breached targets keep their result.

A target is breached when its deadline passes before it is met (`violated(now)`); `breached` records it once
known (stopped late, or stamped when re-targeted). Pure: no query, no Django. Every instant is aware; `spent`
is kept to the microsecond. docs/sla.md explains it to support leads; docs/decisions.md, "The SLA clock".
"""

import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import Enum

from sla.calendar import BusinessCalendar, business_time_after, business_time_between
from sla.policies import Policy

FIRST_RESPONSE, NEXT_RESPONSE, RESOLUTION = "first_response", "next_response", "resolution"
KINDS = (FIRST_RESPONSE, NEXT_RESPONSE, RESOLUTION)  # the order targets are kept and shown in
RISK_SHARE = 0.8  # a target is at risk once this share of its business time is gone


class Phase(Enum):
    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"


@dataclass(frozen=True)
class Target:
    """One target of a ticket. `since`: running since then (None: paused, or met); `spent`: business time counted
    before `since`; `minutes`: the policy's target (None: the policy has none, the time is still counted);
    `due_at` and `risk_at` while it runs (a met target keeps the deadline it had); `cycle`: the next response's
    count (1 for the others)."""

    kind: str
    cycle: int = 1
    spent: timedelta = timedelta(0)
    since: datetime | None = None
    met_at: datetime | None = None
    minutes: int | None = None
    due_at: datetime | None = None
    risk_at: datetime | None = None
    breached: bool = False
    # Whether `ticket.sla_em_risco` / `ticket.sla_violado` was announced for this target in this cycle.
    risk_announced: bool = False
    breach_announced: bool = False

    def violated(self, now: datetime) -> bool:
        return self.breached or (self.met_at is None and self.due_at is not None and now > self.due_at)

    @property
    def paused(self) -> bool:
        return self.met_at is None and self.since is None

    @property
    def open(self) -> bool:
        """Still to be met (running or paused)."""
        return self.met_at is None

    def spent_at(self, calendar: BusinessCalendar, now: datetime) -> timedelta:
        if self.since is None or now <= self.since:
            return self.spent
        return self.spent + business_time_between(calendar, self.since, now)


@dataclass(frozen=True)
class SlaClock:
    """A ticket's targets, in KINDS' order (a next response only once a cycle began), and the policy they follow:
    `policy` is that policy's priority, `has_policy` False when the ticket's priority has none."""

    targets: tuple[Target, ...] = ()
    has_policy: bool = False
    policy: str | None = None

    def target(self, kind: str) -> Target | None:
        return next((target for target in self.targets if target.kind == kind), None)

    @property
    def shown(self) -> tuple[Target, ...]:
        """The targets a policy gives (or gave: met and breached ones keep theirs)."""
        return tuple(target for target in self.targets if target.minutes is not None)

    def next_due(self) -> datetime | None:
        """The earliest deadline still running (a breached one included: it is the most urgent)."""
        return min((t.due_at for t in self.targets if t.open and t.due_at is not None), default=None)

    def next_risk(self) -> datetime | None:
        """The earliest 80% instant of the targets running."""
        return min((t.risk_at for t in self.targets if t.since is not None and t.risk_at is not None), default=None)

    def breached(self) -> bool:
        return any(target.breached for target in self.targets)

    def next_announcement(self) -> datetime | None:
        """When the next `em_risco` or `violado` is due: a target's 80% instant, its deadline, or at once (EARLIEST)
        for a target that breached while the beat was not looking (met late, or paused past its deadline)."""
        instants = []
        for target in self.targets:
            if target.minutes is None:
                continue
            if not target.risk_announced and target.risk_at is not None:
                instants.append(target.risk_at if target.since is not None else EARLIEST)
            if not target.breach_announced:
                if target.breached:
                    instants.append(EARLIEST)
                elif target.open and target.due_at is not None:
                    instants.append(target.due_at)
        return min(instants, default=None)


EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)  # "at once": before any instant the beat compares with
RISK, BREACH = "em_risco", "violado"


def clock_announced(clock: SlaClock, *, now: datetime) -> tuple[SlaClock, list[tuple[str, Target]]]:
    """What the beat announces at `now`, each once per target and cycle: `em_risco` for a target past its 80%
    instant (running, or stopped after it), `violado` for a target past its deadline (met late or not; a breach is
    recorded as such). Returns the clock
    with them marked announced, and the announcements in order (a target's risk before its breach)."""
    announcements, targets = [], []
    for target in clock.targets:
        if target.minutes is not None:
            if not target.risk_announced and target.risk_at is not None and now >= target.risk_at:
                target = replace(target, risk_announced=True)
                announcements.append((RISK, target))
            if not target.breach_announced and target.violated(now):
                target = replace(target, breach_announced=True, breached=True)
                announcements.append((BREACH, target))
        targets.append(target)
    return _with(clock, targets), announcements


def _with(clock: SlaClock, targets) -> SlaClock:
    return replace(clock, targets=tuple(sorted(targets, key=lambda target: KINDS.index(target.kind))))


def _minutes(policy: Policy | None, kind: str) -> int | None:
    return getattr(policy, kind) if policy is not None else None


def _scheduled(target: Target, calendar: BusinessCalendar) -> Target:
    """Its deadline and risk instant, from when it last started running (none while paused, met or untargeted)."""
    if target.minutes is None:
        return replace(target, due_at=None if target.met_at is None else target.due_at, risk_at=None)
    if target.since is None or target.met_at is not None:  # not running: a kept risk moment stays
        return replace(target, due_at=None if target.met_at is None else target.due_at)
    whole = timedelta(minutes=target.minutes)
    at_risk = timedelta(minutes=math.ceil(target.minutes * RISK_SHARE))
    return replace(
        target,
        due_at=business_time_after(calendar, target.since, max(whole - target.spent, timedelta(0))),
        risk_at=business_time_after(calendar, target.since, max(at_risk - target.spent, timedelta(0))),
    )


def _stopped(target: Target, calendar: BusinessCalendar, now: datetime, *, met: bool) -> Target:
    """Paused (met=False) or met at `now`: what it spent is kept, a passed deadline recorded as breached."""
    if not target.open or (target.since is None and not met):
        return target
    breached = target.violated(now)
    spent = target.spent_at(calendar, now)
    # A risk moment that came before it stopped is kept until the beat announced it.
    risk_at = target.risk_at if target.risk_at is not None and now >= target.risk_at else None
    if met:
        return replace(target, spent=spent, since=None, met_at=now, breached=breached, risk_at=risk_at)
    return replace(target, spent=spent, since=None, due_at=None, risk_at=risk_at, breached=breached)


def _resumed(target: Target, calendar: BusinessCalendar, now: datetime) -> Target:
    return _scheduled(replace(target, since=now, met_at=None), calendar)


def _new(kind: str, policy: Policy | None, calendar: BusinessCalendar, now: datetime, phase: Phase, cycle=1):
    running = now if phase is Phase.RUNNING else None
    return _scheduled(Target(kind=kind, cycle=cycle, since=running, minutes=_minutes(policy, kind)), calendar)


def clock_started(*, policy: Policy | None, calendar: BusinessCalendar, now: datetime, phase: Phase) -> SlaClock:
    """A new ticket's clock: its first response and its resolution owed from now."""
    targets = [_new(kind, policy, calendar, now, phase) for kind in (FIRST_RESPONSE, RESOLUTION)]
    clock = SlaClock(has_policy=policy is not None, policy=policy.priority if policy else None)
    if phase is Phase.STOPPED:
        targets = [_stopped(target, calendar, now, met=True) for target in targets]
    return _with(clock, targets)


def clock_adopted(
    *,
    policy: Policy | None,
    calendar: BusinessCalendar,
    created_at: datetime,
    first_response_at: datetime | None,
    resolved_at: datetime | None,
    phase: Phase,
    now: datetime,
) -> SlaClock:
    """The clock of a ticket opened before clocks were kept: counted from its creation as if it never paused
    (its pauses were not recorded), its first response and resolution met when they happened."""
    clock = clock_started(policy=policy, calendar=calendar, now=created_at, phase=Phase.RUNNING)
    if first_response_at is not None:
        clock = _meet(clock, calendar, first_response_at, (FIRST_RESPONSE,))
    if phase is Phase.STOPPED:
        return _meet(clock, calendar, resolved_at or now, KINDS)
    if phase is Phase.PAUSED:
        return clock_phase_changed(clock, calendar=calendar, now=now, before=Phase.RUNNING, after=Phase.PAUSED)
    return clock


def _meet(clock: SlaClock, calendar: BusinessCalendar, now: datetime, kinds) -> SlaClock:
    return _with(clock, [_stopped(t, calendar, now, met=True) if t.kind in kinds else t for t in clock.targets])


def clock_agent_replied(clock: SlaClock, *, calendar: BusinessCalendar, now: datetime) -> SlaClock:
    """A public agent reply meets the first response and the next response owed."""
    return _meet(clock, calendar, now, (FIRST_RESPONSE, NEXT_RESPONSE))


def clock_customer_replied(
    clock: SlaClock, *, policy: Policy | None, calendar: BusinessCalendar, now: datetime, phase: Phase
) -> SlaClock:
    """A customer reply starts a new next-response cycle, unless a response is already owed (the first one, or
    the next one since an earlier unanswered reply: the oldest unanswered message is the one being waited on)."""
    if any(target.open for target in clock.targets if target.kind in (FIRST_RESPONSE, NEXT_RESPONSE)):
        return clock
    previous = clock.target(NEXT_RESPONSE)
    cycle = previous.cycle + 1 if previous else 1
    others = [target for target in clock.targets if target.kind != NEXT_RESPONSE]
    return _with(clock, [*others, _new(NEXT_RESPONSE, policy, calendar, now, phase, cycle)])


def clock_phase_changed(
    clock: SlaClock, *, calendar: BusinessCalendar, now: datetime, before: Phase, after: Phase
) -> SlaClock:
    """The ticket's status moved it between running, paused (waiting for the customer) and stopped (resolved
    or closed). Stopping meets every open target; leaving STOPPED runs the resolution again from what it spent."""
    if before is after:
        return clock
    if after is Phase.STOPPED:
        return _meet(clock, calendar, now, KINDS)
    targets = list(clock.targets)
    if before is Phase.STOPPED:  # reopened: the resolution is owed again
        targets = [
            replace(t, met_at=None, since=None, due_at=None, risk_at=None) if t.kind == RESOLUTION else t
            for t in targets
        ]
    if after is Phase.PAUSED:
        targets = [_stopped(t, calendar, now, met=False) for t in targets]
    else:
        targets = [_resumed(t, calendar, now) if t.paused else t for t in targets]
    return _with(clock, targets)


def clock_retargeted(
    clock: SlaClock,
    *,
    policy: Policy | None,
    now: datetime,
    calendar_before: BusinessCalendar,
    calendar: BusinessCalendar,
) -> SlaClock:
    """The ticket follows `policy` (its priority changed, or the organization's policies or calendar did): the
    targets still open and not breached take its minutes, what they spent kept (counted up to `now` with the
    calendar they ran on), their deadlines counted on from `now` with `calendar`. Met and breached targets keep
    their result. A target whose new minutes are already spent is breached at once."""
    targets = []
    for target in clock.targets:
        if not target.open or target.violated(now):
            targets.append(target)
            continue
        spent = target.spent_at(calendar_before, now)
        minutes = _minutes(policy, target.kind)
        moved = replace(target, spent=spent, since=now if target.since is not None else None, minutes=minutes)
        if minutes is not None and spent >= timedelta(minutes=minutes):
            moved = replace(moved, breached=True)
        targets.append(_scheduled(moved, calendar))
    return _with(replace(clock, has_policy=policy is not None, policy=policy.priority if policy else None), targets)


# --- stored as JSON on the ticket --------------------------------------------------------------------


def _instant(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _text(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def clock_to_json(clock: SlaClock) -> dict:
    return {
        "has_policy": clock.has_policy,
        "policy": clock.policy,
        "targets": [
            {
                "kind": t.kind,
                "cycle": t.cycle,
                "spent_us": t.spent // timedelta(microseconds=1),
                "since": _text(t.since),
                "met_at": _text(t.met_at),
                "minutes": t.minutes,
                "due_at": _text(t.due_at),
                "risk_at": _text(t.risk_at),
                "breached": t.breached,
                "risk_announced": t.risk_announced,
                "breach_announced": t.breach_announced,
            }
            for t in clock.targets
        ],
    }


def clock_from_json(data: dict) -> SlaClock:
    return SlaClock(
        has_policy=data["has_policy"],
        policy=data["policy"],
        targets=tuple(
            Target(
                kind=t["kind"],
                cycle=t["cycle"],
                spent=timedelta(microseconds=t["spent_us"]),
                since=_instant(t["since"]),
                met_at=_instant(t["met_at"]),
                minutes=t["minutes"],
                due_at=_instant(t["due_at"]),
                risk_at=_instant(t["risk_at"]),
                breached=t["breached"],
                risk_announced=t["risk_announced"],
                breach_announced=t["breach_announced"],
            )
            for t in data["targets"]
        ),
    )
