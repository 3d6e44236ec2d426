"""`GET/PUT /api/horario-atendimento` (panel, api_publica:gerenciar): the organization's business hours through
the HTTP client, the envelope and every 422 exactly."""

import pytest

from helpdesk.models import AuditRecord
from sla.models import BusinessHours
from tests.assertions import assert_exact_validation_error, assert_success

URL = "/api/horario-atendimento"
DEFAULT = {"fuso_horario": "America/Sao_Paulo", "intervalos": [], "feriados": []}
CLOCK = "Informe um horário HH:MM, de 00:00 a 23:59 (o fim pode ser 24:00)."
WEEKDAY = "Informe um dia de 0 (segunda-feira) a 6 (domingo)."


def body(**values) -> dict:
    return {
        "fuso_horario": "America/Sao_Paulo",
        "intervalos": [{"dia_semana": 0, "inicio": "08:00", "fim": "12:00"}],
        "feriados": [],
    } | values


def put(client, payload):
    return client.put(URL, payload, format="json")


def test_without_a_calendar_the_answer_is_24x7_in_sao_paulo(manager):
    assert assert_success(manager.get(URL), 200, "Horário de atendimento encontrado.") == DEFAULT


def test_a_calendar_is_replaced_whole_and_read_back_in_order(manager, organization):
    payload = {
        "fuso_horario": "Europe/Lisbon",
        "intervalos": [
            {"dia_semana": 4, "inicio": "22:00", "fim": "24:00"},
            {"dia_semana": 5, "inicio": "00:00", "fim": "06:00"},
            {"dia_semana": 0, "inicio": "13:00", "fim": "18:00"},
            {"dia_semana": 0, "inicio": "08:00", "fim": "12:00"},
        ],
        "feriados": [
            {"data": "2026-12-25", "nome": "Natal"},
            {"data": "2026-06-10"},
            {"data": "2026-01-01", "nome": ""},
        ],
        "organizacao": "ignorada",
    }
    expected = {
        "fuso_horario": "Europe/Lisbon",
        "intervalos": [
            {"dia_semana": 0, "inicio": "08:00", "fim": "12:00"},
            {"dia_semana": 0, "inicio": "13:00", "fim": "18:00"},
            {"dia_semana": 4, "inicio": "22:00", "fim": "24:00"},
            {"dia_semana": 5, "inicio": "00:00", "fim": "06:00"},
        ],
        "feriados": [
            {"data": "2026-01-01", "nome": None},
            {"data": "2026-06-10", "nome": None},
            {"data": "2026-12-25", "nome": "Natal"},
        ],
    }

    assert assert_success(put(manager, payload), 200, "Horário de atendimento atualizado.") == expected
    assert assert_success(manager.get(URL), 200, "Horário de atendimento encontrado.") == expected
    record = AuditRecord.objects.get(action="horario_atendimento.alterado")
    assert (record.organization_id, record.actor_type) == (organization.pk, AuditRecord.ACTOR_USER)


def test_an_empty_week_is_24x7_again(manager):
    put(manager, body())

    assert assert_success(put(manager, body(intervalos=[])), 200, "Horário de atendimento atualizado.") == DEFAULT


def refused(manager, payload, errors: dict) -> None:
    assert_exact_validation_error(put(manager, payload), errors)
    assert not BusinessHours.objects.exists()
    assert not AuditRecord.objects.filter(action="horario_atendimento.alterado").exists()


def test_overlapping_intervals_of_a_day_are_a_422_naming_both(manager):
    intervalos = [
        {"dia_semana": 2, "inicio": "08:00", "fim": "12:00"},
        {"dia_semana": 3, "inicio": "11:00", "fim": "13:00"},
        {"dia_semana": 2, "inicio": "11:59", "fim": "13:00"},
    ]

    refused(
        manager, body(intervalos=intervalos), {"intervalos.2": ["Sobrepõe intervalos.0 (quarta-feira 08:00–12:00)."]}
    )


