"""The contact and status pages of the admin write through tickets' services: what tickets show of their
requester or their status changes, so those tickets move in the change list (GET /api/v1/tickets/alteracoes)."""

import pytest
from django.urls import reverse

from helpdesk.actors import SYSTEM
from helpdesk.models import AuditRecord
from tests.admin.test_admin_tickets import form_values
from tests.assertions import assert_success
from tests.factories import make_ticket, status_of
from tickets.models import Contact, StatusCategory, TicketStatus
from tickets.services import RequesterData, contact_anonymize, ticket_update

CHANGES = "/api/v1/tickets/alteracoes"

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def drain(partner, desde=None) -> tuple[list[dict], str]:
    seen, params = [], {"desde": desde} if desde else {}
    while True:
        page = assert_success(partner.get(CHANGES, params), 200, "Alterações listadas.")
        seen += page["itens"]
        params["desde"] = page["proximo_cursor"]
        if not page["tem_mais"]:
            return seen, page["proximo_cursor"]


def post_page(staff, url: str, form_id: str, **changes):
    values, _disabled = form_values(staff.get(url), form_id)
    values.update(changes, _save="Salvar")
    return staff.post(url, values)


def test_a_contact_edited_in_the_admin_moves_its_tickets_and_only_them(staff, partner, organization):
    maria = RequesterData(name="Maria", email="maria@example.test", external_id="cli-maria")
    asked = make_ticket(organization, subject="Da Maria", requester=maria)
    make_ticket(organization, subject="Do João", requester=RequesterData(name="João", external_id="cli-joao"))
    _, cursor = drain(partner)
    contact = Contact.objects.get(external_id="cli-maria")

    url = reverse("admin:tickets_contact_change", args=[contact.pk])
    response = post_page(staff, url, "contact_form", email="  Maria.Silva@Example.TEST ", phone="+55 11 5555-0000")

    assert response.status_code == 302
    contact.refresh_from_db()
    assert (contact.email, contact.phone) == ("maria.silva@example.test", "+55 11 5555-0000")
    seen, _ = drain(partner, cursor)
    assert [item["id"] for item in seen] == [str(asked.pk)]
    assert seen[0]["solicitante"]["email"] == "maria.silva@example.test"
    assert seen[0]["solicitante"]["telefone"] == "+55 11 5555-0000"


def test_a_contact_saved_unchanged_in_the_admin_moves_nothing(staff, partner, organization):
    make_ticket(organization, requester=RequesterData(name="Maria", external_id="cli-maria"))
    _, cursor = drain(partner)
    contact = Contact.objects.get(external_id="cli-maria")

    response = post_page(staff, reverse("admin:tickets_contact_change", args=[contact.pk]), "contact_form")

    assert response.status_code == 302
    assert drain(partner, cursor)[0] == []


def test_the_admin_takes_the_apis_email_limit_and_stores_what_lower_casing_lengthens(staff, organization):
    contact = make_ticket(organization, requester=RequesterData(name="Maria", external_id="cli-maria")).requester
    url = reverse("admin:tickets_contact_change", args=[contact.pk])
    lengthened = "\u0130" * 130 + "@example.test"  # 143 characters, 273 lower-cased

    too_long = post_page(staff, url, "contact_form", email="a" * 243 + "@example.test")
    stored = post_page(staff, url, "contact_form", email=lengthened)

    assert too_long.status_code == 200
    assert "Certifique-se de que o valor tenha no máximo 254 caracteres" in too_long.content.decode()
    assert stored.status_code == 302
    contact.refresh_from_db()
    assert contact.email == lengthened.lower()


def test_an_anonymised_contacts_page_is_read_only_and_a_post_changes_nothing(staff, organization):
    """contact_update refuses an anonymised contact (issue 21): its page offers no form to save."""
    make_ticket(organization, requester=RequesterData(name="Maria", email="maria@example.test", external_id="m"))
    contact = Contact.objects.get(external_id="m")
    contact_anonymize(contact=contact, actor=SYSTEM)
    url = reverse("admin:tickets_contact_change", args=[contact.pk])

    page = staff.get(url)
    refused = staff.post(url, {"name": "Maria", "email": "maria@example.test", "phone": "", "_save": "Salvar"})

    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert refused.status_code == 403
    contact.refresh_from_db()
    assert (contact.name, contact.email) == (Contact.ANONYMOUS_NAME, "")


def test_a_status_recoloured_in_the_admin_moves_the_tickets_that_show_it(staff, partner, organization):
    waiting = status_of(organization, StatusCategory.WAITING)
    shown = ticket_update(ticket=make_ticket(organization, subject="Aguardando"), status=waiting)
    make_ticket(organization, subject="Aberto")
    _, cursor = drain(partner)

    url = reverse("admin:tickets_ticketstatus_change", args=[waiting.pk])
    response = post_page(staff, url, "ticketstatus_form", color="#000000")

    assert response.status_code == 302
    seen, cursor = drain(partner, cursor)
    assert [item["id"] for item in seen] == [str(shown.pk)]
    assert seen[0]["status"] == {"nome": "Aguardando cliente", "categoria": "aguardando", "cor": "#000000"}

    reordered = post_page(staff, url, "ticketstatus_form", position="9")  # the order is not shown to partners
    assert reordered.status_code == 302
    assert TicketStatus.objects.get(pk=waiting.pk).position == 9
    assert drain(partner, cursor)[0] == []


def test_a_status_added_in_the_admin_keeps_the_rules_of_the_service(staff, organization):
    url = reverse("admin:tickets_ticketstatus_add")

    refused = post_page(staff, url, "ticketstatus_form", name="aberto", category="aberto", color="blue")
    created = post_page(staff, url, "ticketstatus_form", name=" Em análise ", category="em_andamento", color="#abcdef")

    assert refused.status_code == 200
    html = refused.content.decode()
    assert "Já existe um status com este nome." in html
    assert "Use uma cor no formato #RRGGBB." in html
    assert created.status_code == 302
    status = TicketStatus.objects.get(organization=organization, name="Em análise")
    assert (status.category, status.color) == ("em_andamento", "#ABCDEF")


def test_status_writes_in_the_admin_are_in_the_audit_trail(staff, organization, admin):
    waiting = status_of(organization, StatusCategory.WAITING)
    add, change = (
        reverse("admin:tickets_ticketstatus_add"),
        reverse("admin:tickets_ticketstatus_change", args=[waiting.pk]),
    )

    post_page(staff, add, "ticketstatus_form", name="Em análise", category="em_andamento", color="#abcdef")
    post_page(staff, change, "ticketstatus_form", color="#000000")

    records = AuditRecord.objects.filter(organization=organization, resource_type="status", actor_id=str(admin.pk))
    by_action = {record.action: record for record in records}
    assert set(by_action) == {"status.criado", "status.atualizado"}
    assert by_action["status.criado"].changes["nome"] == {"antes": None, "depois": "Em análise"}
    assert by_action["status.atualizado"].changes == {"cor": {"antes": waiting.color, "depois": "#000000"}}
