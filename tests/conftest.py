"""Fixtures shared by every test package: organizations, clients, rate limits and stubbed DNS."""

import io
import ipaddress
import json
import logging
import os
import socket
import time
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from foundation.logs import formatter
from integrations import webhook_urls
from tests.assertions import bearer_client, panel_client
from tests.authorization import World, seed_tenant
from tests.factories import admin_of, make_agent, make_key, make_organization

PUBLIC_ADDRESS = "93.184.216.34"


@pytest.fixture(autouse=True)
def _isolated_cache_and_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    attachments = settings.STORAGES["attachments"]
    if attachments["BACKEND"].endswith("FileSystemStorage"):  # S3: the run's bucket, random keys
        location = {**attachments["OPTIONS"], "location": tmp_path / "attachments"}
        settings.STORAGES = {**settings.STORAGES, "attachments": {**attachments, "OPTIONS": location}}
    # Real hashing costs ~0.3 s per user; the hasher is not what these tests test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Threaded tests send one organization's requests at once; the limit's own tests set it
    # (tests/integrations/test_in_flight_limit.py).
    settings.PARTNER_MAX_CONCURRENT_REQUESTS = 0
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _free_slow_slots():
    """The process's share of send threads for slow webhooks (integrations.delivery.slow_slots) starts
    free in every test: a test that claims without finishing must not hold a slot into the next."""
    from integrations.delivery import slow_slots

    slow_slots._taken = 0
    yield
    slow_slots._taken = 0


@pytest.fixture
def organization(db):
    return make_organization("Acme")


@pytest.fixture
def other_organization(db):
    return make_organization("Globex")


@pytest.fixture
def agent(organization):
    return make_agent(organization, name="Beatriz Atendente")


@pytest.fixture
def admin(organization):
    """The admin of `organization` made by make_organization: staff, agent, holds api_publica:gerenciar."""
    return admin_of(organization)


@pytest.fixture
def api_key(organization):
    return make_key(organization)


@pytest.fixture
def anon_client():
    return APIClient()


@pytest.fixture
def partner(api_key):
    """An HTTP client authenticated as a partner of `organization`."""
    return bearer_client(api_key)


@pytest.fixture
def other_partner(other_organization):
    return bearer_client(make_key(other_organization))


@pytest.fixture
def manager(admin) -> APIClient:
    """A panel client of `organization`'s admin, who holds api_publica:gerenciar."""
    return panel_client(admin.email)


@pytest.fixture
def agent_client(agent) -> APIClient:
    """A panel client of `agent`, a plain agent of `organization` (no api_publica:gerenciar)."""
    return panel_client(agent.user.email)


@pytest.fixture
def generous_rate_limits(settings):
    """Limits no test of something else reaches (query counts make many requests)."""
    settings.PANEL_RATE_LIMIT = "1000/m"
    settings.PARTNER_RATE_LIMIT = "1000/m"


@pytest.fixture
def frozen_rate_limit_clock(monkeypatch) -> SimpleNamespace:
    """Freezes django-ratelimit's clock (fixed windows) so a test never straddles a window boundary.

    The test may move it on by changing `.value`.
    """
    now = SimpleNamespace(value=float(int(time.time())))
    monkeypatch.setattr("django_ratelimit.core.time", SimpleNamespace(time=lambda: now.value))
    return now


class Resolver:
    """Answers like getaddrinfo: an IP literal resolves to itself, names come from `answers`."""

    def __init__(self, answers: dict[str, list[str]] | None = None):
        self.answers = answers or {}
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.answers[host]


@pytest.fixture
def resolver(monkeypatch, settings) -> Resolver:
    """Production webhook URL rules, with DNS stubbed (the machine has none): no name resolves
    until the test puts it in `resolver.answers`."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False
    stub = Resolver()
    monkeypatch.setattr(webhook_urls, "resolve_host", stub)
    return stub


@pytest.fixture
def example_dns(resolver) -> Resolver:
    """`resolver` knowing the hosts the tests use: hooks and outro are public, interno and metadados
    are private, misto mixes a public and a private address; any other name does not resolve."""
    resolver.answers.update(
        {
            "hooks.example.com": [PUBLIC_ADDRESS],
            "outro.example.com": [PUBLIC_ADDRESS, "2606:2800:220:1:248:1893:25c8:1946"],
            "interno.example.com": ["10.0.0.5"],
            "metadados.example.com": ["169.254.169.254"],
            "misto.example.com": [PUBLIC_ADDRESS, "192.168.0.10"],
        }
    )
    return resolver


@pytest.fixture
def postgres_only(transactional_db):
    """Real PostgreSQL behaviour (row locks, backends, plans): CI always runs these on PostgreSQL,
    where REQUIRE_POSTGRES turns a missing server into a failure instead of a skip."""
    from django.db import connection

    if connection.vendor != "postgresql":
        if os.environ.get("REQUIRE_POSTGRES"):
            pytest.fail("REQUIRE_POSTGRES is set but the database is not PostgreSQL")
        pytest.skip("needs PostgreSQL: set DATABASE_URL to a PostgreSQL database (CI does)")


@pytest.fixture
def redis_only(db):
    """The shared cache of production: CI's second run has it (REDIS_URL), and fails rather than skips without."""
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    if not isinstance(caches["default"], RedisCache):
        if os.environ.get("REQUIRE_POSTGRES"):
            pytest.fail("REQUIRE_POSTGRES is set but the cache is not Redis (REDIS_URL)")
        pytest.skip("needs Redis: set REDIS_URL (CI does)")
    return caches["default"]


@pytest.fixture
def world(organization, other_organization, example_dns) -> World:
    """The authorization matrix's two organizations, seeded alike: A (`organization`, three tickets) is
    the one under attack, B (`other_organization`, two tickets) the caller."""
    return World(a=seed_tenant(organization, "acme", tickets=3), b=seed_tenant(other_organization, "globex"))


@pytest.fixture
def json_log(caplog):
    """The lines the production (JSON) handler writes from now on, parsed; INFO and up.

    Context variables (the request id) are merged when a line is written, as in production, so
    lines are read from a real handler rather than from caplog's records."""
    caplog.set_level(logging.INFO)
    output = io.StringIO()
    handler = logging.StreamHandler(output)
    handler.setFormatter(formatter("json"))
    loggers = [logging.getLogger(), logging.getLogger("django.request")]  # the second does not propagate
    for logger in loggers:
        logger.addHandler(handler)
    yield lambda: [json.loads(line) for line in output.getvalue().splitlines()]
    for logger in loggers:
        logger.removeHandler(handler)