@pytest.mark.parametrize(("inicio", "fim"), [("12:00", "08:00"), ("09:00", "09:00"), ("24:00", "24:00")])
def test_an_inverted_or_empty_interval_is_a_422(manager, inicio, fim):
    refused(
        manager,
        body(intervalos=[{"dia_semana": 1, "inicio": inicio, "fim": fim}]),
        {"intervalos.0": ["O início deve ser anterior ao fim, no mesmo dia (o fim vai até 24:00)."]},
    )


@pytest.mark.parametrize("zone", ["Brasil/Brasilia", "localtime", "Factory", "posixrules", "../etc/passwd"])
def test_an_unknown_zone_is_a_422_on_fuso_horario(manager, zone):
    """The host's own setting (`localtime`) and the database's placeholder files are no place's time."""
    refused(
        manager,
        body(fuso_horario=zone),
        {"fuso_horario": ["Fuso horário desconhecido: informe um nome IANA, como America/Sao_Paulo."]},
    )


@pytest.mark.parametrize("day", ["2026-02-30", "25/12/2026", "2026-1-01", "", 20261225, None])
def test_a_bad_holiday_date_is_a_422_on_its_data(manager, day):
    message = {
        "": "Este campo não pode estar em branco.",
        20261225: "Informe um texto.",
        None: "Este campo não pode ser nulo.",
    }.get(day, "Informe uma data válida no formato AAAA-MM-DD.")

    refused(manager, body(feriados=[{"data": "2026-01-01"}, {"data": day}]), {"feriados.1.data": [message]})


def test_a_repeated_holiday_is_a_422(manager):
    feriados = [{"data": "2026-12-25", "nome": "Natal"}, {"data": "2026-12-25"}]

    refused(manager, body(feriados=feriados), {"feriados.1.data": ["Data repetida: já está em feriados.0."]})


@pytest.mark.parametrize("clock", ["8:00", "24:01", "12:60", "25:00", "12h00", "12:00:00", 800])
def test_a_bad_clock_is_a_422_on_its_field(manager, clock):
    message = "Informe um texto." if clock == 800 else CLOCK

    refused(
        manager,
        body(intervalos=[{"dia_semana": 0, "inicio": clock, "fim": "18:00"}]),
        {"intervalos.0.inicio": [message]},
    )


@pytest.mark.parametrize("weekday", [7, -1, "1", True, 1.0, None])
def test_a_bad_weekday_is_a_422(manager, weekday):
    message = "Este campo não pode ser nulo." if weekday is None else WEEKDAY

    refused(
        manager,
        body(intervalos=[{"dia_semana": weekday, "inicio": "08:00", "fim": "18:00"}]),
        {"intervalos.0.dia_semana": [message]},
    )


def test_every_field_is_required(manager):
    refused(
        manager,
        {},
        {
            "fuso_horario": ["Este campo é obrigatório."],
            "intervalos": ["Este campo é obrigatório."],
            "feriados": ["Este campo é obrigatório."],
        },
    )


def test_sizes_are_bounded(manager):
    intervalos = [{"dia_semana": n % 7, "inicio": f"{n // 7:02d}:00", "fim": f"{n // 7:02d}:30"} for n in range(51)]
    feriados = [{"data": f"2026-01-{n:02d}"} for n in range(1, 32)] * 12  # 372, and repeated

    response = put(manager, body(intervalos=intervalos, feriados=feriados))

    assert_exact_validation_error(
        response, {"intervalos": ["Informe no máximo 50 intervalos."], "feriados": ["Informe no máximo 366 feriados."]}
    )
    assert not BusinessHours.objects.exists()
    assert_success(put(manager, body(intervalos=intervalos[:50])), 200, "Horário de atendimento atualizado.")


def test_a_list_far_too_long_is_refused_for_its_length_alone(manager):
    """Its items are not looked at (DRF would check each `{}` and answer an error per item)."""
    response = put(manager, body(intervalos=[{}] * 20_000, feriados=[7] * 20_000))

    assert_exact_validation_error(
        response, {"intervalos": ["Informe no máximo 50 intervalos."], "feriados": ["Informe no máximo 366 feriados."]}
    )
