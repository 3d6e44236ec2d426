"""One organization's burst never holds every web process: past PARTNER_MAX_CONCURRENT_REQUESTS
requests in flight, its next one is a 429 at once; other organizations are not counted with it."""

import pytest

from foundation.ratelimit import CONCURRENCY_DETAIL, in_flight_acquire, in_flight_release
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
