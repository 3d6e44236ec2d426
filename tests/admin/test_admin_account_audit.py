"""A superuser's writes of accounts and organizations in the admin are in the audit trail, as every other
door's (Django's own forms write them; helpdesk.services records what they wrote)."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from helpdesk.models import AuditRecord, Organization, User
from helpdesk.permissions import MANAGE_PUBLIC_API_CODENAME
from tests.factories import PASSWORD, make_ticket
from tickets.services import ticket_update

NEW_PASSWORD = "0utra-Senha-Forte-42"


@pytest.fixture
def root(client, db):
    client.force_login(User.objects.create_superuser(email="root@helpdesk.test", password=PASSWORD))
    return client


def forget() -> None:
    """The fixtures' own writes are recorded too; not what a test looks at."""
    AuditRecord.objects.all().delete()


def only(action: str) -> AuditRecord:
    [record] = AuditRecord.objects.filter(action=action)
    return record


def test_granting_staff_and_the_api_permission_is_recorded(root, organization, agent):
    user = agent.user
    permission = Permission.objects.get(codename=MANAGE_PUBLIC_API_CODENAME)
    form = {
        "email": user.email,
        "name": user.name,
        "organization": organization.pk,
        "is_active": "on",
        "is_staff": "on",
        "user_permissions": [permission.pk],
    }

    forget()
    response = root.post(reverse("admin:helpdesk_user_change", args=[user.pk]), form)

    assert response.status_code == 302, response.content
    record = only("usuario.atualizado")
    assert (record.organization_id, record.resource_type, record.resource_id) == (
        organization.pk,
        "usuario",
        str(user.pk),
    )
    assert record.changes == {
        "equipe": {"antes": False, "depois": True},
        "permissoes": {"antes": [], "depois": [MANAGE_PUBLIC_API_CODENAME]},
    }
    assert record.actor_type == "usuario" and User.objects.get(pk=record.actor_id).is_superuser


def test_a_password_set_in_the_admin_is_recorded_as_changed_never_as_itself(root, agent):
    url = reverse("admin:auth_user_password_change", args=[agent.user.pk])

    forget()
    response = root.post(url, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"})

    assert response.status_code == 302, response.content
    agent.user.refresh_from_db()
    assert agent.user.check_password(NEW_PASSWORD)
    record = only("usuario.atualizado")
    assert record.changes == {"senha_alterada": {"antes": None, "depois": True}}
    assert NEW_PASSWORD not in str(record.changes)


def test_an_account_deleted_in_the_admin_is_recorded(root, organization, agent):
    user = agent.user
    agent.delete()
    forget()

    response = root.post(reverse("admin:helpdesk_user_delete", args=[user.pk]), {"post": "yes"})

    assert response.status_code == 302, response.content
    record = only("usuario.excluido")
    assert (record.organization_id, record.resource_id) == (organization.pk, str(user.pk))
    assert record.changes["email"] == {"antes": user.email, "depois": None}


def test_an_agents_account_cannot_be_deleted_it_is_offboarded(root, organization, agent):
    """Deleting the user would take the agent and unassign its tickets outside the change list; the agent,
    which nobody deletes (AgentAdmin), keeps its user."""
    ticket = ticket_update(ticket=make_ticket(organization), assignee=agent)
    forget()

    page = root.post(reverse("admin:helpdesk_user_delete", args=[agent.user.pk]), {"post": "yes"})
    bulk = root.post(
        reverse("admin:helpdesk_user_changelist"),
        {"action": "delete_selected", "_selected_action": [agent.user.pk], "post": "yes"},
    )

    assert (page.status_code, bulk.status_code) == (403, 403)
    ticket.refresh_from_db()
    assert ticket.assignee_id == agent.pk and User.objects.filter(pk=agent.user.pk).exists()
    assert not AuditRecord.objects.exists()


def test_renaming_an_organization_is_recorded_and_an_unchanged_save_records_nothing(root, organization):
    url = reverse("admin:helpdesk_organization_change", args=[organization.pk])

    forget()
    root.post(url, {"name": organization.name, "is_active": "on"})
    assert not AuditRecord.objects.exists()
    response = root.post(url, {"name": "Novo Nome", "is_active": "on"})

    assert response.status_code == 302, response.content
    assert only("organizacao.atualizada").changes == {"nome": {"antes": organization.name, "depois": "Novo Nome"}}
    assert Organization.objects.get(pk=organization.pk).name == "Novo Nome"


def test_an_organization_added_in_the_admin_is_recorded(root):
    forget()
    response = root.post(reverse("admin:helpdesk_organization_add"), {"name": "Filial", "is_active": "on"})

    assert response.status_code == 302, response.content
    created = Organization.objects.get(name="Filial")
    assert (only("organizacao.criada").organization_id, only("organizacao.criada").changes) == (
        created.pk,
        {"nome": {"antes": None, "depois": "Filial"}},
    )
