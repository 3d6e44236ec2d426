"""The audit trail: one write through each door finds its record (who, from where, what), GET /api/auditoria
lists the organization's own records with its filters, no record holds a secret, and old records go."""

import io
import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from helpdesk.audit import AUDIT_ACTIONS
from helpdesk.models import AuditRecord, User
from helpdesk.services import agent_update, organization_set_active
from helpdesk.tasks import purge_expired_audit_records
from integrations.health import webhooks_deactivate_failing
from integrations.models import Webhook
from integrations.services import credential_create
from tests.assertions import assert_success, bearer_client
from tests.factories import (
    PASSWORD,
    credential_of,
    make_agent,
    make_key,
    make_ticket,
    make_webhook,
    png_file,
    status_of,
)
from tickets.models import Contact
from tickets.services import contact_delete

URL = "/api/auditoria"
BROWSER = "Mozilla/5.0 (auditoria)"


def forget_setup() -> None:
    """The fixtures' own writes (an organization, its admin, agents) are recorded too; not what a test looks at."""
    AuditRecord.objects.all().delete()


def only_record(organization, action: str) -> AuditRecord:
    [record] = AuditRecord.objects.filter(organization=organization, action=action)
    return record


# --- One write through every door ------------------------------------------------------------------------


def test_a_partner_write_is_recorded_with_its_key_address_and_user_agent(organization, api_key):
    client = bearer_client(api_key)
    body = {"assunto": "Pedido", "descricao": "Atrasado", "solicitante": {"nome": "Cliente"}}

    response = client.post("/api/v1/tickets", body, format="json", HTTP_USER_AGENT="ERP/2.1", REMOTE_ADDR="10.1.2.3")

    assert response.status_code == 201
    record = only_record(organization, "ticket.criado")
    credential = credential_of(api_key)
    assert (record.actor_type, record.actor_id) == ("credencial", str(credential.pk))
    assert credential.key_prefix in record.actor_name
    assert (record.ip, record.user_agent) == ("10.1.2.3", "ERP/2.1")
    assert (record.resource_type, record.resource_id) == ("ticket", response.json()["data"]["id"])
    assert record.changes["numero"] == {"antes": None, "depois": 1}


def test_an_ipv6_client_is_recorded_by_its_own_address_not_its_rate_limit_network(organization, api_key):
    body = {"assunto": "Pedido", "descricao": "Atrasado", "solicitante": {"nome": "Cliente"}}

    bearer_client(api_key).post("/api/v1/tickets", body, format="json", REMOTE_ADDR="2001:db8:1:2::7")

    assert only_record(organization, "ticket.criado").ip == "2001:db8:1:2::7"


def test_a_panel_write_is_recorded_with_its_user_and_what_changed(organization, agent, agent_client):
    ticket = make_ticket(organization)

    response = agent_client.patch(
        f"/api/tickets/{ticket.pk}",
        {"status_id": str(status_of(organization, "resolvido").pk)},
        format="json",
        HTTP_USER_AGENT=BROWSER,
    )

    assert response.status_code == 200, response.content
    record = only_record(organization, "ticket.status_alterado")
    assert (record.actor_type, record.actor_id, record.user_agent) == ("usuario", str(agent.user_id), BROWSER)
    assert record.changes == {"status": {"antes": ticket.status.name, "depois": "Resolvido"}}


def test_management_writes_are_recorded(manager, organization, admin, example_dns):
    forget_setup()
    created = manager.post("/api/api-keys", {"nome": "ERP", "escopos": ["tickets:ler"]}, format="json").json()["data"]
    manager.delete(f"/api/api-keys/{created['id']}")
    webhook = manager.post(
        "/api/webhooks",
        {"nome": "ERP", "url": "https://hooks.example.com/x?token=abc", "eventos": ["ticket.resolvido"]},
        format="json",
    ).json()["data"]
    manager.patch(f"/api/webhooks/{webhook['id']}", {"nome": "ERP 2", "regenerar_segredo": True}, format="json")
    manager.delete(f"/api/webhooks/{webhook['id']}")

    actions = list(
        AuditRecord.objects.filter(organization=organization).order_by("created_at").values_list("action", flat=True)
    )
    assert actions == [
        "credencial.criada",
        "credencial.revogada",
        "webhook.criado",
        "webhook.atualizado",
        "webhook.segredo_regenerado",
        "webhook.removido",
    ]
    assert set(AuditRecord.objects.values_list("actor_id", flat=True)) == {str(admin.pk)}
    assert only_record(organization, "credencial.criada").changes["escopos"] == {
        "antes": None,
        "depois": ["tickets:ler"],
    }
    assert only_record(organization, "webhook.atualizado").changes == {"nome": {"antes": "ERP", "depois": "ERP 2"}}
    # A URL's query string may carry the receiver's own token: the trail keeps scheme, host and path.
    assert only_record(organization, "webhook.criado").changes["url"]["depois"] == "https://hooks.example.com/x"


