"""Management API of partner credentials: GET/POST /api/api-keys, DELETE /api/api-keys/{id}."""

import hashlib
import logging
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.models import ApiCredential
from integrations.services import credential_create
from tests.assertions import api_timestamp, assert_error, assert_validation_error, bearer_client, panel_client
from tests.contract import KEY_RE
from tests.factories import admin_of, credential_of, make_key

URL = "/api/api-keys"
TICKETS = "/api/v1/tickets"
CREATED_MESSAGE = "Credencial criada. Guarde a chave: ela não será exibida novamente."
CREDENTIAL_FIELDS = {"id", "nome", "key_prefix", "ativa", "ultimo_uso_em", "revogado_em", "criado_por", "criado_em"}
# Added by least-privilege keys (issue 19): what the key may do, until when, from where; null = no limit.
RESTRICTION_FIELDS = {"escopos", "expira_em", "redes_permitidas"}
NO_RESTRICTIONS = {"escopos": None, "expira_em": None, "redes_permitidas": None}


def detail_url(credential_id) -> str:
    return f"{URL}/{credential_id}"


# --- List -----------------------------------------------------------------


def test_list_returns_the_organizations_credentials_newest_first(manager, organization, admin):
    now = timezone.now()
    oldest, oldest_key = credential_create(organization=organization, name="Antiga", created_by=admin)
    newest, newest_key = credential_create(organization=organization, name="Nova")
    middle, middle_key = credential_create(organization=organization, name="Meio", created_by=admin)
    ApiCredential.objects.filter(pk=oldest.pk).update(created_at=now - timedelta(days=3))
    ApiCredential.objects.filter(pk=newest.pk).update(created_at=now - timedelta(days=1))
    ApiCredential.objects.filter(pk=middle.pk).update(created_at=now - timedelta(days=2))

    response = manager.get(URL)

    assert response.status_code == 200
    body = response.json()
    assert body == {"success": True, "message": "Credenciais listadas.", "data": body["data"], "errors": []}
    assert isinstance(body["data"], list)
    assert [item["id"] for item in body["data"]] == [str(newest.pk), str(middle.pk), str(oldest.pk)]
    for item in body["data"]:
        assert set(item) == CREDENTIAL_FIELDS | RESTRICTION_FIELDS


def test_list_item_carries_exactly_the_contract_fields(manager, organization, admin):
    credential, key = credential_create(organization=organization, name="ERP", created_by=admin)
    credential.refresh_from_db()

    [item] = manager.get(URL).json()["data"]

    assert item == {
        "id": str(credential.pk),
        "nome": "ERP",
        "key_prefix": key[:12],
        "ativa": True,
        "ultimo_uso_em": None,
        "revogado_em": None,
        "criado_por": str(admin.pk),
        "criado_em": api_timestamp(credential.created_at),
        **NO_RESTRICTIONS,
    }
    assert item["criado_em"].endswith("Z")


def test_list_shows_last_use_and_revocation_timestamps(manager, organization):
    key = make_key(organization)
    assert bearer_client(key).get(TICKETS).status_code == 200
    manager.delete(detail_url(credential_of(key).pk))
    credential = credential_of(key)

    [item] = manager.get(URL).json()["data"]

    assert item["ativa"] is False
    assert item["ultimo_uso_em"] == api_timestamp(credential.last_used_at)
    assert item["revogado_em"] == api_timestamp(credential.revoked_at)
    assert item["ultimo_uso_em"] is not None
    assert item["revogado_em"] is not None


def test_list_never_exposes_the_key_nor_its_digest(manager, organization):
    keys = [make_key(organization, name=f"Chave {n}") for n in range(3)]
    created = manager.post(URL, {"nome": "Pelo painel"}, format="json").json()["data"]["chave"]
    keys.append(created)

    response = manager.get(URL)

    text = response.content.decode()
    assert len(response.json()["data"]) == 4
    for item in response.json()["data"]:
        assert "chave" not in item
        assert "key_digest" not in item
    for key in keys:
        assert key not in text
        assert hashlib.sha256(key.encode()).hexdigest() not in text


def test_list_of_an_organization_without_credentials_is_an_empty_array(manager):
    response = manager.get(URL)

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "Credenciais listadas.", "data": [], "errors": []}


# --- Create ---------------------------------------------------------------


