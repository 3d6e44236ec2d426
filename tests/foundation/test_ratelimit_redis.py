"""On Redis the limiter counts in one round trip, in the very keys and windows django-ratelimit uses."""

from types import SimpleNamespace

import pytest
from django_ratelimit.core import get_usage

from foundation.exceptions import RateLimited
from foundation.ratelimit import count_request, in_flight_acquire, in_flight_release


def _by_client(group, request) -> str:
    return request.client


@pytest.fixture
def round_trips(redis_only, monkeypatch) -> list:
    """One entry per pipeline the limiter opens on the cache's Redis client, and per command it sends alone
    (a script's EVALSHA)."""
    calls: list = []
    client_of = redis_only._cache.get_client

    def counting_client(*args, **kwargs):
        client = client_of(*args, **kwargs)
        pipeline_of, command_of = client.pipeline, client.execute_command

        def pipeline(*p_args, **p_kwargs):
            calls.append("pipeline")
            return pipeline_of(*p_args, **p_kwargs)

        def execute_command(*c_args, **c_kwargs):
            calls.append(c_args[0])
            return command_of(*c_args, **c_kwargs)

        client.pipeline, client.execute_command = pipeline, execute_command
        return client

    monkeypatch.setattr(redis_only._cache, "get_client", counting_client)
    return calls


def test_the_one_round_trip_count_is_django_ratelimits_count(round_trips):
    request = SimpleNamespace(client="cliente-a")

    states = [count_request(request, group="teste", rate="10/m", key=_by_client, policy="p") for _ in range(3)]

    assert [state.remaining for state in states] == [9, 8, 7]
    assert len(round_trips) == 3
    usage = get_usage(request, group="teste", key=_by_client, rate="10/m", increment=False)
    assert usage["count"] == 3


def test_past_the_limit_on_redis_is_429_with_the_headers(redis_only):
    request = SimpleNamespace(client="cliente-b")
    for _ in range(2):
        count_request(request, group="teste", rate="2/m", key=_by_client, policy="p")

    with pytest.raises(RateLimited) as refused:
        count_request(request, group="teste", rate="2/m", key=_by_client, policy="p")

    assert refused.value.headers["X-RateLimit-Remaining"] == "0"
    assert int(refused.value.headers["Retry-After"]) >= 1


def test_the_in_flight_count_on_redis_is_one_round_trip_each_way(round_trips, settings):
    settings.PARTNER_MAX_CONCURRENT_REQUESTS = 2
    in_flight_release(in_flight_acquire("org-a"))  # the script known to the server (once per process)
    round_trips.clear()
    held = [in_flight_acquire("org-a") for _ in range(2)]

    with pytest.raises(RateLimited):
        in_flight_acquire("org-a")
    for key in held:
        in_flight_release(key)

    assert held == ["hd:em-voo:org-a"] * 2
    assert round_trips == ["EVALSHA"] * (3 + 1 + 2)  # three counts, the refused one given back, two releases
    assert in_flight_acquire("org-a") == "hd:em-voo:org-a"  # every place was given back
