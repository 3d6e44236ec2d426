"""Rate limits with django-ratelimit in the shared cache (Redis in production).

`count_request` counts one request against a key and raises RateLimited past
the limit; the state it returns feeds the rate-limit response headers.
"""

import contextlib
import functools
import ipaddress
import logging
import math
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
from redis.exceptions import RedisError

from foundation.exceptions import RateLimited

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


# What a cache outage raises (a Redis server down or unreachable): the only errors a limiter may fail open on.
CACHE_ERRORS = (RedisError, OSError)


def client_ip(request) -> str:
    """The client's own address: the header the proxy sets (CLIENT_IP_META_KEY), believed only when the
    peer is one of TRUSTED_PROXIES (anyone else reaching the port could write any address there), else
    the socket's address. A missing or malformed header falls back to the socket address, never to none.

    Of a list (X-Forwarded-For) the right-most address that is not itself a trusted proxy: the one
    the last trusted proxy appended; what the client wrote to the left of it is ignored."""
    peer = request.META.get("REMOTE_ADDR") or ""
    meta_key = settings.RATELIMIT_IP_META_KEY
    if meta_key == "REMOTE_ADDR" or not _is_trusted_proxy(peer):
        return _canonical(peer) or "unknown"
    hops = [hop.strip() for hop in request.META.get(meta_key, "").split(",")]
    for hop in reversed(hops):
        address = _canonical(hop)
        if address is None:
            break
        if not _is_trusted_proxy(address):
            return address
    logger.warning("client address header %s missing or malformed; using the socket address", meta_key)
    return _canonical(peer) or "unknown"


def client_address(group, request) -> str:
    """The key of per-address limits: the client's IPv4 address, or the /64 of an IPv6 one (a single
    subscriber usually holds a whole /64, so counting its addresses one by one would be no limit)."""
    address = client_ip(request)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return address


def _canonical(text: str) -> str | None:
    """An address in one spelling (an IPv4-mapped IPv6 address is the IPv4 one), or None."""
    try:
        ip = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


def _is_trusted_proxy(address: str) -> bool:
    canonical = _canonical(address)
    if canonical is None:
        return False
    ip = ipaddress.ip_address(canonical)
    return any(ip in network for network in trusted_proxy_networks(tuple(settings.TRUSTED_PROXIES)))


@functools.lru_cache(maxsize=8)
def trusted_proxy_networks(entries: tuple[str, ...]) -> tuple:
    """TRUSTED_PROXIES parsed (addresses or CIDRs); a malformed entry raises ValueError."""
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())


def _usage(request, *, group: str, rate: str, value: str, increment: bool) -> dict | None:
    """django-ratelimit's get_usage; on Redis an increment is one round trip instead of three
    (its add, then the cache's exists and incr), with the very same keys and windows."""
    cache = caches[settings.RATELIMIT_USE_CACHE]
    if not increment or not isinstance(cache, RedisCache) or not getattr(settings, "RATELIMIT_ENABLE", True):
        return get_usage(request, group=group, key=lambda _group, _request: value, rate=rate, increment=increment)
    # Private django-ratelimit API: test_the_one_round_trip_count_is_django_ratelimits_count
    limit, period = _split_rate(rate)
    window = _get_window(value, period)
    cache_key = cache.make_and_validate_key(_make_cache_key(group, window, rate, value, ALL))
    # Private Django API: test_the_one_round_trip_count_is_django_ratelimits_count
    pipeline = cache._cache.get_client(cache_key, write=True).pipeline(transaction=False)
    pipeline.set(cache_key, 0, ex=period + EXPIRATION_FUDGE, nx=True)
    pipeline.incr(cache_key)
    _created, count = pipeline.execute()
    # The window's clock, as get_usage reads it (django-ratelimit's module clock).
    # Private django-ratelimit API: test_the_one_round_trip_count_is_django_ratelimits_count
    time_left = window - int(ratelimit_core.time.time())
    return {"count": count, "limit": limit, "should_limit": count > limit, "time_left": time_left}


def count_request(
    request, *, group: str, rate: str, key: Callable, policy: str, fail_open: bool | None = None, increment=True
) -> RateLimitState | None:
    """Counts one request against `key`'s limit and raises RateLimited past it (with increment=False,
    only checks whether the limit is already reached).

    Only a cache outage can let a request through uncounted, and only when the limiter fails
    open (`fail_open`, by default RATELIMIT_FAIL_OPEN); then this returns None."""
    fail_open = settings.RATELIMIT_FAIL_OPEN if fail_open is None else fail_open
    value = key(group, request)
    try:
        usage = _usage(request, group=group, rate=rate, value=value, increment=increment)
    except CACHE_ERRORS:
        logger.warning("rate-limit cache unavailable (%s; fail open: %s)", group, fail_open, exc_info=True)
        if fail_open:
            return None
        raise RateLimited(headers={"Retry-After": "60"}, limit=policy)
    if usage is None or usage.get("count") is None:
        return None
    state = RateLimitState(
        policy=policy,
        limit=usage["limit"],
        remaining=max(usage["limit"] - usage["count"], 0),
        reset_in=int(usage["time_left"]),
        window=window_seconds(rate),
    )
    limited = usage["should_limit"] if increment else usage["count"] >= usage["limit"]
    if limited:
        raise RateLimited(headers={**state.headers(), "Retry-After": str(max(state.reset_in, 1))}, limit=policy)
    return state


# --- requests in flight per organization ---------------------------------------------------------

CONCURRENCY_POLICY = "simultaneas"
CONCURRENCY_DETAIL = "Muitas requisições simultâneas desta organização; tente novamente em instantes."


