"""Business time: what an organization's calendar counts, and the two questions deadlines ask of it.

A calendar (`BusinessCalendar`) is an IANA time zone, weekly intervals of local wall-clock time (minute
precision, `end` up to 1440, the end of the day) and holidays (whole local days). Its business time is a set
of instants, the union of one segment per interval of every local date that is not a holiday: from the
interval's start to its end on that date, each converted to an instant with zoneinfo, `fold=0` (the first of
a repeated local time; a local time skipped by a DST change is read with the offset in force before it, so it
lands that much later). A segment whose converted end does not come after its start adds nothing. A week
without intervals is every day from 00:00 to 24:00 (24x7), holidays still closed. A day's 24:00 is the next
day's 00:00, so a shift written as 22:00-24:00 on one day and 00:00-06:00 on the next is one stretch.

- `business_time_between(calendar, start, end)`: how much of [start, end) is business time;
  `business_minutes_between` the same in whole minutes (rounded down).
- `business_minutes_after(calendar, start, minutes)`: the earliest instant at which `minutes` of business
  time have passed since `start` (a count that ends as an interval closes answers the close, not the next
  opening); None when that is more than HORIZON after `start` (a sparse calendar and a long target: no
  deadline a desk can keep, and a walk of centuries, ending in datetime's year 9999, not taken).

Pure functions over an immutable value: no query, no Django. Instants are aware datetimes; answers are in UTC.
docs/sla.md explains it to support leads, with examples; docs/decisions.md, "Business hours", the choices.
"""

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from zoneinfo import ZoneInfo

MINUTES_PER_DAY = 24 * 60
DEFAULT_TIME_ZONE = "America/Sao_Paulo"
# Every real offset lies within UTC-12 and UTC+14 (a day's instants start at most 14 hours before its UTC
# midnight and end at most 12 hours after the next): the walk below leans on it, with an hour to spare.
_EARLIEST_START = timedelta(hours=15)
_MINUTE = timedelta(minutes=1)
# How far business_minutes_after looks: about 7,300 days walked at most (some tens of milliseconds).
HORIZON = timedelta(days=20 * 366)
# Consecutive open weekdays that DST can leave without business time (an interval inside a skipped hour): one
# a year per change; more in a row means a calendar without business time, which validation refuses.
_MAX_EMPTY_OPEN_DAYS = 14


@dataclass(frozen=True, order=True)
class Interval:
    """Business time on a weekday (0 = Monday), from `start` to `end` minutes after local midnight."""

    weekday: int
    start: int
    end: int


@dataclass(frozen=True, order=True)
class Holiday:
    """A local day the desk is closed, with an optional name."""

    date: date
    name: str = ""


@dataclass(frozen=True)
class BusinessCalendar:
    """An organization's business hours (sla.selectors.business_calendar loads it, once per organization)."""

    time_zone: str = DEFAULT_TIME_ZONE
    intervals: tuple[Interval, ...] = ()
    holidays: tuple[Holiday, ...] = ()
    # Derived once per value (and kept when the value is cached: zoneinfo objects pickle by their key).
    _by_weekday: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        weekly = [[] for _ in range(7)]
        for interval in self.intervals:
            weekly[interval.weekday].append((interval.start, interval.end))
        if not self.intervals:  # 24x7
            weekly = [[(0, MINUTES_PER_DAY)] for _ in range(7)]
        object.__setattr__(self, "_by_weekday", tuple(tuple(sorted(day)) for day in weekly))

    @cached_property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)

    @cached_property
    def closed_dates(self) -> frozenset[date]:
        return frozenset(holiday.date for holiday in self.holidays)


DEFAULT_CALENDAR = BusinessCalendar()


def _aware(instant: datetime, name: str) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{name} must be an aware datetime")
    return instant.astimezone(UTC)


def _day_segments(calendar: BusinessCalendar, day: date) -> list[tuple[datetime, datetime]]:
    """The segments of one local date, as UTC instants (possibly overlapping when DST bends the day)."""
    if day in calendar.closed_dates:
        return []
    midnight = datetime(day.year, day.month, day.day, tzinfo=calendar.zone)  # fold=0
    segments = []
    for start, end in calendar._by_weekday[day.weekday()]:
        # Wall-clock arithmetic: an aware datetime plus a timedelta keeps its zone and reads the result afresh.
        begins = (midnight + timedelta(minutes=start)).astimezone(UTC)
        ends = (midnight + timedelta(minutes=end)).astimezone(UTC)
        if ends > begins:
            segments.append((begins, ends))
    return segments


