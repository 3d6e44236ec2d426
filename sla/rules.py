"""What a calendar may hold, checked once for every door (the panel's PUT, the admin): the 422s of
`horario_atendimento`, named as the API names its fields (`fuso_horario`, `intervalos.<i>`, `feriados.<i>.data`),
and those of the SLA policies (`politicas.<i>.prioridade`). Pure functions: no query."""

import re
from datetime import date
from functools import cache
from zoneinfo import available_timezones

from foundation.exceptions import ValidationFailed
from sla.calendar import MINUTES_PER_DAY, BusinessCalendar, Holiday, Interval
from sla.policies import PRIORITIES, Policy, PolicySet

MAX_INTERVALS = 50
MAX_HOLIDAYS = 366
HOLIDAY_NAME_MAX_LENGTH = 100
TOO_MANY_INTERVALS_MESSAGE = f"Informe no máximo {MAX_INTERVALS} intervalos."
TOO_MANY_HOLIDAYS_MESSAGE = f"Informe no máximo {MAX_HOLIDAYS} feriados."
WEEKDAYS = ("segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo")
_CLOCK = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])|24:00")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


# Names zoneinfo reads that are not a place's time: the host's own setting (whatever the machine is set to, and
# absent on some) and the database's placeholder and template files.
NOT_PLACES = frozenset({"localtime", "Factory", "posixrules"})


@cache
def known_time_zones() -> frozenset[str]:
    return frozenset(available_timezones()) - NOT_PLACES


def clock_minutes(text) -> int | None:
    """ "HH:MM" (00:00 to 23:59, or 24:00, the end of the day) as minutes after midnight; None otherwise."""
    match = _CLOCK.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    return MINUTES_PER_DAY if text == "24:00" else int(match.group(1)) * 60 + int(match.group(2))


def clock_text(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def iso_date(text) -> date | None:
    """ "YYYY-MM-DD", a real date; None otherwise."""
    if not isinstance(text, str) or not _DATE.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def describe(interval: Interval) -> str:
    return f"{WEEKDAYS[interval.weekday]} {clock_text(interval.start)}–{clock_text(interval.end)}"


def calendar_check(*, time_zone: str, intervals: list[Interval], holidays: list[Holiday]) -> BusinessCalendar:
    """The calendar these values make, in its one order (intervals by weekday and start, holidays by date), or a
    ValidationFailed naming every problem. Each interval lies within its weekday (`start` < `end`, `end` up to
    24:00); intervals of one weekday do not overlap (touching is fine); a date is a holiday once."""
    errors: dict[str, list[str]] = {}
    if time_zone not in known_time_zones():
        errors["fuso_horario"] = ["Fuso horário desconhecido: informe um nome IANA, como America/Sao_Paulo."]
    if len(intervals) > MAX_INTERVALS:
        errors["intervalos"] = [TOO_MANY_INTERVALS_MESSAGE]
    else:
        errors |= _interval_problems(intervals)
    if len(holidays) > MAX_HOLIDAYS:
        errors["feriados"] = [TOO_MANY_HOLIDAYS_MESSAGE]
    else:
        errors |= _holiday_problems(holidays)
    if errors:
        raise ValidationFailed(errors)
    return BusinessCalendar(
        time_zone=time_zone,
        intervals=tuple(sorted(intervals)),
        holidays=tuple(sorted(Holiday(h.date, h.name.strip()) for h in holidays)),
    )


def _interval_problems(intervals: list[Interval]) -> dict[str, list[str]]:
    errors = {}
    kept: list[tuple[int, Interval]] = []
    for index, interval in enumerate(intervals):
        name = f"intervalos.{index}"
        if interval.weekday not in range(7):
            errors[f"{name}.dia_semana"] = ["Informe um dia de 0 (segunda-feira) a 6 (domingo)."]
        elif not 0 <= interval.start < interval.end <= MINUTES_PER_DAY:
            errors[name] = ["O início deve ser anterior ao fim, no mesmo dia (o fim vai até 24:00)."]
        else:
            for other_index, other in kept:
                if other.weekday == interval.weekday and other.start < interval.end and interval.start < other.end:
                    errors[name] = [f"Sobrepõe intervalos.{other_index} ({describe(other)})."]
                    break
            else:
                kept.append((index, interval))
    return errors


def _holiday_problems(holidays: list[Holiday]) -> dict[str, list[str]]:
    errors = {}
    seen: dict[date, int] = {}
    for index, holiday in enumerate(holidays):
        if holiday.date in seen:
            errors[f"feriados.{index}.data"] = [f"Data repetida: já está em feriados.{seen[holiday.date]}."]
        else:
            seen[holiday.date] = index
        if len(holiday.name.strip()) > HOLIDAY_NAME_MAX_LENGTH:
            errors[f"feriados.{index}.nome"] = [
                f"Certifique-se de que este campo não tenha mais de {HOLIDAY_NAME_MAX_LENGTH} caracteres."
            ]
    return errors


# SLA policies (issue 23, part 2).
MAX_TARGET_MINUTES = 525_600  # a year of minutes: far beyond any target, short of any overflow in deadline sums
TARGETS = {"first_response": "primeira_resposta", "next_response": "proxima_resposta", "resolution": "resolucao"}
PRIORITY_MESSAGE = "Prioridade desconhecida: use baixa, media, alta, urgente ou null (sem prioridade)."
MINUTES_MESSAGE = f"Informe um número inteiro de minutos, de 1 a {MAX_TARGET_MINUTES}, ou null."
TOO_MANY_POLICIES_MESSAGE = f"Informe no máximo {len(PRIORITIES)} políticas, uma por prioridade."
NO_TARGET_MESSAGE = "Informe ao menos um prazo: primeira_resposta, proxima_resposta ou resolucao."


def target_minutes_valid(value) -> bool:
    """A target: None, or a whole number of minutes 1..MAX_TARGET_MINUTES (never a bool, a float or a text)."""
    return value is None or (
        isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TARGET_MINUTES
    )


def policies_check(policies: list[Policy]) -> PolicySet:
    """The policy set these policies make, in PRIORITIES' order, or a ValidationFailed naming every problem: a
    priority one of PRIORITIES and at most once, each target None or 1..MAX_TARGET_MINUTES, and at least one
    target per policy (a policy without targets says nothing: leave its priority out)."""
    if len(policies) > len(PRIORITIES):
        raise ValidationFailed({"politicas": [TOO_MANY_POLICIES_MESSAGE]})
    errors: dict[str, list[str]] = {}
    seen: dict[str | None, int] = {}
    for index, policy in enumerate(policies):
        name = f"politicas.{index}"
        if policy.priority not in PRIORITIES:
            errors[f"{name}.prioridade"] = [PRIORITY_MESSAGE]
        elif policy.priority in seen:
            errors[f"{name}.prioridade"] = [f"Prioridade repetida: já está em politicas.{seen[policy.priority]}."]
        else:
            seen[policy.priority] = index
        targets = {field: getattr(policy, field) for field in TARGETS}
        for field, value in targets.items():
            if not target_minutes_valid(value):
                errors[f"{name}.{TARGETS[field]}"] = [MINUTES_MESSAGE]
        if all(value is None for value in targets.values()):
            errors[name] = [NO_TARGET_MESSAGE]
    if errors:
        raise ValidationFailed(errors)
    return PolicySet(tuple(sorted(policies, key=lambda policy: PRIORITIES.index(policy.priority))))