def test_create_returns_the_full_key_once(manager, organization, admin):
    response = manager.post(URL, {"nome": "Loja virtual"}, format="json")

    assert response.status_code == 201
    body = response.json()
    data = body["data"]
    assert body == {"success": True, "message": CREATED_MESSAGE, "data": data, "errors": []}
    assert set(data) == CREDENTIAL_FIELDS | RESTRICTION_FIELDS | {"chave"}
    assert KEY_RE.fullmatch(data["chave"])
    credential = ApiCredential.objects.get(pk=data["id"])
    assert data == {
        "id": str(credential.pk),
        "nome": "Loja virtual",
        "key_prefix": data["chave"][:12],
        "ativa": True,
        "ultimo_uso_em": None,
        "revogado_em": None,
        "criado_por": str(admin.pk),
        "criado_em": api_timestamp(credential.created_at),
        **NO_RESTRICTIONS,
        "chave": data["chave"],
    }
    assert credential.organization_id == organization.pk
    assert credential.name == "Loja virtual"
    assert credential.key_prefix == data["chave"][:12]
    assert credential.key_digest == hashlib.sha256(data["chave"].encode()).hexdigest()
    assert credential.created_by_id == admin.pk
    assert credential.is_active is True


def test_created_key_works_at_once_on_the_partner_api(manager):
    key = manager.post(URL, {"nome": "ERP"}, format="json").json()["data"]["chave"]

    response = bearer_client(key).get(TICKETS)

    assert response.status_code == 200
    assert response.json()["success"] is True


def test_created_key_is_never_shown_again(manager):
    created = manager.post(URL, {"nome": "ERP"}, format="json").json()["data"]

    response = manager.get(URL)

    [item] = response.json()["data"]
    assert item["id"] == created["id"]
    assert "chave" not in item
    assert created["chave"] not in response.content.decode()


def test_create_accepts_a_name_of_100_characters(manager):
    response = manager.post(URL, {"nome": "n" * 100}, format="json")

    assert response.status_code == 201
    assert response.json()["data"]["nome"] == "n" * 100


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"nome": ""},
        {"nome": "   "},
        {"nome": None},
        {"nome": "n" * 101},
        {"nome": 123},
        {"nome": ["ERP"]},
    ],
    ids=["missing", "empty", "blank", "null", "over-100", "number", "list"],
)
def test_create_with_invalid_name_is_422_and_writes_nothing(manager, payload):
    response = manager.post(URL, payload, format="json")

    assert_validation_error(response, {"nome"})
    assert ApiCredential.objects.count() == 0


def test_create_ignores_fields_a_client_may_not_set(manager, organization, other_organization, admin):
    response = manager.post(
        URL,
        {
            "nome": "ERP",
            "ativa": False,
            "key_prefix": "hdk_live_xxx",
            "criado_por": str(admin_of(other_organization).pk),
            "organization": str(other_organization.pk),
            "revogado_em": "2020-01-01T00:00:00Z",
        },
        format="json",
    )

    assert response.status_code == 201
    data = response.json()["data"]
    credential = ApiCredential.objects.get(pk=data["id"])
    assert credential.organization_id == organization.pk
    assert credential.is_active is True
    assert credential.revoked_at is None
    assert credential.created_by_id == admin.pk
    assert data["key_prefix"] == data["chave"][:12]


# --- Revoke ---------------------------------------------------------------


def test_revoke_deactivates_the_credential_and_keeps_the_row(manager, organization):
    credential = credential_of(make_key(organization, name="ERP"))

    response = manager.delete(detail_url(credential.pk))

    assert response.status_code == 200
    body = response.json()
    credential.refresh_from_db()
    assert body == {
        "success": True,
        "message": "Credencial revogada.",
        "data": {
            "id": str(credential.pk),
            "nome": "ERP",
            "key_prefix": credential.key_prefix,
            "ativa": False,
            "ultimo_uso_em": None,
            "revogado_em": api_timestamp(credential.revoked_at),
            "criado_por": None,
            "criado_em": api_timestamp(credential.created_at),
            **NO_RESTRICTIONS,
        },
        "errors": [],
    }
    assert credential.is_active is False
    assert credential.revoked_at is not None
    assert ApiCredential.objects.filter(pk=credential.pk).exists()