def test_an_admin_write_is_recorded_with_the_staff_user(organization, admin):
    key = make_key(organization, name="ERP")
    client = Client()
    client.force_login(admin)

    client.post(
        reverse("admin:integrations_apicredential_changelist"),
        {"action": "revoke", "_selected_action": [str(credential_of(key).pk)], "index": "0"},
        HTTP_USER_AGENT=BROWSER,
    )

    record = only_record(organization, "credencial.revogada")
    assert (record.actor_type, record.actor_id, record.user_agent) == ("usuario", str(admin.pk), BROWSER)


def test_an_operator_command_is_recorded_as_the_system_naming_the_command(organization):
    call_command("create_api_key", "--organization", str(organization.pk), "--name", "Operador", stdout=io.StringIO())

    record = only_record(organization, "credencial.criada")
    assert (record.actor_type, record.actor_id, record.actor_name) == ("sistema", "", "manage.py create_api_key")
    assert (record.ip, record.user_agent) == ("", "")


def test_beat_turning_off_a_failing_webhook_is_recorded_as_the_system(organization, example_dns, settings):
    webhook = make_webhook(organization)
    Webhook.objects.filter(pk=webhook.pk).update(failing_since=timezone.now() - timedelta(days=30))

    assert webhooks_deactivate_failing() == 1

    record = only_record(organization, "webhook.desativado")
    assert (record.actor_type, record.resource_id) == ("sistema", str(webhook.pk))
    assert record.changes["ativo"] == {"antes": True, "depois": False}


def test_a_refused_write_records_nothing(organization, manager, settings):
    settings.API_KEYS_PER_ORGANIZATION = 1
    make_key(organization)
    before = AuditRecord.objects.count()

    response = manager.post("/api/api-keys", {"nome": "Segunda"}, format="json")

    assert response.status_code == 422
    assert AuditRecord.objects.count() == before


# --- GET /api/auditoria -----------------------------------------------------------------------------------


def test_the_list_is_the_organizations_own_newest_first_in_the_documented_shape(
    manager, organization, other_organization, admin
):
    make_key(other_organization, name="Alheia")
    forget_setup()
    first = credential_create(organization=organization, name="Primeira", created_by=admin)[0]
    make_ticket(organization)

    response = manager.get(URL, HTTP_USER_AGENT=BROWSER)

    assert_success(response, 200, "Auditoria listada.")
    body = response.json()
    assert {key: body["data"][key] for key in ("total", "por_pagina", "pagina_atual", "ultima_pagina")} == {
        "total": 2,
        "por_pagina": 25,
        "pagina_atual": 1,
        "ultima_pagina": 1,
    }
    newest, oldest = body["data"]["data"]
    assert (newest["acao"], oldest["acao"]) == ("ticket.criado", "credencial.criada")
    assert set(oldest) == {"id", "criado_em", "acao", "ator", "origem", "recurso", "alteracoes"}
    assert oldest["ator"] == {"tipo": "sistema", "id": None, "nome": "sistema"}
    assert oldest["origem"] == {"ip": None, "user_agent": None}
    assert oldest["recurso"] == {"tipo": "credencial", "id": str(first.pk)}
    assert oldest["alteracoes"]["nome"] == {"antes": None, "depois": "Primeira"}


