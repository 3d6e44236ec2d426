"""Persistent PostgreSQL connections are health-checked before reuse, except right after a request used them."""

import pytest
from django.db import connection, connections


@pytest.fixture
def pings(postgres_only, monkeypatch) -> list:
    calls: list = []
    real = connection.is_usable

    def counting_is_usable():
        calls.append(True)
        return real()

    monkeypatch.setattr(connection, "is_usable", counting_is_usable)
    return calls


def _request() -> None:
    """What Django does around a request: close_old_connections at both ends, queries between."""
    connection.close_if_unusable_or_obsolete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 2")
    connection.close_if_unusable_or_obsolete()


def test_health_checks_are_on_with_persistent_connections():
    if connection.vendor == "postgresql":
        assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True
        assert connection.settings_dict["CONN_MAX_AGE"] > 0
        assert type(connections["default"]).__module__ == "foundation.db.postgresql.base"


def test_a_connection_idle_longer_than_the_grace_is_pinged_before_reuse(pings, settings):
    settings.DB_HEALTH_CHECK_GRACE = 0
    _request()
    pings.clear()

    _request()

    assert len(pings) == 1


def test_a_connection_a_request_used_a_moment_ago_is_not_pinged(pings, settings):
    settings.DB_HEALTH_CHECK_GRACE = 60
    _request()
    _request()
    pings.clear()

    _request()
    _request()

    assert pings == []


def test_a_connection_that_had_an_error_is_pinged_at_once_whatever_the_grace(pings, settings):
    settings.DB_HEALTH_CHECK_GRACE = 60
    _request()
    connection.errors_occurred = True
    pings.clear()

    connection.close_if_unusable_or_obsolete()

    assert len(pings) == 1
