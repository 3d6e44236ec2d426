"""Logins are limited per client address and per account, through the API and the admin alike."""

from types import SimpleNamespace

import pytest
from django.test import Client
from rest_framework.test import APIClient

from helpdesk.ratelimit import client_address
from tests.assertions import assert_error
from tests.factories import PASSWORD

LOGIN = "/api/auth/login"
ADMIN_LOGIN = "/admin/login/"

pytestmark = pytest.mark.usefixtures("frozen_rate_limit_clock")


def api_login(email, password, address="10.0.0.1", **extra):
    return APIClient().post(LOGIN, {"email": email, "senha": password}, format="json", REMOTE_ADDR=address, **extra)


def admin_login(email, password, address="10.0.0.1"):
    return Client().post(ADMIN_LOGIN, {"username": email, "password": password}, REMOTE_ADDR=address)


def request_with(**meta):
    return SimpleNamespace(META=meta)


# --- The client address ---------------------------------------------------------


def test_the_client_address_comes_from_the_proxy_header_when_it_is_an_address(settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"

    assert client_address("g", request_with(HTTP_X_REAL_IP="203.0.113.9", REMOTE_ADDR="10.0.0.2")) == "203.0.113.9"
    assert client_address("g", request_with(HTTP_X_REAL_IP=" 2001:db8::1 ", REMOTE_ADDR="10.0.0.2")) == "2001:db8::1"


def test_a_forwarded_list_counts_the_address_the_proxy_appended(settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_FORWARDED_FOR"

    forged_then_real = request_with(HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7", REMOTE_ADDR="10.0.0.2")

    assert client_address("g", forged_then_real) == "198.51.100.7"


@pytest.mark.parametrize("header", [None, "", "not-an-address", "1.2.3.4.5", "<script>"])
def test_a_missing_or_malformed_proxy_header_falls_back_to_the_socket_address(settings, header):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    meta = {"REMOTE_ADDR": "10.9.9.9"} | ({} if header is None else {"HTTP_X_REAL_IP": header})

    assert client_address("g", request_with(**meta)) == "10.9.9.9"


def test_without_the_proxy_header_logins_are_still_limited(admin, settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.LOGIN_RATE_LIMIT = "2/m"

    answers = [api_login(admin.email, "errada").status_code for _ in range(3)]

    assert answers == [401, 401, 429]


# --- Per address, both doors ------------------------------------------------------


def test_the_admin_login_is_limited_per_address(admin, settings):
    settings.LOGIN_RATE_LIMIT = "3/m"
    for _ in range(3):
        assert admin_login(admin.email, "errada").status_code == 200  # the form again, with its error

    refused = admin_login(admin.email, PASSWORD)

    assert refused.status_code == 429
    assert "Muitas tentativas de login" in refused.content.decode()
    assert int(refused["Retry-After"]) >= 1
    assert "_auth_user_id" not in refused.wsgi_request.session
    assert admin_login(admin.email, PASSWORD, address="10.0.0.2").status_code == 302


def test_the_api_and_the_admin_share_the_budget_of_an_address(admin, settings):
    settings.LOGIN_RATE_LIMIT = "4/m"
    for _ in range(2):
        assert api_login(admin.email, "errada").status_code == 401
        assert admin_login(admin.email, "errada").status_code == 200

    assert admin_login(admin.email, PASSWORD).status_code == 429
    assert_error(api_login(admin.email, PASSWORD), 429, "Limite de requisições excedido.", "rate_limit")


# --- Per account, from any address ------------------------------------------------


def test_failed_logins_of_one_account_from_many_addresses_lock_it_for_the_window(admin, settings):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "3/h"
    for n in range(3):
        assert api_login(admin.email, "errada", address=f"10.1.0.{n}").status_code == 401

    refused = api_login(admin.email.upper(), PASSWORD, address="10.2.0.1")

    assert_error(refused, 429, "Limite de requisições excedido.", "rate_limit")
    assert admin_login(admin.email, PASSWORD, address="10.2.0.2").status_code == 429


def test_successful_logins_do_not_count_against_the_account(admin, settings):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "2/h"

    answers = [api_login(admin.email, PASSWORD, address=f"10.3.0.{n}").status_code for n in range(4)]

    assert answers == [200, 200, 200, 200]


def test_an_unknown_account_is_limited_like_a_real_one(db, settings):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "2/h"
    for n in range(2):
        assert api_login("ninguem@example.test", "x", address=f"10.4.0.{n}").status_code == 401

    assert api_login("ninguem@example.test", "x", address="10.4.1.1").status_code == 429


# --- A cache outage ------------------------------------------------------------


@pytest.fixture
def cache_down(monkeypatch):
    from django.core.cache import cache, caches
    from django.core.cache.backends.redis import RedisCache

    def down(*args, **kwargs):
        raise ConnectionError("cache down")

    for method in ("add", "incr", "get"):
        monkeypatch.setattr(cache, method, down)
    if isinstance(caches["default"], RedisCache):
        monkeypatch.setattr(caches["default"]._cache, "get_client", down)
    yield
    monkeypatch.undo()


def test_with_the_cache_down_logins_are_refused_by_default(admin, cache_down):
    assert_error(api_login(admin.email, PASSWORD), 429, "Limite de requisições excedido.", "rate_limit")
    assert admin_login(admin.email, PASSWORD).status_code == 429


def test_the_login_limiter_can_be_set_to_fail_open(admin, cache_down, settings):
    settings.LOGIN_RATELIMIT_FAIL_OPEN = True

    assert api_login(admin.email, PASSWORD).status_code == 200
