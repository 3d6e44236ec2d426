"""sla.services.business_hours_set: the calendar replaced whole, its 422s (sla.rules), its audit record, and the
cached calendar dropped."""

from datetime import date

import pytest

from foundation.exceptions import ValidationFailed
from helpdesk.models import AuditRecord
from sla.calendar import DEFAULT_CALENDAR, BusinessCalendar, Holiday, Interval
from sla.models import BusinessHours
from sla.selectors import business_calendar
from sla.services import business_hours_set

OFFICE = [Interval(d, 8 * 60, 18 * 60) for d in range(5)]


def refused(organization, **values) -> dict:
    """The errors of a refused write, after checking nothing was written."""
    arguments = {"time_zone": "America/Sao_Paulo", "intervals": [], "holidays": []} | values
    with pytest.raises(ValidationFailed) as error:
        business_hours_set(organization=organization, **arguments)
    assert not BusinessHours.objects.exists()
    assert not AuditRecord.objects.filter(action="horario_atendimento.alterado").exists()
    return error.value.errors


def test_without_a_stored_calendar_the_organization_works_24x7_in_sao_paulo(organization):
    assert business_calendar(organization.pk) == DEFAULT_CALENDAR
    assert BusinessCalendar("America/Sao_Paulo", (), ()) == DEFAULT_CALENDAR


def test_a_calendar_is_stored_in_order_and_audited(organization):
    calendar = business_hours_set(
        organization=organization,
        time_zone="America/New_York",
        intervals=[Interval(1, 13 * 60, 18 * 60), Interval(0, 8 * 60, 12 * 60), Interval(1, 8 * 60, 12 * 60)],
        holidays=[Holiday(date(2026, 12, 25), " Natal "), Holiday(date(2026, 1, 1))],
    )

    assert calendar == BusinessCalendar(
        "America/New_York",
        (Interval(0, 480, 720), Interval(1, 480, 720), Interval(1, 780, 1080)),
        (Holiday(date(2026, 1, 1), ""), Holiday(date(2026, 12, 25), "Natal")),
    )
    assert business_calendar(organization.pk) == calendar
    row = BusinessHours.objects.get(organization=organization)
    assert row.intervals[0] == {"weekday": 0, "start": 480, "end": 720}
    assert row.holidays == [{"date": "2026-01-01", "name": ""}, {"date": "2026-12-25", "name": "Natal"}]
    record = AuditRecord.objects.get(action="horario_atendimento.alterado")
    assert (record.organization_id, record.resource_type, record.resource_id) == (
        organization.pk,
        "horario_atendimento",
        str(organization.pk),
    )
    assert record.changes["fuso_horario"] == {"antes": "America/Sao_Paulo", "depois": "America/New_York"}
    assert record.changes["intervalos"]["antes"] == []
    assert record.changes["feriados"]["depois"] == [
        {"data": "2026-01-01", "nome": None},
        {"data": "2026-12-25", "nome": "Natal"},
    ]


def test_a_change_drops_the_cached_calendar(organization):
    assert business_calendar(organization.pk) == DEFAULT_CALENDAR  # now cached

    business_hours_set(organization=organization, time_zone="UTC", intervals=OFFICE, holidays=[])

    assert business_calendar(organization.pk).time_zone == "UTC"


def test_the_same_calendar_again_writes_and_records_nothing(organization):
    business_hours_set(organization=organization, time_zone="UTC", intervals=OFFICE, holidays=[])
    updated_at = BusinessHours.objects.get().updated_at

    business_hours_set(organization=organization, time_zone="UTC", intervals=OFFICE[::-1], holidays=[])

    assert BusinessHours.objects.get().updated_at == updated_at
    assert AuditRecord.objects.filter(action="horario_atendimento.alterado").count() == 1


def test_the_default_sent_as_it_is_stores_nothing(organization):
    business_hours_set(organization=organization, time_zone="America/Sao_Paulo", intervals=[], holidays=[])

    assert not BusinessHours.objects.exists()
    assert not AuditRecord.objects.filter(action="horario_atendimento.alterado").exists()


def test_only_what_changed_is_recorded(organization):
    business_hours_set(organization=organization, time_zone="UTC", intervals=OFFICE, holidays=[])

    business_hours_set(
        organization=organization, time_zone="UTC", intervals=OFFICE, holidays=[Holiday(date(2026, 5, 1))]
    )

    record = AuditRecord.objects.filter(action="horario_atendimento.alterado").order_by("-created_at").first()
    assert record.changes == {"feriados": {"antes": [], "depois": [{"data": "2026-05-01", "nome": None}]}}


def test_an_unknown_time_zone_is_refused(organization):
    assert refused(organization, time_zone="America/Atlantida") == {
        "fuso_horario": ["Fuso horário desconhecido: informe um nome IANA, como America/Sao_Paulo."]
    }


@pytest.mark.parametrize(("start", "end"), [(600, 600), (720, 480), (0, 1441)])
def test_an_empty_or_inverted_interval_is_refused(organization, start, end):
    assert refused(organization, intervals=[Interval(0, 480, 540), Interval(2, start, end)]) == {
        "intervalos.1": ["O início deve ser anterior ao fim, no mesmo dia (o fim vai até 24:00)."]
    }


def test_overlapping_intervals_of_a_day_are_refused_naming_the_other(organization):
    intervals = [Interval(0, 480, 720), Interval(1, 600, 700), Interval(0, 700, 800), Interval(0, 300, 1440)]

    assert refused(organization, intervals=intervals) == {
        "intervalos.2": ["Sobrepõe intervalos.0 (segunda-feira 08:00–12:00)."],
        "intervalos.3": ["Sobrepõe intervalos.0 (segunda-feira 08:00–12:00)."],
    }


def test_touching_intervals_and_a_shift_across_midnight_are_accepted(organization):
    intervals = [Interval(0, 480, 720), Interval(0, 720, 1080), Interval(0, 1320, 1440), Interval(1, 0, 360)]

    calendar = business_hours_set(organization=organization, time_zone="UTC", intervals=intervals, holidays=[])

    assert calendar.intervals == tuple(intervals)


def test_a_weekday_outside_0_to_6_is_refused(organization):
    assert refused(organization, intervals=[Interval(7, 480, 540)]) == {
        "intervalos.0.dia_semana": ["Informe um dia de 0 (segunda-feira) a 6 (domingo)."]
    }


def test_a_repeated_holiday_is_refused(organization):
    holidays = [Holiday(date(2026, 12, 25)), Holiday(date(2026, 1, 1)), Holiday(date(2026, 12, 25), "Natal")]

    assert refused(organization, holidays=holidays) == {"feriados.2.data": ["Data repetida: já está em feriados.0."]}


def test_a_long_holiday_name_is_refused(organization):
    assert refused(organization, holidays=[Holiday(date(2026, 12, 25), "N" * 101)]) == {
        "feriados.0.nome": ["Certifique-se de que este campo não tenha mais de 100 caracteres."]
    }


def test_sizes_are_bounded(organization):
    intervals = [Interval(d % 7, d // 7 * 20, d // 7 * 20 + 10) for d in range(51)]
    holidays = [Holiday(date.fromordinal(date(2026, 1, 1).toordinal() + n)) for n in range(367)]

    assert refused(organization, intervals=intervals, holidays=holidays) == {
        "intervalos": ["Informe no máximo 50 intervalos."],
        "feriados": ["Informe no máximo 366 feriados."],
    }
    business_hours_set(organization=organization, time_zone="UTC", intervals=intervals[:50], holidays=holidays[:366])
