"""Admin actions need the permission to change what they change: a view-only user runs none of them."""

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from helpdesk.models import Agent
from integrations.models import ApiCredential, WebhookDelivery
from tests.assertions import run_admin_action
from tests.factories import make_agent, make_key, make_test_delivery, make_ticket, make_webhook
from tickets.models import StatusCategory, Ticket


@pytest.fixture
def viewer(organization) -> Client:
    """Staff of the organization who may only look: view permissions, no change."""
    user = make_agent(organization, name="Só Olha").user
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    codenames = ["view_ticket", "view_agent", "view_apicredential", "view_webhookdelivery"]
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def changelist(model: str) -> str:
    app = {"ticket": "tickets", "agent": "helpdesk"}.get(model, "integrations")
    return reverse(f"admin:{app}_{model}_changelist")


def test_a_view_only_user_cannot_resolve_tickets(viewer, organization):
    ticket = make_ticket(organization)

    page = viewer.get(changelist("ticket"), {"fila": "todos"})
    run_admin_action(viewer, changelist("ticket"), "resolve", [ticket])

    assert page.status_code == 200
    assert b'value="resolve"' not in page.content
    assert Ticket.objects.get(pk=ticket.pk).status.category == StatusCategory.OPEN


def test_a_view_only_user_cannot_deactivate_agents(viewer, organization):
    agent = make_agent(organization, name="Ativo")

    run_admin_action(viewer, changelist("agent"), "deactivate", [agent])

    assert Agent.objects.get(pk=agent.pk).is_active is True


def test_a_view_only_user_cannot_revoke_keys(viewer, organization):
    make_key(organization)
    credential = ApiCredential.objects.get(organization=organization)

    run_admin_action(viewer, changelist("apicredential"), "revoke", [credential])

    assert ApiCredential.objects.get(pk=credential.pk).is_active is True


def test_sending_again_is_for_those_who_manage_the_public_api(staff, viewer, organization, insecure_webhook_urls):
    delivery = make_test_delivery(make_webhook(organization, url="http://127.0.0.1:9/h"))

    run_admin_action(viewer, changelist("webhookdelivery"), "send_again", [delivery])
    assert WebhookDelivery.objects.filter(event=delivery.event).count() == 1

    run_admin_action(staff, changelist("webhookdelivery"), "send_again", [delivery])
    assert WebhookDelivery.objects.filter(event=delivery.event).count() == 2
