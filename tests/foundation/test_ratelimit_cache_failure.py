"""A cache outage follows RATELIMIT_FAIL_OPEN instead of turning every request into a 500."""

import pytest
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache


@pytest.fixture
def broken_cache(monkeypatch):
    def down(*args, **kwargs):
        raise ConnectionError("cache down")

    monkeypatch.setattr(cache, "add", down)
    monkeypatch.setattr(cache, "incr", down)
    monkeypatch.setattr(cache, "get", down)
    if isinstance(caches["default"], RedisCache):  # the limiter's one-round-trip path talks to the client
        monkeypatch.setattr(caches["default"]._cache, "get_client", down)
    yield
    monkeypatch.undo()  # the cache is back before the suite's own teardown clears it


def test_cache_down_fails_open_by_default(partner, broken_cache):
    response = partner.get("/api/v1/tickets")

    assert response.status_code == 200
    assert "X-RateLimit-Limit" not in response


def test_cache_down_refuses_when_configured_to_fail_closed(partner, broken_cache, settings):
    settings.RATELIMIT_FAIL_OPEN = False

    response = partner.get("/api/v1/tickets")

    assert response.status_code == 429
    assert response.json()["errors"]["field"] == "rate_limit"
