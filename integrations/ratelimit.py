"""Per-credential rate limit of the partner API (django-ratelimit, shared cache)."""

import re
import time
from dataclasses import dataclass

from django.conf import settings
from django_ratelimit.core import get_usage

from helpdesk.exceptions import RateLimited

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE_RE = re.compile(r"^(\d+)/(\d*)([smhd])$")


@dataclass(frozen=True)
class RateLimitState:
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
            "RateLimit-Policy": f'"parceiro";q={self.limit};w={self.window}',
            "RateLimit": f'"parceiro";r={self.remaining};t={reset_in}',
        }


def window_seconds(rate: str) -> int:
    match = _RATE_RE.match(rate)
    if not match:
        raise ValueError(f"invalid rate {rate!r}")
    return int(match.group(2) or 1) * _UNITS[match.group(3)]


def _credential_key(group, request) -> str:
    return str(request.auth.pk)


def partner_rate_limit(request) -> RateLimitState | None:
    """Counts this request against its credential; raises RateLimited past the limit.

    Returns None when the cache is down and the limiter fails open.
    """
    rate = settings.PARTNER_RATE_LIMIT
    usage = get_usage(request, group="partner-api", key=_credential_key, rate=rate, increment=True)
    if usage is None or usage.get("count") is None:
        return None
    state = RateLimitState(
        limit=usage["limit"],
        remaining=max(usage["limit"] - usage["count"], 0),
        reset_in=int(usage["time_left"]),
        window=window_seconds(rate),
    )
    request.rate_limit_state = state
    if usage["should_limit"]:
        raise RateLimited(headers={"Retry-After": str(max(state.reset_in, 1))})
    return state
