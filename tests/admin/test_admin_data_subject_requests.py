"""The admin's data-subject requests on the contact page: "Anonimizar" asks first, then goes through the
API's service (events scrubbed, contato.anonimizado sent); "Exportar" downloads the API's document. Both need
api_publica:gerenciar, as the API does; another organization's contact is the admin's missing object."""

import json

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from helpdesk.models import AuditRecord
from integrations.models import EventKind, WebhookEvent
from tests.assertions import run_admin_action
from tests.factories import make_agent, make_agent_reply, make_ticket, make_webhook
from tickets.models import Contact
from tickets.services import RequesterData

pytestmark = pytest.mark.usefixtures("example_dns")

CHANGELIST = "admin:tickets_contact_changelist"
NAME, EMAIL = "Joana Titular Exemplar", "joana.titular@exemplo.test"


@pytest.fixture
def joana(organization, agent) -> Contact:
    make_webhook(organization)
    ticket = make_ticket(organization, requester=RequesterData(name=NAME, email=EMAIL, phone="+55 11 98888-7777"))
    make_agent_reply(ticket, agent, body="Sai hoje.")
    return ticket.requester


@pytest.fixture
def support(organization) -> Client:
    """Staff who work contacts (view and change them) but do not manage the public API."""
    user = make_agent(organization, name="Suporte Sem LGPD").user
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_contact", "change_contact"]))
    client = Client()
    client.force_login(user)
    return client


def test_anonymise_asks_first_and_changes_nothing_until_confirmed(staff, joana):
    page = run_admin_action(staff, reverse(CHANGELIST), "anonymize_selected", [joana])

    assert page.status_code == 200
    assert "irreversível" in page.content.decode()
    assert 'name="post" value="yes"' in page.content.decode()
    joana.refresh_from_db()
    assert (joana.name, joana.anonymized_at) == (NAME, None)
    assert not WebhookEvent.objects.filter(kind=EventKind.CONTACT_ANONYMIZED).exists()


def test_confirmed_anonymisation_goes_through_the_service(staff, admin, joana):
    staff.post(
        reverse(CHANGELIST),
        {"action": "anonymize_selected", "_selected_action": [str(joana.pk)], "post": "yes"},
        follow=True,
    )

    joana.refresh_from_db()
    assert (joana.name, joana.email, joana.phone, joana.external_id) == ("Contato anonimizado", "", "", None)
    assert joana.anonymized_at is not None
    bodies = " ".join(WebhookEvent.objects.values_list("body", flat=True))
    assert NAME not in bodies and EMAIL not in bodies
    [event] = WebhookEvent.objects.filter(kind=EventKind.CONTACT_ANONYMIZED)
    assert json.loads(event.body)["data"]["ator"]["id"] == str(admin.agent.pk)
    [record] = AuditRecord.objects.filter(action="contato.anonimizado")
    assert record.actor_id == str(admin.pk)


def test_export_downloads_the_apis_document(staff, joana):
    page = staff.get(reverse("admin:tickets_contact_change", args=[joana.pk]))
    url = reverse("admin:tickets_contact_export", args=[joana.pk])
    assert url in page.content.decode()

    response = staff.get(url)

    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="contato-{joana.pk}.json"'
    document = json.loads(response.content)
    assert document["contato"]["email"] == EMAIL
    assert [event["evento"] for event in document["eventos"]] == ["ticket.resposta_publica"]
    assert AuditRecord.objects.filter(action="contato.exportado", resource_id=str(joana.pk)).count() == 1


def test_staff_without_the_public_api_permission_may_neither_anonymise_nor_export(support, joana):
    page = support.get(reverse(CHANGELIST))
    run_admin_action(support, reverse(CHANGELIST), "anonymize_selected", [joana])
    support.post(
        reverse(CHANGELIST), {"action": "anonymize_selected", "_selected_action": [str(joana.pk)], "post": "yes"}
    )
    export = support.get(reverse("admin:tickets_contact_export", args=[joana.pk]))

    assert page.status_code == 200
    assert b'value="anonymize_selected"' not in page.content
    assert export.status_code == 403
    joana.refresh_from_db()
    assert (joana.name, joana.anonymized_at) == (NAME, None)
    assert not AuditRecord.objects.filter(action__in=["contato.anonimizado", "contato.exportado"]).exists()


def test_another_organizations_contact_cannot_be_exported_or_anonymised(staff, other_organization):
    theirs = make_ticket(other_organization, requester=RequesterData(name=NAME, email=EMAIL)).requester

    export = staff.get(reverse("admin:tickets_contact_export", args=[theirs.pk]))
    staff.post(
        reverse(CHANGELIST), {"action": "anonymize_selected", "_selected_action": [str(theirs.pk)], "post": "yes"}
    )

    assert export.status_code == 404
    theirs.refresh_from_db()
    assert (theirs.name, theirs.anonymized_at) == (NAME, None)
