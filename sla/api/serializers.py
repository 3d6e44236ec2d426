"""Business hours (`/api/horario-atendimento`) and SLA policies (`/api/sla`) through the panel's API: the body of
a PUT, and what both methods answer in `data`. The shapes of each value are checked here (a 422 on
`intervalos.<i>.inicio`, `politicas.<i>.resolucao`); the rules between values (inverted or overlapping intervals,
repeated dates or priorities, sizes, the zone, a policy without targets) by sla.rules, for every door."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api_framework.fields import BoundedListField, TextField
from sla.calendar import Holiday, Interval
from sla.policies import PRIORITIES, PRIORITY_LABELS, Policy
from sla.rules import (
    HOLIDAY_NAME_MAX_LENGTH,
    MAX_HOLIDAYS,
    MAX_INTERVALS,
    MAX_TARGET_MINUTES,
    MINUTES_MESSAGE,
    PRIORITY_MESSAGE,
    TOO_MANY_HOLIDAYS_MESSAGE,
    TOO_MANY_INTERVALS_MESSAGE,
    TOO_MANY_POLICIES_MESSAGE,
    clock_minutes,
    iso_date,
    target_minutes_valid,
)

CLOCK_PATTERN = r"^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$"
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
CLOCK_MESSAGE = "Informe um horário HH:MM, de 00:00 a 23:59 (o fim pode ser 24:00)."
ZONE_HELP = "Nome IANA do fuso horário (America/Sao_Paulo, Europe/Lisbon, UTC...)."
INTERVALS_HELP = (
    f"Os intervalos de cada semana, no máximo {MAX_INTERVALS}: em um mesmo dia não se sobrepõem (encostar pode: "
    "08:00–12:00 e 12:00–18:00). Um turno que passa da meia-noite são dois intervalos (22:00–24:00 em um dia e "
    "00:00–06:00 no seguinte), contados como um só trecho. Nenhum intervalo: atendimento 24x7."
)
HOLIDAYS_HELP = (
    f"Dias inteiros (no fuso do calendário) sem atendimento, no máximo {MAX_HOLIDAYS}, cada data uma vez só."
)


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": 6})
class WeekdayField(serializers.Field):
    """0 (segunda-feira) to 6 (domingo); a whole number only, never "3" nor true."""

    default_error_messages = {"invalid": "Informe um dia de 0 (segunda-feira) a 6 (domingo)."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int) or not 0 <= data <= 6:
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


@extend_schema_field({"type": "string", "pattern": CLOCK_PATTERN, "example": "08:00"})
class ClockField(TextField):
    """HH:MM as minutes after midnight."""

    default_error_messages = {"clock": CLOCK_MESSAGE}

    def to_internal_value(self, data):
        minutes = clock_minutes(super().to_internal_value(data))
        if minutes is None:
            self.fail("clock")
        return minutes


@extend_schema_field({"type": "string", "format": "date", "pattern": DATE_PATTERN})
class IsoDateField(TextField):
    default_error_messages = {"date": "Informe uma data válida no formato AAAA-MM-DD."}

    def to_internal_value(self, data):
        day = iso_date(super().to_internal_value(data))
        if day is None:
            self.fail("date")
        return day


class IntervalIn(serializers.Serializer):
    dia_semana = WeekdayField(help_text="0 = segunda-feira ... 6 = domingo.")
    inicio = ClockField(help_text="Início, HH:MM (hora local do fuso).")
    fim = ClockField(help_text="Fim, HH:MM, depois do início; 24:00 é o fim do dia.")

    def to_internal_value(self, data):
        values = super().to_internal_value(data)
        return Interval(values["dia_semana"], values["inicio"], values["fim"])


class HolidayIn(serializers.Serializer):
    data = IsoDateField(help_text="AAAA-MM-DD.")
    nome = TextField(
        required=False, allow_null=True, allow_blank=True, max_length=HOLIDAY_NAME_MAX_LENGTH, help_text="Opcional."
    )

    def to_internal_value(self, data):
        values = super().to_internal_value(data)
        return Holiday(values["data"], values.get("nome") or "")


class BusinessHoursIn(serializers.Serializer):
    # The whole calendar (a PUT replaces it): every field required, the lists may be empty.
    fuso_horario = TextField(source="time_zone", max_length=64, help_text=ZONE_HELP)
    intervalos = BoundedListField(
        source="intervals",
        child=IntervalIn(),
        max_length=MAX_INTERVALS,
        error_messages={"max_length": TOO_MANY_INTERVALS_MESSAGE},
        help_text=INTERVALS_HELP,
    )
    feriados = BoundedListField(
        source="holidays",
        child=HolidayIn(),
        max_length=MAX_HOLIDAYS,
        error_messages={"max_length": TOO_MANY_HOLIDAYS_MESSAGE},
        help_text=HOLIDAYS_HELP,
    )


class IntervalOut(serializers.Serializer):
    dia_semana = serializers.IntegerField(min_value=0, max_value=6, help_text="0 = segunda-feira ... 6 = domingo.")
    inicio = serializers.CharField(help_text="HH:MM")
    fim = serializers.CharField(help_text="HH:MM; 24:00 é o fim do dia.")


class HolidayOut(serializers.Serializer):
    data = serializers.DateField()
    nome = serializers.CharField(allow_null=True)


class BusinessHoursOut(serializers.Serializer):
    # sla.services.calendar_payload, described: intervals by weekday and start, holidays by date.

    fuso_horario = serializers.CharField(help_text=ZONE_HELP)
    intervalos = IntervalOut(many=True, help_text=INTERVALS_HELP)
    feriados = HolidayOut(many=True, help_text=HOLIDAYS_HELP)


# SLA policies (issue 23, part 2).
# As tickets' Priority.choices, so the schema names this enum `Prioridade` too (ENUM_NAME_OVERRIDES).
PRIORITY_CHOICES = list(PRIORITY_LABELS.items())
POLICIES_HELP = (
    "As políticas da organização, no máximo uma por prioridade (baixa, media, alta, urgente e null, a dos tickets "
    "sem prioridade), na ordem baixa, media, alta, urgente, null. Lista vazia: nenhum prazo."
)
PRIORITY_HELP = "baixa, media, alta, urgente, ou null: a política dos tickets sem prioridade."
TARGET_HELP = {
    "primeira_resposta": "Da criação do ticket à primeira resposta pública de um atendente",
    "proxima_resposta": "De cada resposta do cliente à resposta pública seguinte de um atendente",
    "resolucao": "Da criação do ticket à resolução",
}
MINUTES_HELP = f", em minutos de horário de atendimento (1 a {MAX_TARGET_MINUTES}); null: sem esse prazo."


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_TARGET_MINUTES, "nullable": True})
class TargetMinutesField(serializers.Field):
    """Whole business minutes, 1..MAX_TARGET_MINUTES, or null; never "30", 30.0 nor true."""

    default_error_messages = {"invalid": MINUTES_MESSAGE}

    def __init__(self, **kwargs):
        super().__init__(required=False, allow_null=True, default=None, **kwargs)

    def to_internal_value(self, data):
        if not target_minutes_valid(data):
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


class PolicyIn(serializers.Serializer):
    # `prioridade` is required (null is a priority of its own); an absent target is null, no such target.
    prioridade = serializers.ChoiceField(
        choices=PRIORITY_CHOICES,
        allow_null=True,
        error_messages={"invalid_choice": PRIORITY_MESSAGE},
        help_text=PRIORITY_HELP,
    )
    primeira_resposta = TargetMinutesField(help_text=TARGET_HELP["primeira_resposta"] + MINUTES_HELP)
    proxima_resposta = TargetMinutesField(help_text=TARGET_HELP["proxima_resposta"] + MINUTES_HELP)
    resolucao = TargetMinutesField(help_text=TARGET_HELP["resolucao"] + MINUTES_HELP)

    def to_internal_value(self, data):
        values = super().to_internal_value(data)
        return Policy(
            values["prioridade"], values["primeira_resposta"], values["proxima_resposta"], values["resolucao"]
        )


class PoliciesIn(serializers.Serializer):
    # The whole set (a PUT replaces it): `politicas` required, the list may be empty.
    politicas = BoundedListField(
        source="policies",
        child=PolicyIn(),
        max_length=len(PRIORITIES),
        error_messages={"max_length": TOO_MANY_POLICIES_MESSAGE},
        help_text=POLICIES_HELP,
    )


def _target_out(name: str) -> serializers.IntegerField:
    return serializers.IntegerField(
        allow_null=True, min_value=1, max_value=MAX_TARGET_MINUTES, help_text=TARGET_HELP[name] + MINUTES_HELP
    )


class PolicyOut(serializers.Serializer):
    prioridade = serializers.ChoiceField(choices=PRIORITY_CHOICES, allow_null=True, help_text=PRIORITY_HELP)
    primeira_resposta = _target_out("primeira_resposta")
    proxima_resposta = _target_out("proxima_resposta")
    resolucao = _target_out("resolucao")


class PoliciesOut(serializers.Serializer):
    # sla.services.policies_payload, described: in the order baixa, media, alta, urgente, null.

    politicas = PolicyOut(many=True, help_text=POLICIES_HELP)
