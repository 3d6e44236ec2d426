"""The admin's SLA policies page: a grid of minutes per priority and target, written through sla.services
(audited), its errors shown under the field, one policy set per organization, and another organization's
answering as missing."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from helpdesk.models import AuditRecord
from sla.models import SlaPolicies
from sla.policies import Policy, PolicySet
from sla.selectors import sla_policies
from sla.services import sla_policies_set
from tests.factories import make_agent

ADD = reverse("admin:sla_slapolicies_add")
LIST = reverse("admin:sla_slapolicies_changelist")
MINUTES = "Informe um número inteiro de minutos, de 1 a 525600, ou deixe em branco."


def change_url(row: SlaPolicies) -> str:
    return reverse("admin:sla_slapolicies_change", args=[row.pk])


def form(**values) -> dict:
    blank = {
        f"{priority}_{target}": ""
        for priority in ("baixa", "media", "alta", "urgente", "sem_prioridade")
        for target in ("first_response", "next_response", "resolution")
    }
    return blank | {"_save": "Salvar"} | values


def errors_of(response, field: str) -> list[str]:
    assert response.status_code == 200, response.status_code
    return list(response.context["adminform"].form.errors.get(field, []))


def test_staff_adds_the_organizations_policies_through_the_service(staff, admin, organization):
    response = staff.post(
        ADD,
        form(
            urgente_first_response="30",
            urgente_next_response="60",
            urgente_resolution="240",
            baixa_resolution="2400",
            sem_prioridade_first_response="480",
        ),
    )

    assert response.status_code == 302
    assert sla_policies(organization.pk, fresh=True) == PolicySet(
        (Policy("baixa", resolution=2400), Policy("urgente", 30, 60, 240), Policy(None, first_response=480))
    )
    record = AuditRecord.objects.get(action="sla.politicas_alteradas")
    assert (record.organization_id, record.actor_id) == (organization.pk, str(admin.pk))
    assert staff.get(ADD).status_code == 403  # one policy set per organization


def test_the_change_page_shows_each_target_in_its_cell_and_blanks_clear_a_policy(staff, organization):
    sla_policies_set(organization=organization, policies=[Policy("alta", 60, None, 480), Policy("media", 120)])
    row = SlaPolicies.objects.get()

    form_ = staff.get(change_url(row)).context["adminform"].form
    assert (form_.initial["alta_first_response"], form_.initial["alta_next_response"]) == (60, None)
    assert (form_.initial["alta_resolution"], form_.initial["media_first_response"]) == (480, 120)
    assert form_.initial["sem_prioridade_resolution"] is None

    response = staff.post(change_url(row), form(alta_first_response="60", alta_resolution="480"))

    assert response.status_code == 302
    assert sla_policies(organization.pk, fresh=True) == PolicySet((Policy("alta", 60, None, 480),))
    assert AuditRecord.objects.filter(action="sla.politicas_alteradas").count() == 2


def test_saving_the_policies_unchanged_records_nothing(staff, organization):
    sla_policies_set(organization=organization, policies=[Policy("alta", 60)])

    response = staff.post(change_url(SlaPolicies.objects.get()), form(alta_first_response="60"))

    assert response.status_code == 302
    assert AuditRecord.objects.filter(action="sla.politicas_alteradas").count() == 1


@pytest.mark.parametrize("minutes", ["0", "525601", "1.5", "trinta", "-3"])
def test_minutes_outside_1_to_525600_are_shown_on_their_field_and_nothing_is_written(staff, minutes):
    response = staff.post(ADD, form(media_first_response="60", media_resolution=minutes))

    assert errors_of(response, "media_resolution") == [MINUTES]
    assert not SlaPolicies.objects.exists()
    assert not AuditRecord.objects.filter(action="sla.politicas_alteradas").exists()


def test_another_organizations_policies_answer_as_missing(staff, other_organization):
    sla_policies_set(organization=other_organization, policies=[Policy("urgente", 17)])
    foreign = SlaPolicies.objects.get(organization=other_organization)

    response = staff.get(change_url(foreign), follow=True)
    posted = staff.post(change_url(foreign), form(urgente_first_response="99"), follow=True)

    assert str(foreign.pk) not in staff.get(LIST).content.decode()
    assert response.redirect_chain == [("/admin/", 302)]
    assert posted.redirect_chain == [("/admin/", 302)]
    assert sla_policies(other_organization.pk, fresh=True) == PolicySet((Policy("urgente", 17),))


@pytest.mark.parametrize("url", [LIST, ADD])
def test_an_agent_without_api_publica_gerenciar_is_refused(client, organization, url):
    agent = make_agent(organization, name="Sem permissão")
    agent.user.is_staff = True
    agent.user.save()
    client.force_login(agent.user)

    assert client.get(url).status_code == 403


def test_the_policies_cannot_be_deleted(staff, organization):
    sla_policies_set(organization=organization, policies=[Policy("alta", 60)])
    row = SlaPolicies.objects.get()

    response = staff.post(reverse("admin:sla_slapolicies_delete", args=[row.pk]), {"post": "yes"})

    assert response.status_code == 403
    assert SlaPolicies.objects.filter(pk=row.pk).exists()


def test_adding_a_blank_grid_stores_nothing_and_says_so(staff, organization):
    response = staff.post(ADD, form(), follow=True)

    assert response.redirect_chain == [(LIST, 302)]
    assert "Nenhuma política informada: sem políticas, nada a salvar." in [
        str(message) for message in response.context["messages"]
    ]
    assert not SlaPolicies.objects.exists()
    assert not LogEntry.objects.exists()
