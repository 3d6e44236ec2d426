"""sla.calendar against a brute-force reference: every UTC minute of a window marked business or not, from each
local date's intervals converted one by one with zoneinfo (fold=0), then counted. Property tests (hypothesis)
across DST changes (New York, Lisbon, Lord Howe's half hour, Santiago's changes at midnight), holidays,
shifts across midnight and 24x7 weeks; and worked examples that docs/sla.md quotes."""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sla.calendar
from sla.calendar import (
    DEFAULT_CALENDAR,
    BusinessCalendar,
    Holiday,
    Interval,
    business_minutes_after,
    business_minutes_between,
    business_time_between,
)

ZONES = (
    "America/New_York",
    "Europe/Lisbon",
    "America/Sao_Paulo",
    "America/Santiago",  # changes at local midnight
    "Australia/Lord_Howe",  # a 30-minute DST change
    "Asia/Kolkata",
    "UTC",
)
MAX_WINDOW = 4 * 24 * 60  # minutes a reference window spans at most
PROPERTY_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _transitions(zone_name: str) -> list[datetime]:
    """UTC midnights of the days around which the zone changed its offset, 2024 to 2026."""
    zone = ZoneInfo(zone_name)
    days = [datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=n) for n in range(3 * 366)]
    return [
        day
        for day, after in zip(days, days[1:], strict=False)
        if day.astimezone(zone).utcoffset() != after.astimezone(zone).utcoffset()
    ]


TRANSITIONS = {zone: _transitions(zone) for zone in ZONES}


# --- the reference ---------------------------------------------------------------------------------


