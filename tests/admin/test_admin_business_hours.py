"""The admin's business hours page: written through sla.services (audited), sla.rules' errors shown under the
field and the line they concern, one calendar per organization, and another organization's answering as missing."""

from datetime import date

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from helpdesk.models import AuditRecord
from sla.calendar import BusinessCalendar, Holiday, Interval
from sla.models import BusinessHours
from sla.selectors import business_calendar
from sla.services import business_hours_set
from tests.factories import make_agent

ADD = reverse("admin:sla_businesshours_add")
LIST = reverse("admin:sla_businesshours_changelist")


def change_url(row: BusinessHours) -> str:
    return reverse("admin:sla_businesshours_change", args=[row.pk])


def form(**values) -> dict:
    return {"time_zone": "America/Sao_Paulo", "intervals_text": "", "holidays_text": "", "_save": "Salvar"} | values


def errors_of(response, field: str) -> list[str]:
    assert response.status_code == 200, response.status_code
    return list(response.context["adminform"].form.errors.get(field, []))


def test_staff_adds_the_organizations_calendar_through_the_service(staff, admin, organization):
    response = staff.post(
        ADD,
        form(
            time_zone="Europe/Lisbon",
            intervals_text="seg 08:00-12:00\nseg 13:00 - 18:00\n\nsex 22:00-24:00\nSáb 00:00-06:00",
            holidays_text="2026-12-25 Natal\n2026-06-10",
        ),
    )

    assert response.status_code == 302
    assert business_calendar(organization.pk, fresh=True) == BusinessCalendar(
        "Europe/Lisbon",
        (Interval(0, 480, 720), Interval(0, 780, 1080), Interval(4, 1320, 1440), Interval(5, 0, 360)),
        (Holiday(date(2026, 6, 10), ""), Holiday(date(2026, 12, 25), "Natal")),
    )
    record = AuditRecord.objects.get(action="horario_atendimento.alterado")
    assert (record.organization_id, record.actor_id) == (organization.pk, str(admin.pk))
    assert staff.get(ADD).status_code == 403  # one calendar per organization


def test_the_change_page_shows_the_calendar_a_line_each(staff, organization):
    business_hours_set(
        organization=organization,
        time_zone="UTC",
        intervals=[Interval(6, 0, 1440)],
        holidays=[Holiday(date(2026, 1, 1), "Ano-novo")],
    )

    form_ = staff.get(change_url(BusinessHours.objects.get())).context["adminform"].form

    assert (form_.initial["time_zone"], form_.initial["intervals_text"], form_.initial["holidays_text"]) == (
        "UTC",
        "dom 00:00-24:00",
        "2026-01-01 Ano-novo",
    )


def test_rule_errors_name_the_lines_and_nothing_is_written(staff):
    response = staff.post(
        ADD,
        form(
            time_zone="Marte/Olympus",
            intervals_text="seg 08:00-12:00\nter 10:00-09:00\nseg 11:00-13:00",
            holidays_text="2026-12-25\n\n2026-12-25 Natal",
        ),
    )

    assert errors_of(response, "time_zone") == [
        "Fuso horário desconhecido: informe um nome IANA, como America/Sao_Paulo."
    ]
    assert errors_of(response, "intervals_text") == [
        "Linha 2: O início deve ser anterior ao fim, no mesmo dia (o fim vai até 24:00).",
        "Linha 3: Sobrepõe a linha 1 (segunda-feira 08:00–12:00).",
    ]
    assert errors_of(response, "holidays_text") == ["Linha 3: Data repetida: já está na linha 1."]
    assert not BusinessHours.objects.exists()
    assert not AuditRecord.objects.filter(action="horario_atendimento.alterado").exists()


def test_unreadable_lines_are_errors_of_their_own(staff):
    response = staff.post(ADD, form(intervals_text="segunda 8h-12h\nseg 08:00-12:00", holidays_text="25/12/2026"))

    assert errors_of(response, "intervals_text") == ["Linha 1: escreva o dia e o horário, como “seg 08:00-12:00”."]
    assert errors_of(response, "holidays_text") == ["Linha 1: informe uma data válida no formato AAAA-MM-DD."]
    assert not BusinessHours.objects.exists()


def test_another_organizations_calendar_answers_as_missing(staff, other_organization):
    business_hours_set(organization=other_organization, time_zone="Asia/Tokyo", intervals=[], holidays=[])
    foreign = BusinessHours.objects.get(organization=other_organization)

    listed = staff.get(LIST)
    response = staff.get(change_url(foreign), follow=True)
    posted = staff.post(change_url(foreign), form(time_zone="UTC"), follow=True)

    assert "Asia/Tokyo" not in listed.content.decode()
    assert response.redirect_chain == [("/admin/", 302)]
    assert posted.redirect_chain == [("/admin/", 302)]
    assert business_calendar(other_organization.pk, fresh=True).time_zone == "Asia/Tokyo"


@pytest.mark.parametrize("url", [LIST, ADD])
def test_an_agent_without_api_publica_gerenciar_is_refused(client, organization, url):
    agent = make_agent(organization, name="Sem permissão")
    agent.user.is_staff = True
    agent.user.save()
    client.force_login(agent.user)

    assert client.get(url).status_code == 403


@pytest.mark.parametrize("continue_editing", [False, True])
def test_adding_the_default_stores_nothing_and_says_so(staff, organization, continue_editing):
    """The default (24x7 in São Paulo, no holidays) is what no calendar means: the service stores nothing, so the
    page neither reports an addition nor opens the change page of a row that does not exist."""
    response = staff.post(ADD, form(**({"_continue": "1"} if continue_editing else {})), follow=True)

    assert response.redirect_chain == [(LIST, 302)]
    assert "Este é o horário padrão (24x7 em America/Sao_Paulo, sem feriados): nada a salvar." in [
        str(message) for message in response.context["messages"]
    ]
    assert not BusinessHours.objects.exists()
    assert not LogEntry.objects.exists()
    assert staff.get(ADD).status_code == 200  # still none: it can be added


def test_a_holiday_line_may_separate_its_name_with_a_tab(staff, organization):
    assert staff.post(ADD, form(holidays_text="2026-12-25\tNatal")).status_code == 302

    assert business_calendar(organization.pk, fresh=True).holidays == (Holiday(date(2026, 12, 25), "Natal"),)
