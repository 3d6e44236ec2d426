"""Macros in the admin: MacroAdmin for staff with the macro permissions, and the ticket page's "Macro" select,
its preview and its save through macro_apply, for any agent of the organization."""

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from helpdesk.models import AuditRecord
from helpdesk.services import agent_set_active
from integrations.models import WebhookEvent
from macros.models import Assignment, Macro
from tests.admin.test_admin_tickets import change_url, form_values, submit
from tests.factories import make_agent, make_ticket, status_of
from tests.macros.helpers import event_kinds, make_macro
from tickets.models import Reply, Ticket
from tickets.services import RequesterData

ADD = reverse("admin:macros_macro_add")
CHANGELIST = reverse("admin:macros_macro_changelist")
KNOWN = "{{solicitante.nome}}, {{ticket.numero}}, {{ticket.assunto}}, {{atendente.nome}}"


@pytest.fixture
def ticket(organization):
    return make_ticket(
        organization, subject="Sem rede", requester=RequesterData(name="Ana Cliente", email="ana@cliente.test")
    )


@pytest.fixture
def plain_staff(organization) -> Client:
    """An agent who works tickets in the admin (tickets and their replies) without the macro permissions."""
    user = make_agent(organization, name="Davi Plantão").user
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_ticket", "change_ticket", "view_reply", "change_reply"])
    )
    client = Client()
    client.force_login(user)
    return client


def preview_url(ticket, macro) -> str:
    return reverse("admin:tickets_ticket_macro_preview", args=[ticket.pk, macro.pk])


def macro_form(**values) -> dict:
    form = {
        "name": "Pedir dados",
        "body": "",
        "status": "",
        "priority": "",
        "assignment": "manter",
        "assignee": "",
        "tags_add_text": "",
        "tags_remove_text": "",
    }
    return {**form, **values}


def test_staff_with_the_permission_add_a_macro_through_the_service(staff, organization):
    waiting = status_of(organization, "aguardando")

    response = staff.post(
        ADD,
        macro_form(
            body="Olá {{ solicitante.nome }}, pode nos mandar o número do pedido?",
            status=str(waiting.pk),
            priority="alta",
            assignment="eu",
            tags_add_text="Aguardando Dados, pedido",
        ),
    )

    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    macro = Macro.objects.get()
    assert (macro.organization_id, macro.status_id, macro.priority, macro.assignment, macro.tags_add) == (
        organization.pk,
        waiting.pk,
        "alta",
        Assignment.ME,
        ["aguardando-dados", "pedido"],
    )
    assert AuditRecord.objects.filter(action="macro.criada", resource_id=str(macro.pk)).count() == 1


