"""Reads of business hours and SLA policies: an organization's calendar and its policy set, each loaded once and
cached (SLA deadlines will ask for both on every ticket write and answer), and the stored rows they come from."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from django.core.cache import cache
from django.db import transaction

from sla.calendar import DEFAULT_CALENDAR, BusinessCalendar, Holiday, Interval
from sla.models import BusinessHours, SlaPolicies
from sla.policies import NO_POLICIES, Policy, PolicySet

logger = logging.getLogger(__name__)

CALENDAR_CACHE_SECONDS = 300
POLICIES_CACHE_SECONDS = 300


def _cache_key(organization_id) -> str:
    return f"sla:business-hours:{organization_id}"


def _policies_cache_key(organization_id) -> str:
    return f"sla:policies:{organization_id}"


def _levels_cache_key(organization_id) -> str:
    return f"sla:levels:{organization_id}"


def _cached(key: str, load: Callable, seconds: int):
    """The cached value, or `load()` kept for next time; the database answers when the cache is down."""
    try:
        cached = cache.get(key)
    except Exception:  # the cache is an accelerator
        logger.warning("cache unavailable for %s", key, exc_info=True)
        cached = None
    if cached is not None:
        return cached
    value = load()
    try:
        cache.set(key, value, seconds)
    except Exception:
        logger.warning("cache unavailable for %s", key, exc_info=True)
    return value


def _forget(key: str) -> None:
    """Now, and again once the change commits. A read that loaded the old row before the commit and stores it after
    the second drop keeps the old value until it expires (the cache's seconds): writes that must see the last
    value read `fresh`."""

    def forget() -> None:
        try:
            cache.delete(key)
        except Exception:
            logger.warning("could not drop the cached %s", key, exc_info=True)

    forget()
    transaction.on_commit(forget)


def calendar_of_row(row: BusinessHours | None) -> BusinessCalendar:
    """The calendar a stored row holds; the default (24x7, America/Sao_Paulo) without one."""
    if row is None:
        return DEFAULT_CALENDAR
    return calendar_of_data({"time_zone": row.time_zone, "intervals": row.intervals, "holidays": row.holidays})


def calendar_of_data(data: dict) -> BusinessCalendar:
    """A calendar kept as calendar_data wrote it (a row's columns, a pending re-target's previous calendar)."""
    return BusinessCalendar(
        time_zone=data["time_zone"],
        intervals=tuple(Interval(i["weekday"], i["start"], i["end"]) for i in data["intervals"]),
        holidays=tuple(Holiday(date.fromisoformat(h["date"]), h["name"]) for h in data["holidays"]),
    )


def calendar_data(calendar: BusinessCalendar) -> dict:
    """A calendar in the calendar's own terms, for JSON: minutes after local midnight, ISO dates."""
    return {
        "time_zone": calendar.time_zone,
        "intervals": [{"weekday": i.weekday, "start": i.start, "end": i.end} for i in calendar.intervals],
        "holidays": [{"date": h.date.isoformat(), "name": h.name} for h in calendar.holidays],
    }


def business_hours_row(organization_id) -> BusinessHours | None:
    return BusinessHours.objects.filter(organization_id=organization_id).first()


def business_calendar(organization_id, *, fresh: bool = False) -> BusinessCalendar:
    """The organization's calendar. From the cache (forgotten by every write, business_calendar_forget) unless
    `fresh`; the database answers when the cache is down."""
    if fresh:
        return calendar_of_row(business_hours_row(organization_id))
    return _cached(
        _cache_key(organization_id),
        lambda: calendar_of_row(business_hours_row(organization_id)),
        CALENDAR_CACHE_SECONDS,
    )


def business_calendar_forget(organization_id) -> None:
    _forget(_cache_key(organization_id))
    _forget(_levels_cache_key(organization_id))


def policies_of_row(row: SlaPolicies | None) -> PolicySet:
    """The policy set a stored row holds (kept in order by sla.services); none without one."""
    if row is None:
        return NO_POLICIES
    return PolicySet(tuple(Policy(**policy) for policy in row.policies))


def sla_policies_row(organization_id) -> SlaPolicies | None:
    return SlaPolicies.objects.filter(organization_id=organization_id).first()


def sla_policies(organization_id, *, fresh: bool = False) -> PolicySet:
    """The organization's SLA policies (`.policy_for(priority)`). From the cache (forgotten by every write,
    sla_policies_forget) unless `fresh`; the database answers when the cache is down."""
    if fresh:
        return policies_of_row(sla_policies_row(organization_id))
    return _cached(
        _policies_cache_key(organization_id),
        lambda: policies_of_row(sla_policies_row(organization_id)),
        POLICIES_CACHE_SECONDS,
    )


def sla_policies_forget(organization_id) -> None:
    _forget(_policies_cache_key(organization_id))
    _forget(_levels_cache_key(organization_id))


@dataclass(frozen=True)
class ServiceLevels:
    """What an SLA clock counts with: the organization's calendar and policies, and `version`, which changes with
    every write of either (a ticket's clock records the version it was last targeted with)."""

    calendar: BusinessCalendar
    policies: PolicySet
    version: str


def _version(row) -> str:
    return row.updated_at.isoformat() if row is not None else "-"


def _service_levels_load(organization_id) -> ServiceLevels:
    calendar_row, policies_row = business_hours_row(organization_id), sla_policies_row(organization_id)
    return ServiceLevels(
        calendar=calendar_of_row(calendar_row),
        policies=policies_of_row(policies_row),
        version=f"{_version(calendar_row)}|{_version(policies_row)}",
    )


def service_levels(organization_id, *, fresh: bool = False) -> ServiceLevels:
    """Both, in one cache read (every ticket write that moves a clock asks): no statement once warm."""
    if fresh:
        return _service_levels_load(organization_id)
    return _cached(
        _levels_cache_key(organization_id), lambda: _service_levels_load(organization_id), POLICIES_CACHE_SECONDS
    )