def in_flight_acquire(organization_id) -> str | None:
    """Count one more request of the organization in flight; past its share it is a 429 at once, so one
    organization's burst never holds every web process nor every core (the others' requests would queue
    behind it). Its share is PARTNER_MAX_CONCURRENT_REQUESTS while it is the only organization calling or
    while more than one core is free, and an even part of PARTNER_CONCURRENT_REQUESTS (at least 1) for the
    last core while others call too (docs/decisions.md, "Fair at the API too"). Returns the counter's key,
    for in_flight_release; None when nothing was counted (no limit, or the cache is down: a limiter fails
    open)."""
    limit = settings.PARTNER_MAX_CONCURRENT_REQUESTS
    if not limit:
        return None
    cache = caches[settings.RATELIMIT_USE_CACHE]
    key = f"hd:em-voo:{organization_id}"
    try:
        in_flight = _in_flight_add(cache, key, 1, calling=str(organization_id))
    except CACHE_ERRORS:
        logger.warning("in-flight requests not counted: the cache did not answer", exc_info=True)
        return None
    if in_flight.count > in_flight_share(limit, calling=in_flight.callers, tier_in_flight=in_flight.total):
        in_flight_release(key)
        raise RateLimited(limit=CONCURRENCY_POLICY, detail=CONCURRENCY_DETAIL, headers={"Retry-After": "1"})
    return key


def in_flight_share(limit: int, *, calling: int, tier_in_flight: int) -> int:
    """An organization's requests in flight at once, while `calling` organizations made a request lately and
    the tier runs `tier_in_flight` partner requests (this one included). The cores before the last are
    anyone's; the last one, and any past it, only an organization within its even part takes: a burst
    that filled every core would slow the next organization's request however fair the rest
    (docs/decisions.md, "Fair at the API too")."""
    capacity = settings.PARTNER_CONCURRENT_REQUESTS
    if calling <= 1 or tier_in_flight < capacity:
        return limit
    return max(1, min(limit, capacity // calling))


def in_flight_release(key: str | None) -> None:
    if key is None:
        return
    with contextlib.suppress(CACHE_ERRORS):
        _in_flight_add(caches[settings.RATELIMIT_USE_CACHE], key, -1)


# The partner requests in flight in the whole web tier, and the organizations that made a partner request in
# the last IN_FLIGHT_CALLING_SECONDS (a sorted set, each scored with the time of its last request).
TIER_KEY = "hd:em-voo:total"
CALLING_KEY = "hd:em-voo:chamando"


@dataclass(frozen=True)
class InFlight:
    count: int  # the organization's requests in flight
    total: int  # the tier's partner requests in flight
    callers: int  # organizations calling lately (0 on a release)


# One round trip, on the Redis server's own clock (TIME): the web machines' clocks never decide who is
# calling. Counters are made when missing with a lifetime that outlives any request, so a killed process's
# count goes with them (not a steady stream of requests: under one the key expires and starts again at 0,
# and the requests then in flight give back places it no longer counts: never below 0).
_IN_FLIGHT_SCRIPT = """
local delta, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local function add(key)
    redis.call('SET', key, 0, 'EX', ttl, 'NX')
    local value = redis.call('INCRBY', key, delta)
    if value < 0 then
        redis.call('SET', key, 0, 'KEEPTTL')
        value = 0
    end
    return value
end
local count, total = add(KEYS[1]), add(KEYS[2])
if ARGV[3] == '' then
    return {count, total, 0}
end
local window = tonumber(ARGV[4])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
redis.call('ZADD', KEYS[3], now, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window)
local callers = redis.call('ZCARD', KEYS[3])
redis.call('EXPIRE', KEYS[3], math.ceil(window) + 1)
return {count, total, callers}
"""
_in_flight_script = None


def _in_flight_add(cache, key: str, delta: int, *, calling: str | None = None) -> InFlight:
    """The organization's counter and the tier's moved by `delta`, and, with `calling` (an acquire), that
    organization marked as calling and the organizations calling counted."""
    global _in_flight_script
    ttl = settings.IN_FLIGHT_TTL_SECONDS
    window = settings.IN_FLIGHT_CALLING_SECONDS
    if isinstance(cache, RedisCache):
        key = cache.make_and_validate_key(key)
        # Private Django API: test_the_in_flight_count_on_redis_is_one_round_trip_each_way
        client = cache._cache.get_client(key, write=True)
        if _in_flight_script is None:
            _in_flight_script = client.register_script(_IN_FLIGHT_SCRIPT)
        keys = [key, cache.make_and_validate_key(TIER_KEY), cache.make_and_validate_key(CALLING_KEY)]
        count, total, callers = _in_flight_script(keys=keys, args=[delta, ttl, calling or "", window], client=client)
        return InFlight(count=count, total=total, callers=callers)
    count = _local_add(cache, key, delta, ttl)
    total = _local_add(cache, TIER_KEY, delta, ttl)
    if calling is None:
        return InFlight(count=count, total=total, callers=0)
    # One process's threads (the embedded set-up): a read and a write, where a lost update only forgets one
    # organization's latest request for a moment.
    now = time.time()
    callers = {other: at for other, at in (cache.get(CALLING_KEY) or {}).items() if at > now - window}
    callers[calling] = now
    cache.set(CALLING_KEY, callers, timeout=math.ceil(window) + 1)
    return InFlight(count=count, total=total, callers=len(callers))


def _local_add(cache, key: str, delta: int, ttl: int) -> int:
    cache.add(key, 0, timeout=ttl)
    try:
        value = cache.incr(key, delta)
    except ValueError:  # expired between the two calls
        cache.add(key, max(delta, 0), timeout=ttl)
        return max(delta, 0)
    if value < 0:  # given back after the key expired and started again at 0 (see _IN_FLIGHT_SCRIPT)
        cache.incr(key, -value)
        return 0
    return value