def test_an_unknown_placeholder_is_a_form_error_naming_it(staff):
    response = staff.post(ADD, macro_form(body="Sua chave: {{ticket.organization.api_credentials}}"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "body": [f"Variável desconhecida: {{{{ticket.organization.api_credentials}}}}. Use somente {KNOWN}."]
    }
    assert not Macro.objects.exists()


def test_tags_in_both_lists_and_a_taken_name_are_form_errors(staff, organization):
    make_macro(organization, name="Pedir dados")

    response = staff.post(ADD, macro_form(name="PEDIR DADOS", tags_add_text="vip", tags_remove_text="VIP"))

    assert response.context["adminform"].form.errors == {
        "name": ["Já existe uma macro com este nome."],
        "tags_remove_text": ['Tag em adicionar e em remover ao mesmo tempo: "vip".'],
    }
    assert Macro.objects.count() == 1


def test_staff_without_the_permission_cannot_manage_macros(plain_staff, organization):
    macro = make_macro(organization, name="Fechar", body="Tchau")

    assert plain_staff.get(CHANGELIST).status_code == 403
    assert plain_staff.post(ADD, macro_form(name="Nova")).status_code == 403
    change = reverse("admin:macros_macro_change", args=[macro.pk])
    assert plain_staff.post(change, macro_form(name="Mudada")).status_code == 403
    delete = reverse("admin:macros_macro_delete", args=[macro.pk])
    assert plain_staff.post(delete, {"post": "yes"}).status_code == 403
    assert list(Macro.objects.values_list("name", flat=True)) == ["Fechar"]


def test_another_organizations_macro_is_not_in_the_admin(staff, other_organization):
    theirs = make_macro(other_organization, name="Deles", body="Deles")

    listed = staff.get(CHANGELIST)
    page = staff.get(reverse("admin:macros_macro_change", args=[theirs.pk]))

    assert "Deles" not in listed.content.decode()
    assert page.status_code == 302  # Django's "does not exist", as for a missing id
    assert Macro.objects.get(pk=theirs.pk).name == "Deles"


def test_the_preview_fills_the_message_for_this_ticket_and_lists_the_actions(plain_staff, organization, ticket):
    macro = make_macro(
        organization,
        body="Olá {{solicitante.nome}}, ticket {{ticket.numero}}: {{atendente.nome}}.",
        internal=True,
        status=status_of(organization, "aguardando"),
        priority="urgente",
        assignment=Assignment.ME,
        tags_add=["vip"],
        tags_remove=["novo"],
    )

    response = plain_staff.get(preview_url(ticket, macro))

    assert response.status_code == 200
    assert response.json() == {
        "mensagem": f"Olá Ana Cliente, ticket {ticket.number}: Davi Plantão.",
        "interna": True,
        "acoes": [
            "Status: Aguardando cliente",
            "Prioridade: Urgente",
            "Atendente: você (Davi Plantão)",
            "Acrescentar tags: vip",
            "Retirar tags: novo",
        ],
    }


def test_the_preview_of_another_organizations_macro_or_ticket_is_a_404(staff, organization, other_organization):
    mine, theirs = make_macro(organization, body="Minha"), make_macro(other_organization, body="Deles")
    my_ticket, their_ticket = make_ticket(organization), make_ticket(other_organization)

    assert staff.get(preview_url(my_ticket, theirs)).status_code == 404
    assert staff.get(preview_url(their_ticket, mine)).status_code == 404
    assert staff.get(reverse("admin:tickets_ticket_macro_preview", args=[my_ticket.pk, "x"])).status_code == 404


def test_the_ticket_page_offers_only_the_organizations_macros(plain_staff, organization, other_organization, ticket):
    mine = make_macro(organization, name="Minha macro")
    make_macro(other_organization, name="Macro alheia")

    page = plain_staff.get(change_url(ticket)).content.decode()

    assert f'<option value="{mine.pk}">Minha macro</option>' in page
    assert "Macro alheia" not in page
    assert "macros/macro_picker.js" in page
    assert f'data-preview-url="/admin/tickets/ticket/{ticket.pk}/macro/"' in page


def test_saving_the_ticket_page_with_a_macro_applies_it_with_the_edited_text(plain_staff, organization, ticket):
    macro = make_macro(
        organization,
        body="Texto da macro",
        status=status_of(organization, "resolvido"),
        priority="baixa",
        tags_add=["resolvido-rapido"],
    )
    WebhookEvent.objects.all().delete()

    response = submit(plain_staff, ticket, macro=str(macro.pk), new_reply="Texto editado pelo Davi")

    assert response.status_code == 302
    row = Ticket.objects.select_related("status").get(pk=ticket.pk)
    assert (row.status.category, row.priority, row.tags) == ("resolvido", "baixa", ["resolvido-rapido"])
    assert list(Reply.objects.filter(ticket=ticket).values_list("body", "is_internal")) == [
        ("Texto editado pelo Davi", False)
    ]
    assert event_kinds(ticket) == [
        "ticket.status_alterado",
        "ticket.resolvido",
        "ticket.prioridade_alterada",
        "ticket.tags_alteradas",
        "ticket.resposta_publica",
    ]


def test_the_nota_interna_box_decides_public_or_note_when_applying(plain_staff, organization, ticket):
    macro = make_macro(organization, body="Pública na macro")

    submit(plain_staff, ticket, macro=str(macro.pk), new_reply="Virou nota", internal="on")

    assert list(Reply.objects.filter(ticket=ticket).values_list("body", "is_internal")) == [("Virou nota", True)]


def test_a_refused_macro_leaves_the_ticket_and_says_why(plain_staff, organization, ticket):
    colleague = make_agent(organization, name="Saiu")
    macro = make_macro(organization, priority="urgente", assignment=Assignment.AGENT, assignee=colleague)
    agent_set_active(agent=colleague, is_active=False)
    before = Ticket.objects.filter(pk=ticket.pk).values().get()

    response = submit(plain_staff, ticket, macro=str(macro.pk), new_reply="Olá", priority="alta")

    assert response.status_code == 302
    messages = [str(message) for message in response.wsgi_request._messages]
    assert messages == ["O atendente desta macro está inativo ou não existe mais."]
    assert Ticket.objects.filter(pk=ticket.pk).values().get() == before  # the page's own change rolled back too
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_a_macro_with_files_is_refused_on_the_form(plain_staff, organization, ticket):
    macro = make_macro(organization, body="Olá")
    page = plain_staff.get(change_url(ticket))
    values, _ = form_values(page)
    values.update(macro=str(macro.pk), new_reply="Olá", _save="Salvar")
    values["attachments"] = SimpleUploadedFile("a.txt", b"oi", "text/plain")

    response = plain_staff.post(change_url(ticket), values)

    assert response.context["adminform"].form.errors == {"attachments": ["Envie anexos numa resposta sem macro."]}
    assert not Reply.objects.filter(ticket=ticket).exists()
