"""The two routes anyone may call without a credential, /api/schema/ and /api/health, are cheap to
answer and limited per client address, in the contract's 429 envelope (issue 19, item 12)."""

import pytest
from django.test import Client
from django.urls import resolve
from drf_spectacular.generators import SchemaGenerator

RATE_LIMITED = {
    "success": False,
    "message": "Limite de requisições excedido.",
    "status": 429,
    "data": None,
    "errors": {"field": "rate_limit", "message": "Limite excedido, tente novamente mais tarde."},
}


def from_address(address: str) -> Client:
    return Client(REMOTE_ADDR=address)


@pytest.fixture
def schema_generations(monkeypatch) -> list[int]:
    """How many times the document is generated (the expensive part), from a process that has none yet."""
    monkeypatch.setattr(resolve("/api/schema/").func.view_class, "_bodies", {}, raising=False)
    generations = []
    generate = SchemaGenerator.get_schema

    def counted(self, *args, **kwargs):
        generations.append(1)
        return generate(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counted)
    return generations


def test_the_schema_is_generated_once_per_process_and_format(db, schema_generations):
    client = from_address("198.51.100.7")

    yaml_answers = [client.get("/api/schema/") for _ in range(3)]
    json_answers = [client.get("/api/schema/", HTTP_ACCEPT="application/json") for _ in range(2)]

    assert [answer.status_code for answer in yaml_answers + json_answers] == [200] * 5
    assert len({answer.content for answer in yaml_answers}) == 1
    assert yaml_answers[0]["Content-Type"] == "application/vnd.oai.openapi; charset=utf-8"
    assert json_answers[0]["Content-Type"] == "application/json"
    assert json_answers[0].json()["openapi"].startswith("3.")
    assert len(schema_generations) == 2  # one a format, not one a request


def test_the_schema_is_limited_per_client_address(db, settings, frozen_rate_limit_clock):
    settings.SCHEMA_RATE_LIMIT = "2/m"
    client = from_address("198.51.100.7")

    answers = [client.get("/api/schema/") for _ in range(2)]
    refused = client.get("/api/schema/")  # YAML asked for, the error is the envelope's JSON

    assert [answer.status_code for answer in answers] == [200, 200]
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/json"
    assert refused.json() == RATE_LIMITED
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert from_address("198.51.100.8").get("/api/schema/").status_code == 200


def test_health_is_limited_per_client_address(db, settings, frozen_rate_limit_clock):
    settings.HEALTH_RATE_LIMIT = "3/m"
    client = from_address("198.51.100.7")

    answers = [client.get("/api/health") for _ in range(3)]
    refused = client.get("/api/health")

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert refused.status_code == 429
    assert refused.json() == RATE_LIMITED
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert from_address("198.51.100.8").get("/api/health").status_code == 200


def test_a_load_balancer_probing_twice_a_second_is_never_refused(db):
    """Liveness and readiness from one address, every second for a minute, with the default limit."""
    balancer = from_address("10.0.0.2")

    answers = {balancer.get("/api/health").status_code for _ in range(120)}

    assert answers == {200}


def test_with_the_rate_limit_cache_down_health_still_answers(db, settings, monkeypatch):
    from foundation import ratelimit

    settings.RATELIMIT_FAIL_OPEN = False  # even where other limiters refuse when they cannot count

    def cache_down(*args, **kwargs):
        raise ConnectionError("cache down")

    monkeypatch.setattr(ratelimit, "_usage", cache_down)

    assert from_address("10.0.0.2").get("/api/health").status_code == 200