def test_the_list_filters_by_actor_resource_action_and_time(manager, organization, admin, agent):
    forget_setup()
    ticket = make_ticket(organization)
    manager.post("/api/api-keys", {"nome": "ERP"}, format="json")
    old = AuditRecord.objects.get(action="ticket.criado")
    AuditRecord.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))

    def ids(**params):
        response = manager.get(URL, params)
        assert response.status_code == 200, response.content
        return [item["acao"] for item in response.json()["data"]["data"]]

    assert ids(ator_id=str(admin.pk)) == ["credencial.criada"]
    assert ids(recurso_tipo="ticket", recurso_id=str(ticket.pk)) == ["ticket.criado"]
    assert ids(acao="credencial.criada") == ["credencial.criada"]
    since = (timezone.now() - timedelta(days=1)).isoformat()
    assert ids(desde=since) == ["credencial.criada"]
    assert ids(ate=since) == ["ticket.criado"]


@pytest.mark.parametrize(
    "params",
    [
        {"desde": "ontem"},
        {"ate": "2026-01-01T00:00:00"},
        {"por_pagina": "0"},
        {"acao": "credencial.apagada"},
        {"recurso_tipo": "fatura"},
    ],
)
def test_bad_filters_are_a_422(manager, params):
    response = manager.get(URL, params)

    assert response.status_code == 422
    assert set(response.json()["errors"]) <= set(params) | {"por_pagina"}
    assert set(params) & set(response.json()["errors"])


def test_every_action_the_trail_records_is_in_its_documented_catalogue():
    documented = (Path(__file__).parents[2] / "docs" / "decisions.md").read_text()

    assert [action for action in AUDIT_ACTIONS if f"`{action}`" not in documented] == []


def test_any_offset_iso_8601_allows_is_taken(manager):
    """PostgreSQL stores offsets up to 15:59; ISO 8601 and Python take more: the instant is used in UTC."""
    response = manager.get(URL, {"desde": "0737-11-19T05:39:37-19:41", "ate": "2999-01-01T00:00:00+23:59"})

    assert response.status_code == 200, response.content


def test_a_plain_agent_cannot_read_the_trail(organization, agent_client):
    response = agent_client.get(URL)

    assert (response.status_code, response.json()["errors"]["field"]) == (403, "permissao")


# --- No secret in any record -------------------------------------------------------------------------------


def test_no_record_nor_log_line_holds_a_key_secret_token_or_password(manager, organization, admin, example_dns, caplog):
    caplog.set_level(logging.DEBUG)
    created = manager.post("/api/api-keys", {"nome": "ERP"}, format="json").json()["data"]
    webhook = manager.post(
        "/api/webhooks",
        {"nome": "ERP", "url": "https://hooks.example.com/x", "eventos": ["ticket.resolvido"]},
        format="json",
    ).json()["data"]
    regenerated = manager.patch(f"/api/webhooks/{webhook['id']}", {"regenerar_segredo": True}, format="json")
    login = Client().post("/api/auth/login", {"email": admin.email, "senha": PASSWORD}, content_type="application/json")
    tokens = login.json()["data"]
    bearer_client(created["chave"]).post(
        "/api/v1/tickets", {"assunto": "a", "descricao": "b", "solicitante": {"nome": "c"}}, format="json"
    )
    make_agent(organization, name="Nova")

    secrets = [
        created["chave"],
        credential_of(created["chave"]).key_digest,
        webhook["segredo"],
        regenerated.json()["data"]["segredo"],
        tokens["access_token"],
        tokens["refresh_token"],
        PASSWORD,
    ]
    records = list(AuditRecord.objects.values())
    assert len(records) >= 5
    stored = json.dumps(records, default=str)
    logged = "\n".join(f"{record.getMessage()} {record.__dict__}" for record in caplog.records)
    assert [secret for secret in secrets if secret in stored] == []
    assert [secret for secret in secrets if secret in logged] == []
    assert any(record.name == "helpdesk.requests" for record in caplog.records)  # the log was captured


# --- Retention -------------------------------------------------------------------------------------------


def test_records_older_than_the_retention_are_purged(organization, settings):
    settings.AUDIT_RETENTION_DAYS = 30
    forget_setup()
    make_key(organization, name="Velha")
    make_key(organization, name="Nova")
    old, new = AuditRecord.objects.order_by("created_at")
    AuditRecord.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))

    assert purge_expired_audit_records() == 1

    assert list(AuditRecord.objects.values_list("pk", flat=True)) == [new.pk]


