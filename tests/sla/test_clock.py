"""sla.clock: a ticket's targets on business hours, what starts, pauses, meets and re-targets them, checked with
instants read off the calendar (Monday to Friday, 09:00-18:00 in São Paulo, UTC-3), and a property test of pauses
against the calendar's own count."""

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from sla.calendar import DEFAULT_CALENDAR, BusinessCalendar, Interval, business_time_between
from sla.clock import (
    FIRST_RESPONSE,
    NEXT_RESPONSE,
    RESOLUTION,
    Phase,
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
from sla.policies import Policy
from tests.sla.moments import local

OFFICE = BusinessCalendar(
    time_zone="America/Sao_Paulo", intervals=tuple(Interval(day, 9 * 60, 18 * 60) for day in range(5))
)
POLICY = Policy("media", first_response=120, next_response=60, resolution=540)


def started(at: datetime, policy=POLICY, calendar=OFFICE):
    return clock_started(policy=policy, calendar=calendar, now=at, phase=Phase.RUNNING)


def test_a_new_ticket_owes_its_first_response_and_its_resolution_in_business_minutes():
    clock = started(local(27, 17))  # Friday 17:00: one hour left this week

    first, resolution = clock.targets
    assert (first.kind, first.minutes, first.due_at) == (FIRST_RESPONSE, 120, local(30, 10))
    assert first.risk_at == local(30, 9, 36)  # 96 of 120 minutes: 60 on Friday, 36 on Monday
    assert (resolution.kind, resolution.due_at) == (RESOLUTION, local(30, 17))
    assert clock.next_due() == local(30, 10) and clock.next_risk() == local(30, 9, 36)
    assert (clock.has_policy, clock.policy) == (True, "media")


def test_an_agent_reply_meets_the_first_response_and_keeps_its_deadline():
    clock = clock_agent_replied(started(local(26, 10)), calendar=OFFICE, now=local(26, 11))

    first = clock.target(FIRST_RESPONSE)
    assert (first.met_at, first.due_at, first.violated(local(30, 12))) == (local(26, 11), local(26, 12), False)
    assert clock.next_due() == local(27, 10)  # the resolution: 540 minutes from Thursday 10:00


def test_a_reply_after_the_deadline_is_breached_for_good():
    clock = clock_agent_replied(started(local(26, 10)), calendar=OFFICE, now=local(26, 12, 1))

    assert clock.target(FIRST_RESPONSE).breached and clock.breached()
    assert clock.target(FIRST_RESPONSE).violated(local(26, 12, 1))


def test_a_running_target_is_violated_once_its_deadline_passed():
    first = started(local(26, 10)).target(FIRST_RESPONSE)

    assert not first.violated(local(26, 12)) and first.violated(local(26, 12) + timedelta(seconds=1))


def test_waiting_for_the_customer_moves_deadlines_by_the_business_time_spent_waiting():
    clock = started(local(26, 10))
    clock = clock_phase_changed(clock, calendar=OFFICE, now=local(26, 11), before=Phase.RUNNING, after=Phase.PAUSED)
    first = clock.target(FIRST_RESPONSE)
    assert first.paused and first.due_at is None and first.spent == timedelta(hours=1)
    assert clock.next_due() is None

    # Paused from Thursday 11:00 to Friday 10:00: 8 business hours; the hour left is due at Friday 11:00.
    clock = clock_phase_changed(clock, calendar=OFFICE, now=local(27, 10), before=Phase.PAUSED, after=Phase.RUNNING)
    assert clock.target(FIRST_RESPONSE).due_at == local(27, 11)
    assert clock.target(RESOLUTION).due_at == local(27, 18)  # 60 spent, 480 left from Friday 10:00


def test_a_customer_reply_starts_a_next_response_cycle_only_when_no_response_is_owed():
    clock = started(local(26, 10))
    owed = clock_customer_replied(clock, policy=POLICY, calendar=OFFICE, now=local(26, 10, 30), phase=Phase.RUNNING)
    assert owed == clock  # the first response is still owed

    clock = clock_agent_replied(clock, calendar=OFFICE, now=local(26, 11))
    clock = clock_customer_replied(clock, policy=POLICY, calendar=OFFICE, now=local(26, 14), phase=Phase.RUNNING)
    following = clock.target(NEXT_RESPONSE)
    assert (following.cycle, following.due_at) == (1, local(26, 15))

    # A second message before the answer: still the oldest one waited on.
    again = clock_customer_replied(clock, policy=POLICY, calendar=OFFICE, now=local(26, 14, 30), phase=Phase.RUNNING)
    assert again.target(NEXT_RESPONSE) == following

    clock = clock_agent_replied(again, calendar=OFFICE, now=local(26, 14, 45))
    clock = clock_customer_replied(clock, policy=POLICY, calendar=OFFICE, now=local(27, 9), phase=Phase.RUNNING)
    assert (clock.target(NEXT_RESPONSE).cycle, clock.target(NEXT_RESPONSE).due_at) == (2, local(27, 10))
    assert [target.kind for target in clock.targets] == [FIRST_RESPONSE, NEXT_RESPONSE, RESOLUTION]


def test_resolving_meets_every_open_target_and_reopening_runs_the_resolution_from_what_it_spent():
    clock = started(local(26, 10))
    clock = clock_phase_changed(clock, calendar=OFFICE, now=local(26, 11), before=Phase.RUNNING, after=Phase.STOPPED)
    assert all(target.met_at == local(26, 11) for target in clock.targets)
    assert clock.next_due() is None and not clock.breached()

    clock = clock_phase_changed(clock, calendar=OFFICE, now=local(27, 9), before=Phase.STOPPED, after=Phase.RUNNING)
    resolution = clock.target(RESOLUTION)
    assert resolution.met_at is None and resolution.spent == timedelta(hours=1)
    assert resolution.due_at == local(27, 17)  # 480 minutes left from Friday 09:00
    assert clock.target(FIRST_RESPONSE).met_at == local(26, 11)  # met stays met


def test_a_new_priority_keeps_the_time_spent_and_counts_its_own_minutes():
    clock = started(local(26, 10))
    urgent = Policy("urgente", first_response=30, resolution=240)

    clock = clock_retargeted(clock, policy=urgent, now=local(26, 10, 20), calendar_before=OFFICE, calendar=OFFICE)

    assert clock.policy == "urgente"
    assert clock.target(FIRST_RESPONSE).due_at == local(26, 10, 30)  # 20 spent, 10 left
    assert clock.target(RESOLUTION).due_at == local(26, 14)


def test_a_target_already_spent_under_the_new_policy_is_breached_at_once():
    clock = started(local(26, 10))

    clock = clock_retargeted(
        clock, policy=Policy("urgente", first_response=30), now=local(26, 11), calendar_before=OFFICE, calendar=OFFICE
    )

    first = clock.target(FIRST_RESPONSE)
    assert first.breached and first.due_at == local(26, 11)
    assert clock.target(RESOLUTION).minutes is None and clock.target(RESOLUTION).due_at is None


def test_met_and_breached_targets_keep_their_result_when_retargeted():
    clock = clock_agent_replied(started(local(26, 10)), calendar=OFFICE, now=local(26, 13))  # late
    met_late = clock.target(FIRST_RESPONSE)

    clock = clock_retargeted(clock, policy=None, now=local(26, 14), calendar_before=OFFICE, calendar=OFFICE)

    assert clock.target(FIRST_RESPONSE) == met_late
    assert not clock.has_policy and clock.shown == (met_late,)


def test_a_new_calendar_counts_what_ran_with_the_old_one_and_what_is_left_with_its_own():
    clock = started(local(26, 10), calendar=DEFAULT_CALENDAR)  # 24x7: 120 minutes is 12:00

    clock = clock_retargeted(
        clock, policy=POLICY, now=local(26, 17, 30), calendar_before=DEFAULT_CALENDAR, calendar=OFFICE
    )

    assert clock.target(FIRST_RESPONSE).violated(local(26, 17, 30))  # past due at 12:00: kept as it was
    assert clock.target(FIRST_RESPONSE).due_at == local(26, 12)
    assert clock.target(RESOLUTION).spent == timedelta(minutes=450)
    assert clock.target(RESOLUTION).due_at == local(27, 10)  # 90 left: 30 today, 60 on Friday


def test_a_ticket_from_before_clocks_is_counted_from_its_creation():
    clock = clock_adopted(
        policy=POLICY,
        calendar=OFFICE,
        created_at=local(26, 10),
        first_response_at=local(26, 11),
        resolved_at=None,
        phase=Phase.PAUSED,
        now=local(26, 15),
    )

    assert clock.target(FIRST_RESPONSE).met_at == local(26, 11)
    assert clock.target(RESOLUTION).paused and clock.target(RESOLUTION).spent == timedelta(hours=5)


def test_the_clock_is_kept_as_json_and_read_back_the_same():
    clock = clock_agent_replied(started(local(26, 10)), calendar=OFFICE, now=local(26, 11))
    clock = clock_customer_replied(clock, policy=POLICY, calendar=OFFICE, now=local(26, 12), phase=Phase.RUNNING)
    clock = clock_phase_changed(clock, calendar=OFFICE, now=local(26, 12, 30), before=Phase.RUNNING, after=Phase.PAUSED)

    assert clock_from_json(json.loads(json.dumps(clock_to_json(clock)))) == clock


# --- property: a pause moves the deadline by exactly the business time spent paused ------------------------

START = datetime(2026, 3, 2, 12, tzinfo=UTC)  # a Monday, a week before New York's clocks go forward
NEW_YORK = BusinessCalendar(
    time_zone="America/New_York",
    intervals=(*(Interval(day, 8 * 60, 12 * 60) for day in range(5)), Interval(5, 22 * 60, 24 * 60)),
)


@settings(max_examples=60, deadline=None)
@given(
    calendar=st.sampled_from([OFFICE, NEW_YORK, DEFAULT_CALENDAR]),
    minutes=st.integers(min_value=1, max_value=3000),
    steps=st.lists(st.integers(min_value=1, max_value=4000), min_size=0, max_size=6),
)
def test_the_business_time_running_before_the_deadline_is_the_target(calendar, minutes, steps):
    """Alternating pauses and runs (each lasting `steps` minutes of wall time) whatever the calendar: the business
    time of the running stretches up to the deadline adds up to the target, or the target was spent before."""
    policy = Policy(None, resolution=minutes)
    clock = clock_started(policy=policy, calendar=calendar, now=START, phase=Phase.RUNNING)
    now, running, stretches, since = START, True, [], START
    for step in steps:
        now += timedelta(minutes=step)
        before, after = (Phase.RUNNING, Phase.PAUSED) if running else (Phase.PAUSED, Phase.RUNNING)
        clock = clock_phase_changed(clock, calendar=calendar, now=now, before=before, after=after)
        if running:
            stretches.append((since, now))
        since, running = now, not running
    target = clock.target(RESOLUTION)
    spent_before = sum((business_time_between(calendar, a, b) for a, b in stretches), timedelta(0))
    if not running:
        assert target.due_at is None and target.spent == spent_before
        assert target.breached == (spent_before > timedelta(minutes=minutes))
        return
    if spent_before >= timedelta(minutes=minutes):
        assert target.due_at == since  # spent before it ran again: due the moment it did
        return
    assert target.due_at is not None
    assert spent_before + business_time_between(calendar, since, target.due_at) == timedelta(minutes=minutes)


def test_the_beat_announces_risk_then_breach_once_per_target_and_cycle():
    clock = started(local(26, 10))
    assert clock.next_announcement() == local(26, 11, 36)  # the first response's 80%

    clock, said = clock_announced(clock, now=local(26, 11, 40))
    assert [(alert, target.kind) for alert, target in said] == [("em_risco", FIRST_RESPONSE)]
    assert clock.next_announcement() == local(26, 12)  # then its deadline
    assert clock_announced(clock, now=local(26, 11, 50))[1] == []

    clock, said = clock_announced(clock, now=local(26, 12, 1))
    assert [(alert, target.kind) for alert, target in said] == [("violado", FIRST_RESPONSE)]
    assert clock.target(FIRST_RESPONSE).breached and clock_announced(clock, now=local(26, 13))[1] == []

    # A new next-response cycle is announced again; a target met late before the beat looked still is, both moments.
    clock = clock_agent_replied(clock, calendar=OFFICE, now=local(26, 13))
    clock = clock_customer_replied(clock, policy=POLICY, calendar=OFFICE, now=local(26, 14), phase=Phase.RUNNING)
    clock = clock_agent_replied(clock, calendar=OFFICE, now=local(26, 15, 10))  # 10 minutes late
    clock, said = clock_announced(clock, now=local(26, 15, 10))
    assert [(alert, target.kind, target.cycle) for alert, target in said] == [
        ("em_risco", NEXT_RESPONSE, 1),
        ("violado", NEXT_RESPONSE, 1),
    ]


def test_a_beat_that_slept_past_both_moments_announces_both_in_order():
    clock, said = clock_announced(started(local(26, 10)), now=local(26, 12, 5))

    assert [alert for alert, _target in said] == ["em_risco", "violado"]
