"""The admin's business hours: the organization's one calendar, for whoever holds api_publica:gerenciar (as the
panel's `/api/horario-atendimento`), written through sla.services with sla.rules' checks shown on the form.
Intervals and holidays are typed one a line, as a support lead writes them: `seg 08:00-12:00`, `2026-12-25
Natal`."""

import re

from django import forms
from django.contrib import admin

from foundation.exceptions import ValidationFailed
from helpdesk.admin_tenancy import OrganizationScopedAdmin, user_organization_id
from helpdesk.permissions import MANAGE_PUBLIC_API_PERM
from sla.calendar import DEFAULT_TIME_ZONE, Holiday, Interval
from sla.models import BusinessHours
from sla.rules import calendar_check, clock_minutes, clock_text, iso_date
from sla.selectors import calendar_of_row
from sla.services import business_hours_set

DAY_NAMES = ("seg", "ter", "qua", "qui", "sex", "sab", "dom")
_DAY_ALIASES = {name: weekday for weekday, name in enumerate(DAY_NAMES)} | {"sáb": 5}
_INTERVAL_LINE = re.compile(r"(\S+)\s+(\S+)\s*[-–]\s*(\S+)")
_ENTRY = re.compile(r"^(intervalos|feriados)\.([0-9]+)(?:\.\w+)?$")


def _lines(text: str) -> list[tuple[int, str]]:
    """The non-blank lines, with their numbers as the form shows them (from 1)."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _by_line(message: str, lines: dict[str, list[int]]) -> str:
    """`Sobrepõe intervalos.0 (...)` as `Sobrepõe a linha 1 (...)`; `já está em feriados.0` as `já está na linha 1`."""

    def line(match) -> str:
        return f"{'na' if match.group(1) else 'a'} linha {lines[match.group(2)][int(match.group(3))]}"

    return re.sub(r"(em )?\b(intervalos|feriados)\.([0-9]+)", line, message)


class BusinessHoursAdminForm(forms.ModelForm):
    intervals_text = forms.CharField(
        label="Intervalos",
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 40}),
        help_text=(
            "Um por linha: dia (seg, ter, qua, qui, sex, sab, dom) e horário local, como “seg 08:00-12:00”. O fim "
            "pode ser 24:00; um turno que passa da meia-noite são duas linhas (“sex 22:00-24:00” e “sab 00:00-06:00”). "
            "Nenhuma linha: atendimento 24x7."
        ),
    )
    holidays_text = forms.CharField(
        label="Feriados",
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 40}),
        help_text="Um por linha: data AAAA-MM-DD e, se quiser, o nome, como “2026-12-25 Natal”. Dias inteiros.",
    )

    class Meta:
        model = BusinessHours
        fields = ["time_zone"]
        help_texts = {"time_zone": f"Nome IANA, como {DEFAULT_TIME_ZONE}, Europe/Lisbon ou UTC."}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        calendar = calendar_of_row(None if self.instance._state.adding else self.instance)
        self.initial.setdefault("time_zone", calendar.time_zone)
        self.initial["intervals_text"] = "\n".join(
            f"{DAY_NAMES[i.weekday]} {clock_text(i.start)}-{clock_text(i.end)}" for i in calendar.intervals
        )
        self.initial["holidays_text"] = "\n".join(f"{h.date.isoformat()} {h.name}".strip() for h in calendar.holidays)

    def clean(self):
        cleaned = super().clean()
        intervals, interval_lines = self._intervals()
        holidays, holiday_lines = self._holidays()
        if self.errors:
            return cleaned
        try:
            calendar_check(time_zone=cleaned.get("time_zone", ""), intervals=intervals, holidays=holidays)
        except ValidationFailed as error:
            for key, messages in error.errors.items():
                self._add_service_error(key, messages, interval_lines, holiday_lines)
        cleaned["intervals"], cleaned["holidays"] = intervals, holidays
        return cleaned

    def _add_service_error(self, key: str, messages: list[str], interval_lines, holiday_lines) -> None:
        if key == "fuso_horario":
            self.add_error("time_zone", messages)
            return
        entry = _ENTRY.match(key)
        field = "intervals_text" if key.startswith("intervalos") else "holidays_text"
        if entry is None:
            self.add_error(field, messages)
            return
        lines = {"intervalos": interval_lines, "feriados": holiday_lines}
        # The API names entries by position (`intervalos.2`); a line here is named by its number on the form.
        prefix = f"Linha {lines[entry.group(1)][int(entry.group(2))]}: "
        self.add_error(field, [prefix + _by_line(message, lines) for message in messages])

    def _intervals(self) -> tuple[list[Interval], list[int]]:
        intervals, numbers, problems = [], [], []
        for number, line in _lines(self.cleaned_data.get("intervals_text", "")):
            match = _INTERVAL_LINE.fullmatch(line)
            weekday = _DAY_ALIASES.get(match.group(1).lower()) if match else None
            start, end = (clock_minutes(match.group(2)), clock_minutes(match.group(3))) if match else (None, None)
            if weekday is None or start is None or end is None:
                problems.append(f"Linha {number}: escreva o dia e o horário, como “seg 08:00-12:00”.")
                continue
            intervals.append(Interval(weekday, start, end))
            numbers.append(number)
        if problems:
            self.add_error("intervals_text", problems)
        return intervals, numbers

    def _holidays(self) -> tuple[list[Holiday], list[int]]:
        holidays, numbers, problems = [], [], []
        for number, line in _lines(self.cleaned_data.get("holidays_text", "")):
            text, _, name = line.partition(" ")
            day = iso_date(text)
            if day is None:
                problems.append(f"Linha {number}: informe uma data válida no formato AAAA-MM-DD.")
                continue
            holidays.append(Holiday(day, name.strip()))
            numbers.append(number)
        if problems:
            self.add_error("holidays_text", problems)
        return holidays, numbers


@admin.register(BusinessHours)
class BusinessHoursAdmin(OrganizationScopedAdmin):
    """One calendar per organization; without one the organization works 24x7 in America/Sao_Paulo."""

    form = BusinessHoursAdminForm
    model_permissions = False
    refused = ("delete",)  # an empty week in São Paulo is the default again, and is audited like any change
    list_display = ["__str__", "time_zone", "updated_at"]
    fields = ["time_zone", "intervals_text", "holidays_text"]

    def may_use(self, request) -> bool:
        return self._staff_of_an_organization(request) and (
            request.user.is_superuser or request.user.has_perm(MANAGE_PUBLIC_API_PERM)
        )

    def has_add_permission(self, request):
        # The adding user's organization's calendar, once: superusers, who have none, add nothing.
        organization_id = user_organization_id(request)
        return (
            super().has_add_permission(request)
            and organization_id is not None
            and not BusinessHours.objects.filter(organization_id=organization_id).exists()
        )

    def save_model(self, request, obj, form, change):
        organization = obj.organization if change else request.user.organization
        business_hours_set(
            organization=organization,
            time_zone=form.cleaned_data["time_zone"],
            intervals=form.cleaned_data["intervals"],
            holidays=form.cleaned_data["holidays"],
        )
        stored = BusinessHours.objects.filter(organization=organization).first()
        if stored is not None:
            obj.pk = stored.pk