# --- Logins and logouts -------------------------------------------------------------------------------------


def test_logins_through_both_doors_and_a_logout_are_recorded(organization, admin):
    forget_setup()
    api = Client(HTTP_USER_AGENT=BROWSER)
    tokens = api.post(
        "/api/auth/login", {"email": admin.email, "senha": PASSWORD}, content_type="application/json"
    ).json()["data"]
    api.post("/api/auth/login", {"email": admin.email, "senha": "errada"}, content_type="application/json")
    Client().post(reverse("admin:login"), {"username": admin.email, "password": PASSWORD})
    api.post("/api/auth/logout", {"refresh_token": tokens["refresh_token"]}, content_type="application/json")

    records = AuditRecord.objects.filter(organization=organization).order_by("created_at")
    assert [(r.action, r.changes.get("porta", {}).get("depois")) for r in records] == [
        ("login.sucesso", "api"),
        ("login.falhou", "api"),
        ("login.sucesso", "admin"),
        ("logout", None),
    ]
    assert {(r.actor_type, r.actor_id, r.resource_id) for r in records} == {("usuario", str(admin.pk), str(admin.pk))}
    assert records[0].user_agent == BROWSER


def test_a_right_password_the_door_refuses_is_recorded_as_a_failed_login(organization, admin):
    """A suspended organization's admin (both doors) and a user who is not staff (the admin door) get
    the invalid-login answer: the trail says so, not a success."""
    clerk = User.objects.create_user(email="clerk@example.test", password=PASSWORD, organization=organization)
    organization_set_active(organization=organization, is_active=False)
    forget_setup()

    api = Client().post("/api/auth/login", {"email": admin.email, "senha": PASSWORD}, content_type="application/json")
    admin_door = Client()
    admin_door.post(reverse("admin:login"), {"username": admin.email, "password": PASSWORD})

    assert api.status_code == 401 and "_auth_user_id" not in admin_door.session
    assert logins() == [("login.falhou", str(admin.pk))] * 2

    organization_set_active(organization=organization, is_active=True)
    forget_setup()
    admin_door.post(reverse("admin:login"), {"username": clerk.email, "password": PASSWORD})

    assert "_auth_user_id" not in admin_door.session
    assert logins() == [("login.falhou", str(clerk.pk))]


def logins() -> list[tuple[str, str]]:
    records = AuditRecord.objects.filter(action__startswith="login.").order_by("created_at")
    return [(record.action, record.actor_id) for record in records]


def test_a_failed_login_for_no_account_is_a_platform_record(organization):
    forget_setup()

    Client().post("/api/auth/login", {"email": "ninguem@example.test", "senha": "x"}, content_type="application/json")

    [record] = AuditRecord.objects.all()
    assert (record.organization_id, record.action, record.actor_name) == (None, "login.falhou", "ninguem@example.test")


def test_an_agents_new_photo_and_a_deleted_contact_are_recorded(organization, agent):
    forget_setup()
    contact = Contact.objects.create(organization=organization, name="Sem tickets", email="sem@example.test")
    contact_id = str(contact.pk)  # a deleted row forgets its id

    agent_update(agent=agent, avatar=png_file())
    contact_delete(contact=contact)

    photo = only_record(organization, "atendente.atualizado")
    assert photo.changes == {"avatar": {"antes": False, "depois": True}}
    deleted = only_record(organization, "contato.excluido")
    assert (deleted.resource_id, deleted.changes) == (
        contact_id,
        {"nome": {"antes": "Sem tickets", "depois": None}},
    )


def test_a_keys_expiry_is_recorded_as_the_api_writes_instants(manager, organization):
    forget_setup()

    response = manager.post("/api/api-keys", {"nome": "ERP", "expira_em": "2999-01-01T12:00:00-03:00"}, format="json")

    assert response.status_code == 201, response.content
    record = only_record(organization, "credencial.criada")
    assert record.changes["expira_em"] == {"antes": None, "depois": "2999-01-01T15:00:00Z"}
    assert response.json()["data"]["expira_em"] == "2999-01-01T15:00:00Z"
