"""Rate limits with django-ratelimit in the shared cache (Redis in production).

`count_request` counts one request against a key and raises RateLimited past
the limit; the state it returns feeds the rate-limit response headers.
"""

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django_ratelimit import ALL
from django_ratelimit import core as ratelimit_core
from django_ratelimit.core import EXPIRATION_FUDGE, _get_window, _make_cache_key, _split_rate, get_usage

from helpdesk.exceptions import RateLimited

logger = logging.getLogger(__name__)

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE_RE = re.compile(r"^(\d+)/(\d*)([smhd])$")


@dataclass(frozen=True)
class RateLimitState:
    policy: str
    limit: int
    remaining: int
    reset_in: int  # seconds until the window ends
    window: int

    def headers(self) -> dict[str, str]:
        reset_in = max(self.reset_in, 0)
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(int(time.time()) + reset_in),
            "RateLimit-Policy": f'"{self.policy}";q={self.limit};w={self.window}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={reset_in}',
        }


def window_seconds(rate: str) -> int:
    match = _RATE_RE.match(rate)
    if not match:
        raise ValueError(f"invalid rate {rate!r}")
    return int(match.group(2) or 1) * _UNITS[match.group(3)]


def _usage(request, *, group: str, rate: str, key: str | Callable) -> dict | None:
    """django-ratelimit's get_usage(increment=True); on Redis in one round trip instead of three
    (its add, then the cache's exists and incr), with the very same keys and windows."""
    cache = caches[settings.RATELIMIT_USE_CACHE]
    if not isinstance(cache, RedisCache) or not callable(key) or not getattr(settings, "RATELIMIT_ENABLE", True):
        return get_usage(request, group=group, key=key, rate=rate, increment=True)
    limit, period = _split_rate(rate)
    value = key(group, request)
    window = _get_window(value, period)
    cache_key = cache.make_and_validate_key(_make_cache_key(group, window, rate, value, ALL))
    pipeline = cache._cache.get_client(cache_key, write=True).pipeline(transaction=False)
    pipeline.set(cache_key, 0, ex=period + EXPIRATION_FUDGE, nx=True)
    pipeline.incr(cache_key)
    _created, count = pipeline.execute()
    # The window's clock, as get_usage reads it (django-ratelimit's module clock).
    time_left = window - int(ratelimit_core.time.time())
    return {"count": count, "limit": limit, "should_limit": count > limit, "time_left": time_left}


def count_request(request, *, group: str, rate: str, key: str | Callable, policy: str) -> RateLimitState | None:
    """Returns None when the cache is down and the limiter fails open."""
    try:
        usage = _usage(request, group=group, key=key, rate=rate)
    except Exception:
        # django-ratelimit fails open on a cache that answers None; Django's
        # Redis cache raises instead, so the same decision is made here.
        logger.warning("rate-limit cache unavailable (fail open: %s)", settings.RATELIMIT_FAIL_OPEN, exc_info=True)
        if settings.RATELIMIT_FAIL_OPEN:
            return None
        raise RateLimited()
    if usage is None or usage.get("count") is None:
        return None
    state = RateLimitState(
        policy=policy,
        limit=usage["limit"],
        remaining=max(usage["limit"] - usage["count"], 0),
        reset_in=int(usage["time_left"]),
        window=window_seconds(rate),
    )
    if usage["should_limit"]:
        raise RateLimited(headers={**state.headers(), "Retry-After": str(max(state.reset_in, 1))})
    return state