def test_revoke_is_idempotent(manager, organization):
    credential = credential_of(make_key(organization))
    first = manager.delete(detail_url(credential.pk))
    revoked_at = ApiCredential.objects.get(pk=credential.pk).revoked_at

    second = manager.delete(detail_url(credential.pk))

    assert second.status_code == 200
    assert second.json()["message"] == "Credencial revogada."
    assert second.json()["data"]["ativa"] is False
    assert second.json()["data"]["revogado_em"] == first.json()["data"]["revogado_em"]
    assert ApiCredential.objects.get(pk=credential.pk).revoked_at == revoked_at


def test_revoked_key_fails_on_the_very_next_partner_request(manager, organization):
    key = make_key(organization)
    partner = bearer_client(key)
    assert partner.get(TICKETS).status_code == 200

    assert manager.delete(detail_url(credential_of(key).pk)).status_code == 200

    assert_error(partner.get(TICKETS), 401, "Não autenticado.", "api_key")


@pytest.mark.parametrize("credential_id", [str(uuid.uuid4()), "nao-e-uuid", "123", "hdk_live_abc"])
def test_revoke_of_an_unknown_credential_is_404(manager, organization, credential_id):
    credential = credential_of(make_key(organization))

    response = manager.delete(detail_url(credential_id))

    assert_error(response, 404, "Credencial não encontrada.", "id")
    credential.refresh_from_db()
    assert credential.is_active is True
    assert credential.revoked_at is None


# --- Permission -----------------------------------------------------------


def test_list_without_permission_is_403(agent_client, organization):
    make_key(organization)

    assert_error(agent_client.get(URL), 403, "Acesso negado.", "permissao")


def test_create_without_permission_is_403_and_writes_nothing(agent_client):
    response = agent_client.post(URL, {"nome": "ERP"}, format="json")

    assert_error(response, 403, "Acesso negado.", "permissao")
    assert ApiCredential.objects.count() == 0


def test_revoke_without_permission_is_403_and_keeps_the_credential_active(agent_client, organization):
    key = make_key(organization)
    credential = credential_of(key)

    response = agent_client.delete(detail_url(credential.pk))

    assert_error(response, 403, "Acesso negado.", "permissao")
    credential.refresh_from_db()
    assert credential.is_active is True
    assert credential.revoked_at is None
    assert bearer_client(key).get(TICKETS).status_code == 200


# --- Tenancy --------------------------------------------------------------


def test_revoking_another_organizations_credential_is_404_and_changes_nothing(manager, other_organization):
    other_key = make_key(other_organization)
    other_credential = credential_of(other_key)

    response = manager.delete(detail_url(other_credential.pk))
    unknown = manager.delete(detail_url(uuid.uuid4()))

    assert_error(response, 404, "Credencial não encontrada.", "id")
    assert response.json() == unknown.json()
    other_credential.refresh_from_db()
    assert other_credential.is_active is True
    assert other_credential.revoked_at is None
    assert bearer_client(other_key).get(TICKETS).status_code == 200


def test_list_never_shows_another_organizations_credentials(manager, organization, other_organization):
    own = credential_of(make_key(organization))
    other_keys = [make_key(other_organization, name=f"Outra {n}") for n in range(2)]
    other_ids = {str(credential_of(key).pk) for key in other_keys}

    response = manager.get(URL)

    assert [item["id"] for item in response.json()["data"]] == [str(own.pk)]
    text = response.content.decode()
    for other_id in other_ids:
        assert other_id not in text
    other_manager = panel_client(admin_of(other_organization).email)
    assert {item["id"] for item in other_manager.get(URL).json()["data"]} == other_ids


def test_created_credential_belongs_to_the_users_organization_only(manager, organization, other_organization):
    created = manager.post(URL, {"nome": "ERP"}, format="json").json()["data"]

    other_manager = panel_client(admin_of(other_organization).email)

    assert other_manager.get(URL).json()["data"] == []
    assert_error(other_manager.delete(detail_url(created["id"])), 404, "Credencial não encontrada.", "id")
    assert ApiCredential.objects.get(pk=created["id"]).is_active is True


# --- Secrets in logs ------------------------------------------------------


def test_create_never_logs_the_full_key(manager, caplog, settings):
    # DEBUG makes Django log every SQL statement with its parameters; Django's own
    # logger stops at INFO unless lowered too.
    settings.DEBUG = True
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="django")

    response = manager.post(URL, {"nome": "ERP"}, format="json")

    assert response.status_code == 201
    key = response.json()["data"]["chave"]
    assert caplog.records, "nothing was captured: the check below would prove nothing"
    assert key not in caplog.text
