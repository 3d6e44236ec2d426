"""GET /metrics: off without METRICS_TOKEN, a 401 without the right bearer token, Prometheus text with it."""

import base64

import pytest
import yaml
from django.core.management import call_command
from django.test import Client

from foundation.metrics.exposition import token_accepted
from tests.metrics import TOKEN, Samples
from tests.routes import api_routes

UNAUTHORIZED = b"401 Unauthorized\n"


@pytest.fixture
def metrics_on(settings, db):
    settings.METRICS_TOKEN = TOKEN


def get(authorization: str | None = None, **extra):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization is not None else {}
    return Client().get("/metrics", **headers, **extra)


@pytest.mark.parametrize("method", ["get", "post", "head"])
def test_without_a_metrics_token_the_endpoint_is_the_404_of_an_unknown_path(db, settings, method):
    settings.METRICS_TOKEN = ""
    unknown = getattr(Client(), method)("/metricz")

    response = getattr(Client(), method)("/metrics", HTTP_AUTHORIZATION="Bearer ")

    assert (response.status_code, response.content) == (404, unknown.content)
    assert response["Content-Type"] == unknown["Content-Type"]


def test_without_credentials_the_answer_is_401_with_a_bearer_challenge(metrics_on):
    response = get()

    assert response.status_code == 401
    assert response.content == UNAUTHORIZED
    assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert response["Content-Type"] == "text/plain; charset=utf-8"


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer errado",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Bearer x{TOKEN}",
        TOKEN,
        f"Token {TOKEN}",
        "Basic " + base64.b64encode(f"{TOKEN}:".encode()).decode(),
        "Basic " + base64.b64encode(f":{TOKEN}".encode()).decode(),
        "Bearer",
        "",
    ],
)
def test_a_wrong_token_is_401_and_the_answer_shows_no_metric_and_no_token(metrics_on, authorization):
    response = get(authorization)

    assert response.status_code == 401
    assert response.content == UNAUTHORIZED
    assert TOKEN not in str(response.headers)


def test_the_right_token_gets_prometheus_text_of_this_server(metrics_on):
    Client().get("/api/health")

    response = get(f"Bearer {TOKEN}")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert response["Cache-Control"] == "no-store"
    samples = Samples.parse(response.content.decode())
    assert samples.value("helpdesk_http_requests_total", route="/api/health", method="GET", status="200") >= 1
    assert samples.value("helpdesk_webhook_queue_lag_seconds") == 0.0


def test_the_scheme_is_case_insensitive_and_surrounding_spaces_do_not_matter(metrics_on):
    assert get(f"bearer {TOKEN}").status_code == 200
    assert get(f"BEARER   {TOKEN} ").status_code == 200


def test_openmetrics_is_served_when_prometheus_asks_for_it(metrics_on):
    response = get(f"Bearer {TOKEN}", HTTP_ACCEPT="application/openmetrics-text; version=1.0.0; charset=utf-8")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    assert response.content.endswith(b"# EOF\n")


@pytest.mark.parametrize("method", ["post", "put", "delete", "head"])
def test_only_get_is_answered(metrics_on, method):
    response = getattr(Client(), method)("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    assert response.status_code == 405
    assert response["Allow"] == "GET"


@pytest.mark.parametrize(
    ("token", "authorization", "accepted"),
    [
        ("s3cret", "Bearer s3cret", True),
        ("s3cret", "Bearer s3cre", False),
        ("s3cret", "Bearer s3cret\u0000", False),
        ("s3cret", "Bearer \udc80", False),
        ("", "Bearer ", False),
        ("s3cret", None, False),
    ],
)
def test_token_check(token, authorization, accepted):
    assert token_accepted(authorization, token) is accepted


def test_the_endpoint_is_outside_the_api_its_routes_and_its_schema(tmp_path):
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(target))

    assert "/metrics" not in api_routes()
    assert not [path for path in yaml.safe_load(target.read_text())["paths"] if "metrics" in path]