def _wall(day: date, minute: int, zone: ZoneInfo) -> datetime:
    """A local date's minute (1440 is the next day's midnight) as an instant, fold=0."""
    if minute == 24 * 60:
        day, minute = day + timedelta(days=1), 0
    return datetime.combine(day, time(minute // 60, minute % 60), tzinfo=zone).astimezone(UTC)


def reference_minutes(calendar: BusinessCalendar, start: datetime, count: int) -> list[bool]:
    """Whether each of the `count` UTC minutes from `start` (a whole minute) is business time."""
    zone = ZoneInfo(calendar.time_zone)
    marked = [False] * count
    holidays = {holiday.date for holiday in calendar.holidays}
    weekly = {d: [(i.start, i.end) for i in calendar.intervals if i.weekday == d] for d in range(7)}
    if not calendar.intervals:
        weekly = {d: [(0, 24 * 60)] for d in range(7)}
    day = (start - timedelta(days=2)).date()
    while day <= (start + timedelta(minutes=count) + timedelta(days=2)).date():
        if day not in holidays:
            for first, last in weekly[day.weekday()]:
                begins = (_wall(day, first, zone) - start) // timedelta(minutes=1)
                ends = (_wall(day, last, zone) - start) // timedelta(minutes=1)
                for index in range(max(begins, 0), min(ends, count)):
                    marked[index] = True
        day += timedelta(days=1)
    return marked


# --- strategies ---------------------------------------------------------------------------------------


@st.composite
def day_intervals(draw, weekday: int) -> list[Interval]:
    cuts = sorted(draw(st.lists(st.integers(0, 24 * 60), unique=True, max_size=6)))
    if len(cuts) % 2:
        cuts = cuts[:-1]
    return [Interval(weekday, cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]


@st.composite
def weeks(draw) -> tuple[Interval, ...]:
    kind = draw(st.sampled_from(["random", "office", "night_shift", "always"]))
    if kind == "always":
        return ()
    if kind == "office":
        days = draw(st.lists(st.integers(0, 6), unique=True, min_size=1, max_size=7))
        return tuple(Interval(d, 8 * 60, 18 * 60) for d in sorted(days))
    if kind == "night_shift":  # 22:00-24:00 and the next day's 00:00-06:00, written as two intervals
        days = draw(st.lists(st.integers(0, 6), unique=True, min_size=1, max_size=7))
        pieces = [Interval(d, 22 * 60, 24 * 60) for d in days] + [Interval((d + 1) % 7, 0, 6 * 60) for d in days]
        return tuple(sorted(pieces))
    intervals = tuple(i for weekday in range(7) for i in draw(day_intervals(weekday)))
    return intervals or (Interval(draw(st.integers(0, 6)), 0, 1),)


@st.composite
def scenarios(draw):
    """A calendar, a start on a whole minute near one of its zone's DST changes (or anywhere), a window."""
    zone = draw(st.sampled_from(ZONES))
    near = TRANSITIONS[zone]
    if near and draw(st.booleans()):
        anchor = draw(st.sampled_from(near))
    else:
        anchor = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=draw(st.integers(0, 3 * 365)))
    start = anchor + timedelta(minutes=draw(st.integers(-2 * 24 * 60, 24 * 60)))
    holidays = draw(st.lists(st.integers(-2, 5), unique=True, max_size=3))
    calendar = BusinessCalendar(
        time_zone=zone,
        intervals=draw(weeks()),
        holidays=tuple(sorted(Holiday(start.date() + timedelta(days=n)) for n in holidays)),
    )
    return calendar, start, draw(st.integers(1, MAX_WINDOW))


# --- properties -----------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(scenarios(), st.data())
def test_minutes_between_match_the_reference(scenario, data):
    calendar, start, window = scenario
    marked = reference_minutes(calendar, start, window)
    offset = data.draw(st.integers(0, window))
    end = start + timedelta(minutes=offset)

    assert business_minutes_between(calendar, start, end) == sum(marked[:offset])
    assert business_time_between(calendar, start, end) == timedelta(minutes=sum(marked[:offset]))
    assert business_minutes_between(calendar, end, start) == -sum(marked[:offset])


@PROPERTY_SETTINGS
@given(scenarios(), st.data())
def test_minutes_after_match_the_reference(scenario, data):
    calendar, start, window = scenario
    marked = reference_minutes(calendar, start, window)
    available = sum(marked)
    minutes = data.draw(st.integers(0, available))
    # The earliest instant with `minutes` behind it: just after the minutes-th business minute of the window.
    expected = start
    if minutes:
        expected = start + timedelta(minutes=[i for i, business in enumerate(marked) if business][minutes - 1] + 1)

    assert business_minutes_after(calendar, start, minutes) == expected


@PROPERTY_SETTINGS
@given(scenarios(), st.integers(0, 59_999_999), st.integers(0, 3 * 24 * 60))
def test_after_and_between_agree_from_any_instant(scenario, microseconds, minutes):
    """From an instant inside a minute: the answer has exactly `minutes` behind it, and nothing earlier has."""
    calendar, start, _ = scenario
    start += timedelta(microseconds=microseconds)

    deadline = business_minutes_after(calendar, start, minutes)

    assert deadline.tzinfo is UTC
    assert business_time_between(calendar, start, deadline) == timedelta(minutes=minutes)
    if minutes:
        assert business_time_between(calendar, start, deadline - timedelta(microseconds=1)) < timedelta(minutes=minutes)


# --- worked examples (docs/sla.md) ----------------------------------------------------------------

SAO_PAULO_OFFICE = BusinessCalendar(
    time_zone="America/Sao_Paulo",
    intervals=tuple(Interval(d, 9 * 60, 18 * 60) for d in range(5)),
    holidays=(Holiday(date(2026, 12, 25), "Natal"),),
)


def at(zone: str, *args, fold: int = 0) -> datetime:
    return datetime(*args, tzinfo=ZoneInfo(zone), fold=fold)


def test_a_deadline_carries_over_the_night_and_the_weekend():
    friday_5pm = at("America/Sao_Paulo", 2026, 11, 27, 17, 0)

    deadline = business_minutes_after(SAO_PAULO_OFFICE, friday_5pm, 120)

    assert deadline == at("America/Sao_Paulo", 2026, 11, 30, 10, 0)  # Monday 10:00
    assert business_minutes_between(SAO_PAULO_OFFICE, friday_5pm, deadline) == 120


def test_a_count_ending_as_the_desk_closes_answers_the_close():
    morning = at("America/Sao_Paulo", 2026, 11, 26, 9, 0)

    assert business_minutes_after(SAO_PAULO_OFFICE, morning, 9 * 60) == at("America/Sao_Paulo", 2026, 11, 26, 18, 0)


def test_a_holiday_is_skipped_whole():
    christmas_eve_5pm = at("America/Sao_Paulo", 2026, 12, 24, 17, 0)

    assert business_minutes_after(SAO_PAULO_OFFICE, christmas_eve_5pm, 120) == at(
        "America/Sao_Paulo", 2026, 12, 28, 10, 0
    )


def test_zero_minutes_is_the_start_itself_even_outside_business_hours():
    saturday = at("America/Sao_Paulo", 2026, 11, 28, 3, 0)

    assert business_minutes_after(SAO_PAULO_OFFICE, saturday, 0) == saturday


def test_the_default_is_every_minute():
    start = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    assert business_minutes_after(DEFAULT_CALENDAR, start, 3 * 24 * 60) == start + timedelta(days=3)


def test_a_night_shift_written_as_two_intervals_is_one_stretch():
    night = BusinessCalendar(time_zone="UTC", intervals=(Interval(0, 22 * 60, 24 * 60), Interval(1, 0, 6 * 60)))
    monday_11pm = datetime(2026, 11, 23, 23, 0, tzinfo=UTC)

    assert business_minutes_after(night, monday_11pm, 60) == datetime(2026, 11, 24, 0, 0, tzinfo=UTC)
    assert business_minutes_after(night, monday_11pm, 61) == datetime(2026, 11, 24, 0, 1, tzinfo=UTC)
    assert business_minutes_between(night, monday_11pm, datetime(2026, 11, 24, 6, 0, tzinfo=UTC)) == 7 * 60


def test_the_repeated_hour_of_autumn_counts_twice():
    """New York, 2026-11-01: 01:00 to 02:00 lasts two real hours (01:00 EDT to 02:00 EST)."""
    sunday = BusinessCalendar(time_zone="America/New_York", intervals=(Interval(6, 60, 120),))
    start = at("America/New_York", 2026, 11, 1, 0, 0)

    assert business_minutes_between(sunday, start, start + timedelta(hours=5)) == 120


def test_a_skipped_local_time_is_read_with_the_earlier_offset():
    """New York, 2026-03-08: 02:30 does not exist; fold=0 reads it as 02:30 EST, 03:30 EDT."""
    sunday = BusinessCalendar(time_zone="America/New_York", intervals=(Interval(6, 150, 240),))
    start = at("America/New_York", 2026, 3, 8, 0, 0)

    assert business_minutes_between(sunday, start, start + timedelta(hours=6)) == 30
    assert business_minutes_after(sunday, start, 1) == at("America/New_York", 2026, 3, 8, 3, 31)


def test_the_spring_gap_shortens_a_lisbon_day():
    """Lisbon, 2026-03-29 (Sunday): 01:00 jumps to 02:00, so 00:00-24:00 is 23 hours."""
    sunday = BusinessCalendar(time_zone="Europe/Lisbon", intervals=(Interval(6, 0, 24 * 60),))
    start = at("Europe/Lisbon", 2026, 3, 28, 12, 0)

    assert business_minutes_between(sunday, start, start + timedelta(days=2)) == 23 * 60


def test_naive_instants_and_negative_minutes_are_refused():
    with pytest.raises(ValueError):
        business_minutes_after(DEFAULT_CALENDAR, datetime(2026, 1, 1), 5)
    with pytest.raises(ValueError):
        business_minutes_after(DEFAULT_CALENDAR, datetime(2026, 1, 1, tzinfo=UTC), -1)
    with pytest.raises(ValueError):
        business_minutes_between(DEFAULT_CALENDAR, datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2))


def test_an_interval_inside_the_spring_gap_adds_nothing():
    """New York, 2026-03-08: 02:30-03:15 reads 02:30 EST (07:30 UTC) to 03:15 EDT (07:15 UTC): nothing."""
    sunday = BusinessCalendar(time_zone="America/New_York", intervals=(Interval(6, 150, 195), Interval(6, 300, 360)))
    start = at("America/New_York", 2026, 3, 8, 0, 0)

    assert business_minutes_between(sunday, start, start + timedelta(hours=12)) == 60
    assert business_minutes_after(sunday, start, 30) == at("America/New_York", 2026, 3, 8, 5, 30)


def test_intervals_the_spring_gap_makes_overlap_count_once():
    """New York, 2026-03-08: 01:00-02:45 ends at 02:45 EST (07:45 UTC), after 03:00-04:00 began (03:00 EDT, 07:00
    UTC): together they are 06:00 to 08:00 UTC, two hours."""
    sunday = BusinessCalendar(time_zone="America/New_York", intervals=(Interval(6, 60, 165), Interval(6, 180, 240)))
    start = at("America/New_York", 2026, 3, 8, 0, 0)

    assert business_minutes_between(sunday, start, start + timedelta(hours=12)) == 120
    assert business_minutes_after(sunday, start, 120) == at("America/New_York", 2026, 3, 8, 4, 0)


@pytest.mark.parametrize(
    ("arrives", "minutes", "due"),
    [
        ((2026, 11, 26, 10, 0), 120, (2026, 11, 26, 12, 0)),
        ((2026, 11, 27, 17, 0), 120, (2026, 11, 30, 10, 0)),
        ((2026, 11, 28, 3, 0), 120, (2026, 11, 30, 11, 0)),
        ((2026, 12, 24, 17, 0), 120, (2026, 12, 28, 10, 0)),
        ((2026, 11, 26, 9, 0), 9 * 60, (2026, 11, 26, 18, 0)),
    ],
)
def test_the_examples_of_docs_sla_md(arrives, minutes, due):
    assert business_minutes_after(SAO_PAULO_OFFICE, at("America/Sao_Paulo", *arrives), minutes) == at(
        "America/Sao_Paulo", *due
    )


@pytest.mark.parametrize(
    ("arrives", "minutes", "due"),
    [
        ((2026, 11, 27, 17, 45), 30, (2026, 11, 30, 9, 15)),
        ((2026, 11, 27, 17, 45), 240, (2026, 11, 30, 12, 45)),
        ((2026, 11, 26, 10, 0), 1080, (2026, 11, 30, 10, 0)),
    ],
)
def test_the_policy_examples_of_docs_sla_md(arrives, minutes, due):
    assert business_minutes_after(SAO_PAULO_OFFICE, at("America/Sao_Paulo", *arrives), minutes) == at(
        "America/Sao_Paulo", *due
    )


# --- long walks (a review found them) --------------------------------------------------------------------------


def _sundays(first: date, count: int, skip=()) -> tuple[Holiday, ...]:
    days = (first + timedelta(weeks=n) for n in range(count * 2))
    return tuple(Holiday(day) for day in days if day not in skip)[:count]


def test_a_long_run_of_holidays_beside_days_dst_empties_is_walked_through():
    """Business time only on Sundays 02:30-03:15 in New York, and 366 Sundays closed from 2027 but the spring ones,
    which DST empties (02:30 EST to 03:15 EDT ends before it starts): seven years without business time, which
    an earlier limit took for a calendar without any and refused with an error. The first Sunday after them is
    the deadline's."""
    spring_sundays = {date(year, 3, day) for year, day in ((2027, 14), (2028, 12), (2029, 11), (2030, 10))}
    holidays = _sundays(date(2027, 1, 3), 366, skip=spring_sundays)
    calendar = BusinessCalendar("America/New_York", (Interval(6, 150, 195),), holidays)
    start = datetime(2027, 1, 1, tzinfo=UTC)
    first_open = holidays[-1].date + timedelta(weeks=1)

    due = business_minutes_after(calendar, start, 10)

    assert due == datetime.combine(first_open, time(2, 40), tzinfo=ZoneInfo("America/New_York"))
    assert business_minutes_between(calendar, start, start + timedelta(days=1)) == 0
    assert business_minutes_between(calendar, start, due) == 10


def test_a_target_beyond_twenty_years_has_no_deadline():
    """One business minute a week and a year of minutes: a deadline ten thousand years away, past datetime's
    year 9999. No deadline (None), after a walk of twenty years at most."""
    calendar = BusinessCalendar("UTC", (Interval(0, 600, 601),))
    start = datetime(2026, 11, 30, tzinfo=UTC)

    assert business_minutes_after(calendar, start, 525_600) is None
    assert business_minutes_after(calendar, start, 52) == datetime(2027, 11, 22, 10, 1, tzinfo=UTC)


def test_minutes_between_stop_at_the_window(monkeypatch):
    """A day inside a closed run of three hundred Mondays: the count reads the window's days and stops (walking on
    to the next business minute would read six years of days)."""
    calendar = BusinessCalendar("UTC", (Interval(0, 540, 1080),), _sundays(date(2026, 11, 30), 300))
    start = datetime(2026, 12, 1, tzinfo=UTC)
    days_read = []
    read_day = sla.calendar._day_segments
    monkeypatch.setattr(
        sla.calendar, "_day_segments", lambda calendar, day: days_read.append(day) or read_day(calendar, day)
    )

    assert business_minutes_between(calendar, start, start + timedelta(hours=6)) == 0
    assert business_minutes_between(calendar, datetime(2026, 11, 29, tzinfo=UTC), start) == 0
    assert len(days_read) <= 8
