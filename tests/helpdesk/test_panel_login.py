"""Panel login (JWT): POST /api/auth/login, POST /api/auth/refresh, and the token on panel endpoints."""

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken

from helpdesk.services import agent_create
from integrations.models import ApiCredential
from tests.assertions import assert_error, assert_validation_error, bearer_client
from tests.factories import PASSWORD

LOGIN = "/api/auth/login"
REFRESH = "/api/auth/refresh"
PANEL = "/api/api-keys"

TOKEN_FIELDS = {"access_token", "refresh_token", "token_type", "expires_in", "usuario"}


def post_login(client: APIClient, email, senha, **extra):
    return client.post(LOGIN, {"email": email, "senha": senha}, format="json", **extra)


def login(email: str, password: str = PASSWORD) -> dict:
    response = post_login(APIClient(), email, password)
    assert response.status_code == 200, response.json()
    return response.json()["data"]


def refresh(refresh_token) -> object:
    return APIClient().post(REFRESH, {"refresh_token": refresh_token}, format="json")


def assert_token_refused(response) -> None:
    assert_error(response, 401, "Não autenticado.", "token")


def b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode("ascii")


def claims_of(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


# --- Login ----------------------------------------------------------------


def test_login_returns_tokens_and_the_user_with_the_management_permission(anon_client, admin):
    response = post_login(anon_client, admin.email, PASSWORD)

    assert response.status_code == 200
    body = response.json()
    data = body["data"]
    assert body == {"success": True, "message": "Login realizado.", "data": data, "errors": []}
    assert set(data) == TOKEN_FIELDS
    assert data["token_type"] == "Bearer"
    assert data["expires_in"] == 900
    assert data["usuario"] == {
        "id": str(admin.pk),
        "nome": admin.name,
        "email": admin.email,
        "permissoes": ["api_publica:gerenciar"],
    }
    assert isinstance(data["access_token"], str) and data["access_token"]
    assert isinstance(data["refresh_token"], str) and data["refresh_token"]
    assert data["access_token"] != data["refresh_token"]


def test_login_access_token_is_hs256_and_lives_900_seconds(admin):
    tokens = login(admin.email)

    assert jwt.get_unverified_header(tokens["access_token"])["alg"] == "HS256"
    claims = claims_of(tokens["access_token"])
    assert claims["exp"] - claims["iat"] == 900


def test_login_access_token_opens_the_panel(admin):
    tokens = login(admin.email)

    response = bearer_client(tokens["access_token"]).get(PANEL)

    assert response.status_code == 200
    assert response.json()["message"] == "Credenciais listadas."


def test_login_of_a_plain_agent_has_no_permissions(anon_client, agent):
    response = post_login(anon_client, agent.user.email, PASSWORD)

    assert response.status_code == 200
    assert response.json()["data"]["usuario"] == {
        "id": str(agent.user.pk),
        "nome": agent.user.name,
        "email": agent.user.email,
        "permissoes": [],
    }


def test_login_email_match_is_case_insensitive(anon_client, admin):
    response = post_login(anon_client, admin.email.upper(), PASSWORD)

    assert response.status_code == 200
    assert response.json()["data"]["usuario"]["id"] == str(admin.pk)
    assert response.json()["data"]["usuario"]["email"] == admin.email


def test_an_agent_logs_in_with_a_dotted_capital_i_typed_as_it_was_given(anon_client, organization):
    """Stored lower-cased, İ is an i and a combining dot; PostgreSQL's UPPER() of the typed İ keeps it."""
    agent = agent_create(organization=organization, name="İnci", email="İnci@Example.test", password=PASSWORD)

    answers = [post_login(anon_client, typed, PASSWORD) for typed in ("İnci@Example.test", agent.user.email)]

    assert [answer.status_code for answer in answers] == [200, 200]
    assert {answer.json()["data"]["usuario"]["id"] for answer in answers} == {str(agent.user.pk)}


def test_wrong_password_unknown_email_and_inactive_user_get_the_same_401(anon_client, admin, agent):
    agent.user.is_active = False
    agent.user.save(update_fields=["is_active"])

    wrong_password = post_login(anon_client, admin.email, PASSWORD + "x")
    unknown_email = post_login(anon_client, "ninguem@nada.test", PASSWORD)
    inactive_user = post_login(anon_client, agent.user.email, PASSWORD)

    assert_error(wrong_password, 401, "Credenciais inválidas.", "credenciais")
    assert unknown_email.json() == wrong_password.json()
    assert unknown_email.status_code == 401
    assert inactive_user.json() == wrong_password.json()
    assert inactive_user.status_code == 401
    assert OutstandingToken.objects.count() == 0


@pytest.mark.parametrize(
    ("payload", "fields"),
    [
        ({}, {"email", "senha"}),
        ({"senha": PASSWORD}, {"email"}),
        ({"email": "admin@x.test"}, {"senha"}),
        ({"email": "", "senha": PASSWORD}, {"email"}),
        ({"email": "   ", "senha": PASSWORD}, {"email"}),
        ({"email": "admin@x.test", "senha": ""}, {"senha"}),
        ({"email": None, "senha": PASSWORD}, {"email"}),
        ({"email": 123, "senha": PASSWORD}, {"email"}),
        ({"email": ["admin@x.test"], "senha": PASSWORD}, {"email"}),
        ({"email": "admin@x.test", "senha": 12345678}, {"senha"}),
        ({"email": "admin@x.test", "senha": {"valor": PASSWORD}}, {"senha"}),
        ({"email": True, "senha": False}, {"email", "senha"}),
    ],
)
def test_login_with_missing_blank_or_non_string_fields_is_422(anon_client, db, payload, fields):
    response = anon_client.post(LOGIN, payload, format="json")

    assert_validation_error(response, fields)
    assert OutstandingToken.objects.count() == 0


def test_login_attempts_are_rate_limited_per_client_address(anon_client, admin, settings, frozen_rate_limit_clock):
    settings.LOGIN_RATE_LIMIT = "3/m"
    for _ in range(3):
        assert post_login(anon_client, admin.email, "errada", REMOTE_ADDR="10.1.1.1").status_code == 401

    limited = post_login(anon_client, admin.email, PASSWORD, REMOTE_ADDR="10.1.1.1")

    assert_error(limited, 429, "Limite de requisições excedido.", "rate_limit")
    assert int(limited["Retry-After"]) >= 1
    assert OutstandingToken.objects.count() == 0

    other_address = post_login(anon_client, admin.email, PASSWORD, REMOTE_ADDR="10.2.2.2")

    assert other_address.status_code == 200
    assert other_address.json()["message"] == "Login realizado."


# --- Refresh --------------------------------------------------------------


def test_refresh_returns_new_tokens(admin):
    tokens = login(admin.email)

    response = refresh(tokens["refresh_token"])

    assert response.status_code == 200
    body = response.json()
    data = body["data"]
    assert body == {"success": True, "message": "Token renovado.", "data": data, "errors": []}
    assert set(data) == TOKEN_FIELDS
    assert data["token_type"] == "Bearer"
    assert data["expires_in"] == 900
    assert data["usuario"]["id"] == str(admin.pk)
    assert data["refresh_token"] != tokens["refresh_token"]
    assert bearer_client(data["access_token"]).get(PANEL).status_code == 200
    assert refresh(data["refresh_token"]).status_code == 200


def test_a_used_refresh_token_is_refused(admin):
    tokens = login(admin.email)
    assert refresh(tokens["refresh_token"]).status_code == 200
    outstanding = OutstandingToken.objects.count()

    response = refresh(tokens["refresh_token"])

    assert_token_refused(response)
    assert OutstandingToken.objects.count() == outstanding


def test_an_access_token_is_refused_as_refresh_token(admin):
    tokens = login(admin.email)

    response = refresh(tokens["access_token"])

    assert_token_refused(response)
    assert BlacklistedToken.objects.count() == 0
    assert OutstandingToken.objects.count() == 1


@pytest.mark.parametrize("garbage", ["garbage", "a.b.c", "eyJhbGciOiJIUzI1NiJ9.e30.", "hdk_live_x"])
def test_a_garbage_refresh_token_is_refused(db, garbage):
    response = refresh(garbage)

    assert_token_refused(response)
    assert OutstandingToken.objects.count() == 0


def test_refresh_without_a_string_token_is_422(db):
    missing = APIClient().post(REFRESH, {}, format="json")
    not_a_string = APIClient().post(REFRESH, {"refresh_token": 123}, format="json")

    assert_validation_error(missing, {"refresh_token"})
    assert_validation_error(not_a_string, {"refresh_token"})


# --- The token on a panel endpoint ----------------------------------------


def test_panel_endpoint_without_authorization_header_is_401(anon_client, db):
    assert_token_refused(anon_client.get(PANEL))


def test_panel_endpoint_with_a_garbage_bearer_is_401(db):
    assert_token_refused(bearer_client("garbage").get(PANEL))


def test_panel_endpoint_refuses_a_token_signed_with_another_key(admin):
    claims = claims_of(login(admin.email)["access_token"])
    forged = jwt.encode(claims, "outra-chave-que-nao-e-a-do-servico-0123456789", algorithm="HS256")

    assert_token_refused(bearer_client(forged).get(PANEL))


def test_panel_endpoint_refuses_an_unsigned_alg_none_token(admin):
    claims = claims_of(login(admin.email)["access_token"])
    unsigned = f"{b64url({'alg': 'none', 'typ': 'JWT'})}.{b64url(claims)}."

    assert_token_refused(bearer_client(unsigned).get(PANEL))


def test_panel_endpoint_refuses_an_expired_token(admin):
    claims = claims_of(login(admin.email)["access_token"])
    now = datetime.now(UTC)
    claims.update(
        iat=int((now - timedelta(minutes=30)).timestamp()),
        exp=int((now - timedelta(minutes=15)).timestamp()),
        jti=uuid.uuid4().hex,
    )
    expired = jwt.encode(claims, settings.SIMPLE_JWT["SIGNING_KEY"], algorithm="HS256")

    assert_token_refused(bearer_client(expired).get(PANEL))


def test_a_token_signed_with_the_real_key_is_accepted(admin):
    """Control for the forged tokens above: the same claims, re-signed with the real key, work."""
    claims = claims_of(login(admin.email)["access_token"])
    resigned = jwt.encode(claims, settings.SIMPLE_JWT["SIGNING_KEY"], algorithm="HS256")

    assert bearer_client(resigned).get(PANEL).status_code == 200


def test_panel_endpoint_refuses_a_refresh_token_as_access_token(admin):
    tokens = login(admin.email)

    assert_token_refused(bearer_client(tokens["refresh_token"]).get(PANEL))


def test_panel_endpoint_refuses_a_partner_api_key(api_key):
    count = ApiCredential.objects.count()

    assert_token_refused(bearer_client(api_key).get(PANEL))
    assert ApiCredential.objects.count() == count


# --- Revocation and permissions read from the database --------------------


def test_password_change_revokes_access_and_refresh_tokens_at_once(admin):
    tokens = login(admin.email)
    assert bearer_client(tokens["access_token"]).get(PANEL).status_code == 200

    admin.set_password("outra-Senha-forte-987")
    admin.save()

    assert_token_refused(bearer_client(tokens["access_token"]).get(PANEL))
    assert_token_refused(refresh(tokens["refresh_token"]))
    assert BlacklistedToken.objects.count() == 0


def test_deactivating_the_user_revokes_access_and_refresh_tokens_at_once(admin):
    tokens = login(admin.email)
    assert bearer_client(tokens["access_token"]).get(PANEL).status_code == 200

    admin.is_active = False
    admin.save()

    assert_token_refused(bearer_client(tokens["access_token"]).get(PANEL))
    assert_token_refused(refresh(tokens["refresh_token"]))
    assert BlacklistedToken.objects.count() == 0


def test_permissions_are_read_from_the_database_not_from_the_token(admin):
    tokens = login(admin.email)
    client = bearer_client(tokens["access_token"])
    assert client.get(PANEL).status_code == 200

    admin.user_permissions.remove(Permission.objects.get(codename="gerenciar_api_publica"))

    assert_error(client.get(PANEL), 403, "Acesso negado.", "permissao")


def test_a_plain_agent_token_is_refused_on_management_with_403(agent):
    tokens = login(agent.user.email)

    assert_error(bearer_client(tokens["access_token"]).get(PANEL), 403, "Acesso negado.", "permissao")
