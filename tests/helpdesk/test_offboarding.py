"""Offboarding: a deactivated agent, a suspended organization and a logout close every door at once."""

import pytest
from django.test import Client
from rest_framework.test import APIClient
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken

from helpdesk.models import User
from helpdesk.permissions import support_group_ensure
from helpdesk.services import agent_set_active, organization_set_active
from tests.assertions import assert_error, bearer_client
from tests.factories import PASSWORD, make_agent, make_key

LOGIN, REFRESH, LOGOUT = "/api/auth/login", "/api/auth/refresh", "/api/auth/logout"


def login(email: str) -> dict:
    response = APIClient().post(LOGIN, {"email": email, "senha": PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def refresh(token: str):
    return APIClient().post(REFRESH, {"refresh_token": token}, format="json")


def logout(token):
    return APIClient().post(LOGOUT, {"refresh_token": token}, format="json")


# --- A deactivated agent ------------------------------------------------------------


def test_deactivating_an_agent_revokes_its_tokens_and_login_at_once(organization):
    agent = make_agent(organization, name="Saindo")
    tokens = [login(agent.user.email), login(agent.user.email)]

    agent_set_active(agent=agent, is_active=False)

    for session in tokens:
        assert_error(bearer_client(session["access_token"]).get("/api/tickets"), 401, "Não autenticado.", "token")
        assert_error(refresh(session["refresh_token"]), 401, "Não autenticado.", "token")
    denied = APIClient().post(LOGIN, {"email": agent.user.email, "senha": PASSWORD}, format="json")
    assert_error(denied, 401, "Credenciais inválidas.", "credenciais")
    assert BlacklistedToken.objects.filter(token__user=agent.user).count() == 2


def test_reactivating_lets_the_agent_log_in_again_but_not_with_old_tokens(organization):
    agent = make_agent(organization, name="Volta")
    old = login(agent.user.email)
    agent_set_active(agent=agent, is_active=False)

    agent_set_active(agent=agent, is_active=True)

    assert refresh(old["refresh_token"]).status_code == 401
    fresh = login(agent.user.email)
    assert bearer_client(fresh["access_token"]).get("/api/tickets").status_code == 200


def test_organization_staff_deactivate_an_agent_from_the_admin(client, admin, organization):
    agent = make_agent(organization, name="Desligada")
    session = login(agent.user.email)
    client.force_login(admin)

    client.post(
        "/admin/helpdesk/agent/",
        {"action": "deactivate", "_selected_action": [str(agent.pk)], "index": "0"},
    )

    agent.user.refresh_from_db()
    assert agent.user.is_active is False
    assert refresh(session["refresh_token"]).status_code == 401


def test_unticking_active_on_the_agents_page_is_the_same_offboarding(client, admin, organization):
    agent = make_agent(organization, name="Desligada")
    session = login(agent.user.email)
    client.force_login(admin)

    response = client.post(f"/admin/helpdesk/agent/{agent.pk}/change/", {"name": "Desligada", "_save": "Salvar"})

    assert response.status_code == 302
    agent.refresh_from_db()
    agent.user.refresh_from_db()
    assert (agent.is_active, agent.user.is_active) == (False, False)
    assert refresh(session["refresh_token"]).status_code == 401


# --- Who may (de)activate whom -------------------------------------------------------------

OUTRANKED = "Você não pode ativar nem desativar um usuário com mais permissões do que as suas."


@pytest.fixture
def support_staff(organization, admin):
    """Staff of the organization in the Suporte group, without api_publica:gerenciar: less than its admin."""
    agent = make_agent(organization, name="Suporte")
    agent.user.is_staff = True
    agent.user.save(update_fields=["is_staff"])
    agent.user.groups.add(support_group_ensure())
    return agent.user


def agents_action(client, action: str, *agents):
    return client.post(
        "/admin/helpdesk/agent/",
        {"action": action, "_selected_action": [str(agent.pk) for agent in agents], "index": "0"},
        follow=True,
    )


def page_messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_staff_without_the_management_permission_cannot_deactivate_the_organizations_admin(
    client, support_staff, admin
):
    session = login(admin.email)
    client.force_login(support_staff)

    response = agents_action(client, "deactivate", admin.agent)

    assert page_messages(response) == [f"{OUTRANKED} Não alterado(s): {admin.agent.name}."]
    admin.refresh_from_db()
    admin.agent.refresh_from_db()
    assert (admin.is_active, admin.agent.is_active) == (True, True)
    assert not BlacklistedToken.objects.filter(token__user=admin).exists()
    assert refresh(session["refresh_token"]).status_code == 200


def test_staff_still_deactivate_an_agent_who_holds_no_more_than_they_do(client, support_staff, organization):
    plain = make_agent(organization, name="Comum")
    client.force_login(support_staff)

    response = agents_action(client, "deactivate", plain)

    assert page_messages(response) == []
    plain.user.refresh_from_db()
    assert plain.user.is_active is False


def test_unticking_the_admins_active_box_is_a_form_error_for_lesser_staff(client, support_staff, admin):
    client.force_login(support_staff)

    response = client.post(f"/admin/helpdesk/agent/{admin.agent.pk}/change/", {"name": "Admin", "_save": "Salvar"})

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"is_active": [OUTRANKED]}
    admin.refresh_from_db()
    admin.agent.refresh_from_db()
    assert (admin.is_active, admin.agent.is_active, admin.agent.name) == (True, True, "Administrador Acme")


def test_lesser_staff_cannot_reactivate_an_admin_a_superuser_deactivated(client, support_staff, admin):
    agent_set_active(agent=admin.agent, is_active=False)
    client.force_login(support_staff)

    response = agents_action(client, "activate", admin.agent)

    assert page_messages(response) == [f"{OUTRANKED} Não alterado(s): {admin.agent.name}."]
    denied = APIClient().post(LOGIN, {"email": admin.email, "senha": PASSWORD}, format="json")
    assert_error(denied, 401, "Credenciais inválidas.", "credenciais")


def test_activating_an_active_agent_does_not_undo_a_superusers_deactivation_of_the_user(client, admin, organization):
    agent = make_agent(organization, name="Bloqueada")
    superuser = User.objects.create_superuser(email="root@helpdesk.test", password=PASSWORD)
    client.force_login(superuser)
    client.post(
        f"/admin/helpdesk/user/{agent.user.pk}/change/",
        {"email": agent.user.email, "name": agent.name, "organization": str(organization.pk), "_save": "Salvar"},
    )
    agent.user.refresh_from_db()
    assert agent.user.is_active is False  # the platform's deactivation, the agent's own flag untouched
    client.force_login(admin)

    agents_action(client, "activate", agent)

    agent.user.refresh_from_db()
    assert agent.user.is_active is False
    denied = APIClient().post(LOGIN, {"email": agent.user.email, "senha": PASSWORD}, format="json")
    assert_error(denied, 401, "Credenciais inválidas.", "credenciais")


# --- A suspended organization ---------------------------------------------------------


@pytest.fixture
def suspended(organization, admin):
    key = make_key(organization)
    session = login(admin.email)
    organization_set_active(organization=organization, is_active=False)
    return {"key": key, "session": session}


def test_a_suspended_organizations_keys_are_refused(suspended):
    response = bearer_client(suspended["key"]).get("/api/v1/tickets")

    assert_error(response, 401, "Não autenticado.", "api_key")


def test_a_suspended_organizations_panel_tokens_are_refused(suspended):
    response = bearer_client(suspended["session"]["access_token"]).get("/api/webhooks")

    assert_error(response, 403, "Acesso negado.", "organizacao")
    assert_error(refresh(suspended["session"]["refresh_token"]), 401, "Não autenticado.", "token")


def test_a_suspended_organizations_users_cannot_log_in(suspended, admin):
    response = APIClient().post(LOGIN, {"email": admin.email, "senha": PASSWORD}, format="json")

    assert_error(response, 401, "Credenciais inválidas.", "credenciais")


def test_a_suspended_organizations_staff_are_out_of_the_admin(suspended, admin):
    client = Client()
    client.force_login(admin)

    assert client.get("/admin/tickets/ticket/").status_code == 302


def test_other_organizations_are_not_affected(suspended, other_organization):
    assert bearer_client(make_key(other_organization)).get("/api/v1/tickets").status_code == 200


def test_restoring_the_organization_opens_its_doors_again(suspended, organization):
    organization_set_active(organization=organization, is_active=True)

    assert bearer_client(suspended["key"]).get("/api/v1/tickets").status_code == 200
    assert bearer_client(suspended["session"]["access_token"]).get("/api/webhooks").status_code == 200


def test_only_superusers_suspend_organizations(client, admin, organization):
    client.force_login(admin)

    response = client.post(
        "/admin/helpdesk/organization/",
        {"action": "suspend", "_selected_action": [str(organization.pk)], "index": "0"},
    )

    assert response.status_code in (302, 403)
    organization.refresh_from_db()
    assert organization.is_active is True


# --- Logout -------------------------------------------------------------------------


def test_logout_blacklists_the_refresh_token(admin):
    session = login(admin.email)

    response = logout(session["refresh_token"])

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "Logout realizado.", "data": None, "errors": []}
    assert_error(refresh(session["refresh_token"]), 401, "Não autenticado.", "token")


def test_logging_out_twice_is_fine(admin):
    session = login(admin.email)
    logout(session["refresh_token"])

    assert logout(session["refresh_token"]).status_code == 200


@pytest.mark.parametrize("token", ["lixo", "a.b.c"])
def test_logout_with_a_bad_token_is_401(db, token):
    assert_error(logout(token), 401, "Não autenticado.", "token")


def test_logout_with_an_access_token_is_401(admin):
    session = login(admin.email)

    assert_error(logout(session["access_token"]), 401, "Não autenticado.", "token")
    assert refresh(session["refresh_token"]).status_code == 200
