"""One organization's burst never holds every web process nor every core: past its share of requests in
flight (PARTNER_MAX_CONCURRENT_REQUESTS alone or while a core is free, an even part of
PARTNER_CONCURRENT_REQUESTS once the tier is full and others call too), its next one is a 429 at once; other
organizations are not counted with it."""

import time

import pytest
from django.core.cache import caches

from foundation.exceptions import RateLimited
from foundation.ratelimit import (
    CALLING_KEY,
    CONCURRENCY_DETAIL,
    TIER_KEY,
    in_flight_acquire,
    in_flight_release,
    in_flight_share,
)
from tests.factories import make_ticket
from tests.metrics import scrape

TICKETS = "/api/v1/tickets"
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


@pytest.fixture
def two_in_flight(settings, organization):
    """Two of the organization's requests running (as other web processes would hold them)."""
    settings.PARTNER_MAX_CONCURRENT_REQUESTS = 2
    held = [in_flight_acquire(organization.pk) for _ in range(2)]
    yield held
    for key in held:
        in_flight_release(key)


def test_past_the_limit_a_request_is_a_429_in_the_envelope_at_once(partner, two_in_flight):
    before = scrape()

    response = partner.get(TICKETS)

    assert response.status_code == 429
    assert response.json() == {
        "success": False,
        "message": "Limite de requisições excedido.",
        "status": 429,
        "data": None,
        "errors": {"field": "rate_limit", "message": CONCURRENCY_DETAIL},
    }
    assert response["Retry-After"] == "1"
    assert scrape().since(before, "helpdesk_rate_limit_rejections_total", limit="simultaneas") == 1


def test_other_organizations_are_not_counted_with_it(other_partner, two_in_flight):
    assert other_partner.get(TICKETS).status_code == 200


def test_each_request_gives_its_place_back_whatever_it_answered(partner, organization, two_in_flight):
    in_flight_release(two_in_flight.pop())
    ticket = make_ticket(organization)

    answers = [
        partner.get(TICKETS).status_code,
        partner.get(f"{TICKETS}/00000000-0000-0000-0000-000000000000").status_code,  # a 404
        partner.post(TICKETS, {"assunto": ""}, format="json").status_code,  # a 422
        partner.get(f"{TICKETS}/{ticket.pk}").status_code,
    ]

    assert answers == [200, 404, 422, 200]


def test_no_limit_when_set_to_zero(partner, organization, settings):
    settings.PARTNER_MAX_CONCURRENT_REQUESTS = 0
    assert in_flight_acquire(organization.pk) is None
    assert partner.get(TICKETS).status_code == 200


# --- an even share while others call ---------------------------------------------------------------------


@pytest.fixture
def two_cores(settings):
    """Three requests in flight for an organization alone, two cores to share; nobody called before and
    nothing runs."""
    settings.PARTNER_MAX_CONCURRENT_REQUESTS = 3
    settings.PARTNER_CONCURRENT_REQUESTS = 2
    caches[settings.RATELIMIT_USE_CACHE].delete_many([CALLING_KEY, TIER_KEY])
    held: list = []
    yield held
    for key in held:
        in_flight_release(key)


def test_an_organization_calling_alone_has_its_whole_limit(organization, two_cores):
    two_cores += [in_flight_acquire(organization.pk) for _ in range(3)]

    with pytest.raises(RateLimited):
        in_flight_acquire(organization.pk)


def test_once_the_cores_are_full_each_calling_organization_has_an_even_part(
    partner, other_partner, organization, other_organization, two_cores
):
    two_cores.append(in_flight_acquire(other_organization.pk))  # another organization's request running
    two_cores.append(in_flight_acquire(organization.pk))  # both cores busy

    refused = partner.get(TICKETS)

    assert refused.status_code == 429
    assert refused.json()["errors"] == {"field": "rate_limit", "message": CONCURRENCY_DETAIL}
    assert other_partner.get(TICKETS).status_code == 429  # it holds its part too
    in_flight_release(two_cores.pop(0))
    assert other_partner.get(TICKETS).status_code == 200  # its own part is free again


def test_cores_beyond_the_last_free_one_are_anyones_while_others_call(
    partner, other_partner, organization, settings, two_cores
):
    settings.PARTNER_CONCURRENT_REQUESTS = 3  # an even part: one each
    assert other_partner.get(TICKETS).status_code == 200  # it called a moment ago, and is done
    two_cores.append(in_flight_acquire(organization.pk))

    assert partner.get(TICKETS).status_code == 200  # its second request has the second core; one is left
    two_cores.append(in_flight_acquire(organization.pk))  # the second, held
    assert partner.get(TICKETS).status_code == 429  # the last core is kept for an organization within its part


def test_an_organization_that_stopped_calling_gives_its_part_back(
    other_partner, organization, other_organization, settings, two_cores
):
    settings.IN_FLIGHT_CALLING_SECONDS = 0.2
    assert other_partner.get(TICKETS).status_code == 200
    time.sleep(0.3)

    two_cores += [in_flight_acquire(organization.pk) for _ in range(3)]  # past the two cores

    assert all(two_cores)


def test_on_redis_who_is_calling_is_on_the_servers_clock_not_the_machines(
    redis_only, organization, other_organization, settings, monkeypatch, two_cores
):
    """A web machine whose clock is an hour ahead would keep its callers 'calling' for an hour."""
    settings.IN_FLIGHT_CALLING_SECONDS = 0.2
    monkeypatch.setattr("foundation.ratelimit.time.time", lambda: 4_000_000_000.0)
    in_flight_release(in_flight_acquire(other_organization.pk))
    time.sleep(0.3)

    two_cores += [in_flight_acquire(organization.pk) for _ in range(3)]

    assert all(two_cores)


@pytest.mark.parametrize(
    ("cores", "calling", "tier", "share"),
    [(2, 1, 3, 3), (3, 2, 2, 3), (2, 2, 2, 1), (2, 5, 6, 1), (8, 3, 8, 2), (100, 2, 100, 3)],
    ids=["alone", "more-than-one-core-free", "the-last-core", "more-than-cores", "even-part", "never-past-the-limit"],
)
def test_the_share_is_an_even_part_of_the_cores_between_one_and_the_limit(settings, cores, calling, tier, share):
    settings.PARTNER_CONCURRENT_REQUESTS = cores

    assert in_flight_share(3, calling=calling, tier_in_flight=tier) == share
