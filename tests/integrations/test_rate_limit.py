"""Per-credential rate limit of the partner API: headers on every response, 429 past the limit."""

import re
import time
import uuid

import pytest
from rest_framework.test import APIClient

from tests.assertions import bearer_client
from tests.contract import TICKET_BODY, error_envelope
from tests.factories import make_key, make_ticket
from tickets.models import Contact, Reply, Ticket

TICKETS = "/api/v1/tickets"
RATE_LIMITED = error_envelope(
    429, "Limite de requisições excedido.", "rate_limit", "Limite excedido, tente novamente mais tarde."
)
RATELIMIT_HEADER = re.compile(r'^"parceiro";r=(\d+);t=(\d+)$')

pytestmark = pytest.mark.usefixtures("frozen_rate_limit_clock")


@pytest.fixture(autouse=True)
def three_a_minute(settings):
    settings.PARTNER_RATE_LIMIT = "3/m"


def seconds_to_reset(response) -> int:
    match = RATELIMIT_HEADER.match(response["RateLimit"])
    assert match, response["RateLimit"]
    return int(match.group(2))


def assert_rate_limit_headers(response, *, remaining: int):
    reset_in = seconds_to_reset(response)
    assert 0 <= reset_in <= 60
    assert response["X-RateLimit-Limit"] == "3"
    assert response["X-RateLimit-Remaining"] == str(remaining)
    assert abs(int(response["X-RateLimit-Reset"]) - (int(time.time()) + reset_in)) <= 2
    assert response["RateLimit-Policy"] == '"parceiro";q=3;w=60'
    assert response["RateLimit"] == f'"parceiro";r={remaining};t={reset_in}'


def test_successful_response_carries_the_rate_limit_headers(partner):
    response = partner.get(TICKETS)

    assert response.status_code == 200
    assert_rate_limit_headers(response, remaining=2)


def test_remaining_counts_down_with_each_request(partner):
    responses = [partner.get(TICKETS) for _ in range(3)]

    assert [r.status_code for r in responses] == [200, 200, 200]
    assert [r["X-RateLimit-Remaining"] for r in responses] == ["2", "1", "0"]
    assert [RATELIMIT_HEADER.match(r["RateLimit"]).group(1) for r in responses] == ["2", "1", "0"]
    assert len({r["X-RateLimit-Reset"] for r in responses}) <= 2  # same window, up to a second of drift


@pytest.mark.parametrize(
    ("method", "path", "body", "content_type", "status"),
    [
        ("post", TICKETS, TICKET_BODY, None, 201),
        ("get", f"{TICKETS}/{uuid.uuid4()}", None, None, 404),
        ("post", f"{TICKETS}/{uuid.uuid4()}/respostas", {"mensagem": "Oi"}, None, 404),
        ("post", TICKETS, {}, None, 422),
        ("get", TICKETS + "?por_pagina=0", None, None, 422),
        ("post", TICKETS, "{nope", "application/json", 400),
        ("post", TICKETS, "a=b", "application/x-www-form-urlencoded", 415),
        ("delete", TICKETS, None, None, 405),
        ("get", "/api/v1/atendentes", None, None, 200),
    ],
    ids=["201", "404-ticket", "404-reply", "422-body", "422-query", "400", "415", "405", "200-atendentes"],
)
def test_every_partner_response_carries_the_rate_limit_headers(partner, method, path, body, content_type, status):
    kwargs = {"content_type": content_type} if content_type else {"format": "json"}
    response = getattr(partner, method)(path, body, **kwargs) if body is not None else getattr(partner, method)(path)

    assert response.status_code == status
    assert_rate_limit_headers(response, remaining=2)


def test_fourth_request_in_the_window_is_429(partner):
    for _ in range(3):
        assert partner.get(TICKETS).status_code == 200

    response = partner.get(TICKETS)

    assert response.status_code == 429
    assert response.json() == RATE_LIMITED
    assert response["Content-Type"] == "application/json"


def test_429_carries_retry_after_and_the_rate_limit_headers(partner):
    for _ in range(3):
        partner.get(TICKETS)

    response = partner.get(TICKETS)

    assert response.status_code == 429
    assert_rate_limit_headers(response, remaining=0)
    assert response["Retry-After"] == str(max(seconds_to_reset(response), 1))
    assert 1 <= int(response["Retry-After"]) <= 60


def test_requests_stay_limited_until_the_window_ends(partner, frozen_rate_limit_clock):
    for _ in range(3):
        partner.get(TICKETS)
    limited = partner.get(TICKETS)
    reset_in = seconds_to_reset(limited)

    frozen_rate_limit_clock.value += reset_in
    still_limited = partner.get(TICKETS)
    frozen_rate_limit_clock.value += 1
    next_window = partner.get(TICKETS)

    assert still_limited.status_code == 429
    assert next_window.status_code == 200
    assert next_window["X-RateLimit-Remaining"] == "2"


def test_limit_is_per_credential_not_per_organization(partner, organization):
    for _ in range(4):
        partner.get(TICKETS)
    second_key = bearer_client(make_key(organization, name="Segunda"))

    response = second_key.get(TICKETS)

    assert response.status_code == 200
    assert_rate_limit_headers(response, remaining=2)
    assert partner.get(TICKETS).status_code == 429


def test_limit_of_one_organization_does_not_affect_another(partner, other_partner):
    for _ in range(4):
        partner.get(TICKETS)

    response = other_partner.get(TICKETS)

    assert response.status_code == 200
    assert response["X-RateLimit-Remaining"] == "2"


def test_rate_limited_post_creates_nothing(partner):
    for _ in range(3):
        partner.get(TICKETS)

    response = partner.post(TICKETS, TICKET_BODY, format="json")

    assert response.status_code == 429
    assert response.json() == RATE_LIMITED
    assert Ticket.objects.count() == 0
    assert Contact.objects.count() == 0


def test_rate_limited_reply_creates_nothing(partner, organization):
    ticket = make_ticket(organization)
    for _ in range(3):
        partner.get(TICKETS)

    response = partner.post(f"{TICKETS}/{ticket.pk}/respostas", {"mensagem": "Oi"}, format="json")

    assert response.status_code == 429
    assert response.json() == RATE_LIMITED
    assert Reply.objects.count() == 0


def test_unauthenticated_requests_do_not_spend_a_credentials_budget(partner, api_key):
    stranger = bearer_client(api_key[:-1] + ("A" if api_key[-1] != "A" else "B"))
    for _ in range(5):
        assert stranger.get(TICKETS).status_code == 401

    response = partner.get(TICKETS)

    assert response.status_code == 200
    assert response["X-RateLimit-Remaining"] == "2"


def test_401_carries_no_rate_limit_headers(db):
    response = APIClient().get(TICKETS)

    assert response.status_code == 401
    assert "X-RateLimit-Limit" not in response
    assert "RateLimit" not in response
