"""Reads of business hours: an organization's calendar, loaded once and cached (SLA deadlines will ask for it on
every ticket write and answer), and the stored row it comes from."""

import logging
from datetime import date

from django.core.cache import cache
from django.db import transaction

from sla.calendar import DEFAULT_CALENDAR, BusinessCalendar, Holiday, Interval
from sla.models import BusinessHours

logger = logging.getLogger(__name__)

CALENDAR_CACHE_SECONDS = 300


def _cache_key(organization_id) -> str:
    return f"sla:business-hours:{organization_id}"


def calendar_of_row(row: BusinessHours | None) -> BusinessCalendar:
    """The calendar a stored row holds; the default (24x7, America/Sao_Paulo) without one."""
    if row is None:
        return DEFAULT_CALENDAR
    return BusinessCalendar(
        time_zone=row.time_zone,
        intervals=tuple(Interval(i["weekday"], i["start"], i["end"]) for i in row.intervals),
        holidays=tuple(Holiday(date.fromisoformat(h["date"]), h["name"]) for h in row.holidays),
    )


def business_hours_row(organization_id) -> BusinessHours | None:
    return BusinessHours.objects.filter(organization_id=organization_id).first()


def business_calendar(organization_id, *, fresh: bool = False) -> BusinessCalendar:
    """The organization's calendar. From the cache (forgotten by every write, business_calendar_forget) unless
    `fresh`; the database answers when the cache is down."""
    if fresh:
        return calendar_of_row(business_hours_row(organization_id))
    key = _cache_key(organization_id)
    try:
        cached = cache.get(key)
    except Exception:  # the cache is an accelerator
        logger.warning("cache unavailable for %s", key, exc_info=True)
        cached = None
    if cached is not None:
        return cached
    calendar = calendar_of_row(business_hours_row(organization_id))
    try:
        cache.set(key, calendar, CALENDAR_CACHE_SECONDS)
    except Exception:
        logger.warning("cache unavailable for %s", key, exc_info=True)
    return calendar


def business_calendar_forget(organization_id) -> None:
    """Now, and again once the change commits: a read racing with the change cannot keep the old calendar."""

    def forget() -> None:
        try:
            cache.delete(_cache_key(organization_id))
        except Exception:
            logger.warning("could not drop the cached business hours of %s", organization_id, exc_info=True)

    forget()
    transaction.on_commit(forget)
