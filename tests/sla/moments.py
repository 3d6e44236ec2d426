"""Instants of the SLA tests: November 2026 in São Paulo (UTC-3; Thursday the 26th, Friday the 27th, Monday the
30th), as the API writes them, and the wall clock the services read, set."""

from contextlib import contextmanager
from datetime import UTC, datetime
from unittest import mock
from zoneinfo import ZoneInfo

SAO_PAULO = ZoneInfo("America/Sao_Paulo")


def local(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=SAO_PAULO)


def z(instant: datetime) -> str:
    """The instant as the API writes it (UTC, `Z`, whole seconds here)."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextmanager
def wall_clock(instant: datetime):
    """django.utils.timezone.now() answers `instant` for the block (the services, auto_now fields)."""
    with mock.patch("django.utils.timezone.now", return_value=instant.astimezone(UTC)):
        yield
