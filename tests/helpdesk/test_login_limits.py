"""Logins are limited per client address and per account, through the API and the admin alike."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from django.core.checks import run_checks
from django.test import Client
from rest_framework.test import APIClient

from foundation.ratelimit import client_address
from helpdesk.services import organization_create
from tests.assertions import assert_error
from tests.factories import PASSWORD

LOGIN = "/api/auth/login"
ADMIN_LOGIN = "/admin/login/"

pytestmark = pytest.mark.usefixtures("frozen_rate_limit_clock")


def api_login(email, password, address="10.0.0.1", **extra):
    return APIClient().post(LOGIN, {"email": email, "senha": password}, format="json", REMOTE_ADDR=address, **extra)


def admin_login(email, password, address="10.0.0.1", **extra):
    return Client().post(ADMIN_LOGIN, {"username": email, "password": password}, REMOTE_ADDR=address, **extra)


def request_with(**meta):
    return SimpleNamespace(META=meta)


# --- The client address ---------------------------------------------------------


def test_the_client_address_comes_from_the_proxy_header_when_it_is_an_address(settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]

    assert client_address("g", request_with(HTTP_X_REAL_IP="203.0.113.9", REMOTE_ADDR="10.0.0.2")) == "203.0.113.9"
    assert client_address("g", request_with(HTTP_X_REAL_IP=" 2001:db8::1 ", REMOTE_ADDR="10.0.0.2")) == "2001:db8::/64"


def test_a_forwarded_list_counts_the_address_the_proxy_appended(settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_FORWARDED_FOR"
    settings.TRUSTED_PROXIES = ["10.0.0.2"]

    forged_then_real = request_with(HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7", REMOTE_ADDR="10.0.0.2")

    assert client_address("g", forged_then_real) == "198.51.100.7"


@pytest.mark.parametrize("header", [None, "", "not-an-address", "1.2.3.4.5", "<script>"])
def test_a_missing_or_malformed_proxy_header_falls_back_to_the_socket_address(settings, header):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.TRUSTED_PROXIES = ["10.9.9.9"]
    meta = {"REMOTE_ADDR": "10.9.9.9"} | ({} if header is None else {"HTTP_X_REAL_IP": header})

    assert client_address("g", request_with(**meta)) == "10.9.9.9"


def test_without_the_proxy_header_logins_are_still_limited(admin, settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.LOGIN_RATE_LIMIT = "2/m"

    answers = [api_login(admin.email, "errada").status_code for _ in range(3)]

    assert answers == [401, 401, 429]


def test_a_forged_client_address_from_an_untrusted_peer_gets_no_fresh_budget(admin, settings):
    """gunicorn binds every interface: whoever reaches its port directly may write any X-Real-IP."""
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.TRUSTED_PROXIES = ["10.0.0.10"]
    settings.LOGIN_RATE_LIMIT = "2/m"

    answers = [
        api_login(admin.email, "errada", address="198.51.100.1", HTTP_X_REAL_IP=f"203.0.113.{n}").status_code
        for n in range(3)
    ]
    refused = admin_login(admin.email, PASSWORD, address="198.51.100.1", HTTP_X_REAL_IP="203.0.113.99")

    assert answers == [401, 401, 429]
    assert refused.status_code == 429
    assert "_auth_user_id" not in refused.wsgi_request.session


def test_the_client_address_a_trusted_proxy_sets_is_honoured(admin, settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.TRUSTED_PROXIES = ["10.0.0.10", "10.0.1.0/24"]
    settings.LOGIN_RATE_LIMIT = "2/m"

    one_client = [
        api_login(admin.email, "errada", address="10.0.0.10", HTTP_X_REAL_IP="203.0.113.1").status_code
        for _ in range(3)
    ]
    other_clients = [
        api_login(admin.email, "errada", address=f"10.0.1.{n}", HTTP_X_REAL_IP=f"203.0.113.{n + 2}").status_code
        for n in range(3)
    ]

    assert one_client == [401, 401, 429]
    assert other_clients == [401, 401, 401]


def test_ipv6_addresses_of_one_64_share_a_budget(admin, settings):
    settings.LOGIN_RATE_LIMIT = "2/m"
    same_64 = ["2001:db8:1:2::1", "2001:db8:1:2:ffff::2", "2001:db8:1:2:abcd:ef01:2345:6789"]

    answers = [api_login(admin.email, "errada", address=address).status_code for address in same_64]
    admin_answer = admin_login(admin.email, PASSWORD, address="2001:db8:1:2::7").status_code
    next_64 = api_login(admin.email, PASSWORD, address="2001:db8:1:3::1").status_code

    assert answers == [401, 401, 429]
    assert admin_answer == 429
    assert next_64 == 200


def test_an_ipv4_mapped_address_counts_as_the_ipv4_one(admin, settings):
    settings.LOGIN_RATE_LIMIT = "2/m"

    answers = [
        api_login(admin.email, "errada", address=address).status_code
        for address in ("192.0.2.5", "::ffff:192.0.2.5", "::ffff:c000:205")
    ]

    assert answers == [401, 401, 429]


def test_a_malformed_trusted_proxies_setting_stops_the_service(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            **os.environ,
            "DATA_DIR": str(tmp_path),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "TRUSTED_PROXIES": "10.0.0.10,proxy.internal",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "TRUSTED_PROXIES: 'proxy.internal' is not an address or a network" in result.stderr


def deploy_warnings() -> list[str]:
    return [message.id for message in run_checks(include_deployment_checks=True) if message.id == "helpdesk.W001"]


def test_check_deploy_warns_when_the_header_is_trusted_from_this_machine_only(settings):
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.TRUSTED_PROXIES = ["127.0.0.0/8", "::1"]

    assert deploy_warnings() == ["helpdesk.W001"]
    settings.TRUSTED_PROXIES = ["127.0.0.1", "10.0.0.10"]
    assert deploy_warnings() == []
    settings.RATELIMIT_IP_META_KEY = "REMOTE_ADDR"
    settings.TRUSTED_PROXIES = ["127.0.0.0/8"]
    assert deploy_warnings() == []


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


# --- Per account and address; the account as a whole only slows new addresses -----


def logged_in(door, email, password, address):
    if door == "api":
        response = api_login(email, password, address=address)
        return response.status_code == 200 and bool(response.json()["data"]["access_token"])
    response = admin_login(email, password, address=address)
    return response.status_code == 302 and "_auth_user_id" in response.wsgi_request.session


@pytest.mark.parametrize("door", ["api", "admin"])
def test_failures_from_one_address_never_keep_the_right_password_out_from_another(admin, settings, door):
    """The shipped account limits; only the per-address limit is widened, so all 25 guesses reach the account."""
    settings.LOGIN_RATE_LIMIT = "100/m"

    guesses = [api_login(admin.email, f"errada-{n}", address="198.51.100.66").status_code for n in range(25)]

    assert guesses == [401] * 20 + [429] * 5
    assert logged_in(door, admin.email, PASSWORD, address="203.0.113.7")
    assert_error(
        api_login(admin.email, PASSWORD, address="198.51.100.66"), 429, "Limite de requisições excedido.", "rate_limit"
    )
    assert admin_login(admin.email, PASSWORD, address="198.51.100.66").status_code == 429


def test_an_account_under_attack_gives_new_addresses_a_smaller_budget_and_known_ones_the_full(admin, settings):
    settings.LOGIN_ACCOUNT_ALERT_RATE = "4/h"
    settings.LOGIN_NEW_ADDRESS_RATE_LIMIT = "2/h"
    assert logged_in("api", admin.email, PASSWORD, address="192.0.2.10")  # the owner's usual address
    for n in range(4):
        assert api_login(admin.email, "errada", address=f"198.51.100.{n}").status_code == 401

    new_address = [api_login(admin.email, "errada", address="203.0.113.50").status_code for _ in range(2)]
    known_address = [api_login(admin.email, "errada", address="192.0.2.10").status_code for _ in range(3)]

    assert new_address == [401, 401]
    assert admin_login(admin.email, PASSWORD, address="203.0.113.50").status_code == 429
    assert known_address == [401, 401, 401]
    assert logged_in("admin", admin.email, PASSWORD, address="192.0.2.10")
    assert logged_in("api", admin.email, PASSWORD, address="203.0.113.51")  # a new address, right at once


def test_an_account_not_under_attack_gives_a_new_address_the_full_budget(admin, settings):
    settings.LOGIN_ACCOUNT_ALERT_RATE = "10/h"
    settings.LOGIN_NEW_ADDRESS_RATE_LIMIT = "2/h"

    answers = [api_login(admin.email, "errada", address="203.0.113.60").status_code for _ in range(3)]

    assert answers == [401, 401, 401]
    assert logged_in("api", admin.email, PASSWORD, address="203.0.113.60")


def test_successful_logins_do_not_count_against_the_account(admin, settings):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "2/h"
    settings.LOGIN_ACCOUNT_ALERT_RATE = "2/h"

    answers = [api_login(admin.email, PASSWORD, address=f"10.3.0.{n}").status_code for n in range(4)]

    assert answers == [200, 200, 200, 200]


def test_an_unknown_account_is_limited_like_a_real_one(db, settings):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "2/h"
    for _ in range(2):
        assert api_login("ninguem@example.test", "x", address="10.4.0.1").status_code == 401

    assert_error(
        api_login("ninguem@example.test", "x", address="10.4.0.1"), 429, "Limite de requisições excedido.", "rate_limit"
    )
    assert api_login("ninguem@example.test", "x", address="10.4.0.2").status_code == 401


# --- One account, however its e-mail is spelled -------------------------------------

EMAIL = "vanessa.stark@classe.test"
# Each is the same e-mail to a case-insensitive Unicode match (SQLite's like() here casefolds,
# PostgreSQL's UPPER() folds ſ): those that log in must not get a budget of their own, nor those that do not.
SPELLINGS = {
    "long-s": "vaneſſa.ſtark@claſſe.teſt",
    "sharp-s": "vaneßa.stark@claße.test",
    "st-ligature": "vanessa.ﬅark@classe.teﬅ",
    "upper-case": "VANESSA.STARK@CLASSE.TEST",
    "full-width": "ｖａｎｅｓｓａ.stark@classe.test",
}


@pytest.fixture
def vanessa(db):
    organization_create(name="Classe", admin_email=EMAIL, admin_password=PASSWORD)


@pytest.mark.usefixtures("vanessa")
@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_another_spelling_of_the_email_spends_the_same_budget(settings, spelling):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "2/h"
    for _ in range(2):
        assert api_login(EMAIL, "errada", address="198.51.100.8").status_code == 401

    assert_error(
        api_login(spelling, PASSWORD, address="198.51.100.8"), 429, "Limite de requisições excedido.", "rate_limit"
    )
    assert admin_login(spelling, PASSWORD, address="198.51.100.8").status_code == 429


@pytest.mark.usefixtures("vanessa")
@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_the_plain_email_is_refused_once_a_spelling_spent_the_budget(settings, spelling):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "2/h"
    for _ in range(2):
        assert api_login(spelling, "errada", address="198.51.100.9").status_code == 401

    assert api_login(EMAIL, PASSWORD, address="198.51.100.9").status_code == 429
    assert api_login(EMAIL, PASSWORD, address="198.51.100.10").status_code == 200


@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_spellings_of_an_unknown_email_share_one_budget(db, settings, spelling):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = "2/h"
    for _ in range(2):
        assert api_login(EMAIL, "x", address="198.51.100.11").status_code == 401

    assert api_login(spelling, "x", address="198.51.100.11").status_code == 429


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
