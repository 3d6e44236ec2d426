"""Every request is counted by route pattern, method and status, and timed; 429s by the limit that refused."""

import uuid

import pytest
from django.test import Client
from rest_framework.test import APIClient

from foundation.metrics import instruments
from foundation.metrics.instruments import REQUEST_BUCKETS
from foundation.metrics.middleware import route_label
from tests.factories import PASSWORD, make_ticket
from tests.metrics import scrape

REQUESTS = "helpdesk_http_requests_total"
DURATION_COUNT = "helpdesk_http_request_duration_seconds_count"
REJECTIONS = "helpdesk_rate_limit_rejections_total"
DETAIL = "/api/v1/tickets/{id}"


def test_requests_are_counted_by_the_route_pattern_never_the_raw_path(partner, organization):
    ticket = make_ticket(organization)
    missing = uuid.uuid4()
    before = scrape()

    assert partner.get(f"/api/v1/tickets/{ticket.pk}").status_code == 200
    assert partner.get(f"/api/v1/tickets/{ticket.pk}").status_code == 200
    assert partner.get(f"/api/v1/tickets/{missing}").status_code == 404

    after = scrape()
    assert after.since(before, REQUESTS, route=DETAIL, method="GET", status="200") == 2
    assert after.since(before, REQUESTS, route=DETAIL, method="GET", status="404") == 1
    assert after.since(before, DURATION_COUNT, route=DETAIL, method="GET") == 3
    labels = {value for (_name, pairs) in after for _label, value in pairs}
    assert not [value for value in labels if str(ticket.pk) in value or str(missing) in value]


def test_the_duration_histogram_has_every_bucket_and_a_sum(partner, organization):
    before = scrape()

    partner.get("/api/v1/tickets")

    after = scrape()
    buckets = {
        dict(labels)["le"]: value
        for labels, value in after.named("helpdesk_http_request_duration_seconds_bucket").items()
        if dict(labels)["route"] == "/api/v1/tickets" and dict(labels)["method"] == "GET"
    }
    assert list(buckets) == [*(str(bound) for bound in REQUEST_BUCKETS), "+Inf"]
    assert buckets["+Inf"] == after.value(DURATION_COUNT, route="/api/v1/tickets", method="GET")
    assert after.since(before, "helpdesk_http_request_duration_seconds_sum", route="/api/v1/tickets", method="GET") > 0


def test_paths_no_route_answers_count_as_unmatched(db):
    before = scrape()

    Client().get("/api/nao-existe/123")
    Client().get("/nada/456")

    after = scrape()
    assert after.since(before, REQUESTS, route="unmatched", method="GET", status="404") == 2


def test_methods_outside_http_count_as_other(db):
    before = scrape()

    response = Client().generic("BREW", "/api/health")

    after = scrape()
    assert after.since(before, REQUESTS, route="/api/health", method="other", status=str(response.status_code)) == 1


def test_scrapes_are_not_counted_as_requests(db):
    scrape()
    scrape()

    assert not [labels for labels in scrape().named(REQUESTS) if ("route", "/metrics") in labels]


@pytest.mark.parametrize(
    ("route", "label"),
    [
        ("api/v1/tickets$", "/api/v1/tickets"),
        ("api/v1/tickets/(?P<id>[^/]+)/respostas/(?P<resposta>[^/]+)$", "/api/v1/tickets/{id}/respostas/{resposta}"),
        ("admin/tickets/ticket/<path:object_id>/change/", "/admin/tickets/ticket/{object_id}/change/"),
        ("api/health", "/api/health"),
        ("^api(/|$)", "unmatched"),
    ],
)
def test_route_labels_read_like_the_contracts_paths(route, label):
    assert route_label(route) == label


# --- Rate-limit rejections -----------------------------------------------------------


@pytest.mark.usefixtures("frozen_rate_limit_clock")
def test_a_partner_request_past_its_limit_is_counted_by_its_limit(partner, settings):
    settings.PARTNER_RATE_LIMIT = "2/m"
    before = scrape()

    answers = [partner.get("/api/v1/tickets").status_code for _ in range(3)]

    after = scrape()
    assert answers == [200, 200, 429]
    assert after.since(before, REJECTIONS, limit="parceiro") == 1
    assert after.since(before, REQUESTS, route="/api/v1/tickets", method="GET", status="429") == 1


@pytest.mark.usefixtures("frozen_rate_limit_clock")
def test_login_refusals_are_counted_through_the_api_and_the_admin(admin, settings):
    settings.LOGIN_RATE_LIMIT = "1/m"
    before = scrape()

    api = [
        APIClient().post("/api/auth/login", {"email": admin.email, "senha": "errada"}, format="json").status_code
        for _ in range(2)
    ]
    refused = Client().post("/admin/login/", {"username": admin.email, "password": PASSWORD})

    after = scrape()
    assert (api, refused.status_code) == ([401, 429], 429)
    assert after.since(before, REJECTIONS, limit="login") == 2


@pytest.mark.usefixtures("frozen_rate_limit_clock")
def test_the_failure_that_reaches_an_accounts_limit_is_not_a_rejection(admin, settings):
    """That login is answered 401; the next one is refused."""
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "1/h"
    before = scrape()

    first = APIClient().post("/api/auth/login", {"email": admin.email, "senha": "errada"}, format="json")
    between = scrape()
    second = APIClient().post("/api/auth/login", {"email": admin.email, "senha": PASSWORD}, format="json")

    after = scrape()
    assert (first.status_code, second.status_code) == (401, 429)
    assert between.since(before, REJECTIONS, limit="login-conta") == 0
    assert after.since(before, REJECTIONS, limit="login-conta") == 1


def test_requests_under_their_limit_are_not_rejections(partner):
    before = scrape()

    partner.get("/api/v1/tickets")

    assert scrape().named(REJECTIONS) == before.named(REJECTIONS)


def test_a_metric_that_cannot_be_written_never_fails_the_request(db, monkeypatch, caplog):
    def unwritable(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(instruments, "_children", {})
    monkeypatch.setattr(instruments.http_requests, "labels", unwritable)

    response = Client().get("/api/nao-existe")

    assert response.status_code == 404
    assert "metric not recorded by request_observed" in caplog.text