def _opens(calendar: BusinessCalendar, day: date) -> bool:
    """Whether the week opens on this date (a holiday does not)."""
    return day not in calendar.closed_dates and bool(calendar._by_weekday[day.weekday()])


def _days(calendar: BusinessCalendar, day: date) -> Iterator[tuple[list, datetime]]:
    """Each local date's segments from `day` on, with the instant before which the later dates' all start.
    Holidays are finite and a validated week opens some day, so business time always comes; only DST can empty
    an open day."""
    empty_open_days = 0
    while True:
        segments = _day_segments(calendar, day)
        if segments:
            empty_open_days = 0
        elif _opens(calendar, day):
            empty_open_days += 1
            if empty_open_days > _MAX_EMPTY_OPEN_DAYS:
                raise RuntimeError("calendar without business time")  # validation refuses such a calendar
        day += timedelta(days=1)
        yield segments, datetime(day.year, day.month, day.day, tzinfo=UTC) - _EARLIEST_START


def business_segments(
    calendar: BusinessCalendar, since: datetime, until: datetime | None = None
) -> Iterator[tuple[datetime, datetime]]:
    """The business time from the local date before `since` on, as disjoint UTC segments in order: endless, or
    up to the last one that starts before `until` (its end may pass `until`)."""
    since = _aware(since, "since")
    until = _aware(until, "until") if until is not None else None
    pending: list[tuple[datetime, datetime]] = []  # a heap of segments not yet given out
    current = None
    # Instants of local dates before the one before `since` all end before it.
    for segments, horizon in _days(calendar, since.date() - timedelta(days=1)):
        for segment in segments:
            heapq.heappush(pending, segment)
        # Past `until`, the segments starting before it are all in the heap: the last ones are given out.
        done = until is not None and horizon > until
        while pending and pending[0][0] < (until if done else horizon):
            begins, ends = heapq.heappop(pending)
            if current is None:
                current = (begins, ends)
            elif begins < current[1]:  # overlapping (DST bent a day): one stretch; touching ones stay two
                current = (current[0], max(current[1], ends))
            else:
                yield current
                current = (begins, ends)
        if current is not None and (done or current[1] <= horizon):
            yield current
            current = None
        if done:
            return


def business_time_between(calendar: BusinessCalendar, start: datetime, end: datetime) -> timedelta:
    """How much of [start, end) is business time; negative (the same amount) when end comes before start."""
    start, end = _aware(start, "start"), _aware(end, "end")
    if end < start:
        return -business_time_between(calendar, end, start)
    total = timedelta(0)
    for begins, ends in business_segments(calendar, start, until=end):
        if begins >= end:
            break
        overlap = min(ends, end) - max(begins, start)
        if overlap > timedelta(0):
            total += overlap
    return total


def business_minutes_between(calendar: BusinessCalendar, start: datetime, end: datetime) -> int:
    """Whole business minutes in [start, end) (rounded toward zero; negative when end comes before start)."""
    elapsed = business_time_between(calendar, start, end)
    minutes = abs(elapsed) // _MINUTE
    return -minutes if elapsed < timedelta(0) else minutes


def business_minutes_after(calendar: BusinessCalendar, start: datetime, minutes: int) -> datetime | None:
    """The earliest instant (UTC) by which `minutes` of business time have passed since `start`; `start`
    itself for 0; None when that is more than HORIZON after `start`."""
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 0:
        raise ValueError("minutes must be a whole number, 0 or more")
    return business_time_after(calendar, start, timedelta(minutes=minutes))


def business_time_after(calendar: BusinessCalendar, start: datetime, amount: timedelta) -> datetime | None:
    """business_minutes_after for any amount of time (an SLA clock keeps what it spent to the microsecond)."""
    start = _aware(start, "start")
    if amount < timedelta(0):
        raise ValueError("amount must not be negative")
    remaining = amount
    if not remaining:
        return start
    for begins, ends in business_segments(calendar, start, until=start + HORIZON):
        if ends <= start:
            continue
        begins = max(begins, start)
        if ends - begins >= remaining:
            found = begins + remaining
            return found if found <= start + HORIZON else None
        remaining -= ends - begins
    return None
