"""The admin's business hours and SLA policies: the organization's one calendar and one policy set, for whoever
holds api_publica:gerenciar (as the panel's `/api/horario-atendimento` and `/api/sla`), written through
sla.services with sla.rules' checks shown on the form. Intervals and holidays are typed one a line, as a support
lead writes them: `seg 08:00-12:00`, `2026-12-25 Natal`; policies are a grid, a priority a row and a target a
column, in minutes."""

import re

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import reverse

from foundation.exceptions import ValidationFailed
from helpdesk.admin_tenancy import OrganizationScopedAdmin, user_organization_id
from helpdesk.permissions import MANAGE_PUBLIC_API_PERM
from sla.calendar import DEFAULT_TIME_ZONE, Holiday, Interval
from sla.models import BusinessHours, SlaPolicies
from sla.policies import PRIORITIES, TARGET_LABELS, Policy
from sla.rules import MAX_TARGET_MINUTES, TARGETS, calendar_check, clock_minutes, clock_text, iso_date, policies_check
from sla.selectors import calendar_of_row, policies_of_row
from sla.services import business_hours_set, sla_policies_set

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
            text, name = (line.split(None, 1) + [""])[:2]
            day = iso_date(text)
            if day is None:
                problems.append(f"Linha {number}: informe uma data válida no formato AAAA-MM-DD.")
                continue
            holidays.append(Holiday(day, name.strip()))
            numbers.append(number)
        if problems:
            self.add_error("holidays_text", problems)
        return holidays, numbers


class OnePerOrganizationAdmin(OrganizationScopedAdmin):
    """A row the organization has at most one of, for staff holding api_publica:gerenciar (as the API): added
    once by the organization's own staff, never deleted (the default is a change away, audited like any)."""

    model_permissions = False
    refused = ("delete",)

    def may_use(self, request) -> bool:
        return self._staff_of_an_organization(request) and (
            request.user.is_superuser or request.user.has_perm(MANAGE_PUBLIC_API_PERM)
        )

    def has_add_permission(self, request):
        # The adding user's organization's row, once: superusers, who have none, add nothing.
        organization_id = user_organization_id(request)
        return (
            super().has_add_permission(request)
            and organization_id is not None
            and not self.model.objects.filter(organization_id=organization_id).exists()
        )

    # What the add page says when what was sent is the default, which the service keeps by storing nothing.
    nothing_stored_message = ""

    def _keep_pk(self, obj, organization) -> None:
        """The service wrote (or kept) the organization's row: the admin's redirect and message name it."""
        stored = self.model.objects.filter(organization=organization).first()
        if stored is not None:
            obj.pk = stored.pk

    def _stored(self, obj) -> bool:
        return self.model.objects.filter(pk=obj.pk).exists()

    def log_addition(self, request, obj, message):
        """No history entry for a row that was not stored."""
        return super().log_addition(request, obj, message) if self._stored(obj) else None

    def response_add(self, request, obj, post_url_continue=None):
        """The default sent: nothing stored, so no "added" message nor a change page of a missing row."""
        if self._stored(obj):
            return super().response_add(request, obj, post_url_continue)
        self.message_user(request, self.nothing_stored_message, messages.INFO)
        opts = self.model._meta
        return HttpResponseRedirect(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))


@admin.register(BusinessHours)
class BusinessHoursAdmin(OnePerOrganizationAdmin):
    """One calendar per organization; without one the organization works 24x7 in America/Sao_Paulo."""

    form = BusinessHoursAdminForm
    nothing_stored_message = "Este é o horário padrão (24x7 em America/Sao_Paulo, sem feriados): nada a salvar."
    list_display = ["__str__", "time_zone", "updated_at"]
    fields = ["time_zone", "intervals_text", "holidays_text"]

    def save_model(self, request, obj, form, change):
        organization = obj.organization if change else request.user.organization
        business_hours_set(
            organization=organization,
            time_zone=form.cleaned_data["time_zone"],
            intervals=form.cleaned_data["intervals"],
            holidays=form.cleaned_data["holidays"],
        )
        self._keep_pk(obj, organization)


# SLA policies: a row of the grid per priority (its field names' prefix), a column per target.
PRIORITY_ROWS = {
    "baixa": "Prioridade baixa",
    "media": "Prioridade média",
    "alta": "Prioridade alta",
    "urgente": "Prioridade urgente",
    None: "Tickets sem prioridade",
}
ADMIN_MINUTES_MESSAGE = f"Informe um número inteiro de minutos, de 1 a {MAX_TARGET_MINUTES}, ou deixe em branco."


def policy_field(priority: str | None, target: str) -> str:
    return f"{priority or 'sem_prioridade'}_{target}"


def _minutes_field(label: str) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        required=False,
        min_value=1,
        max_value=MAX_TARGET_MINUTES,
        error_messages={key: ADMIN_MINUTES_MESSAGE for key in ("invalid", "min_value", "max_value")},
        widget=forms.NumberInput(attrs={"style": "width: 8em"}),
    )


class _SlaPoliciesGrid(forms.ModelForm):
    """A field per priority and target, in minutes (declared below, SlaPoliciesAdminForm); a priority with every
    target blank has no policy."""

    class Meta:
        model = SlaPolicies
        fields: list[str] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        policy_set = policies_of_row(None if self.instance._state.adding else self.instance)
        for priority in PRIORITIES:
            policy = policy_set.policy_for(priority)
            for target in TARGETS:
                self.initial[policy_field(priority, target)] = getattr(policy, target) if policy else None

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        policies = []
        for priority in PRIORITIES:
            targets = {target: cleaned.get(policy_field(priority, target)) for target in TARGETS}
            if any(value is not None for value in targets.values()):
                policies.append(Policy(priority, **targets))
        # The grid already keeps sla.rules (a priority once, 1..MAX_TARGET_MINUTES, a target at least): checked
        # again so a rule added there is shown on the form, not as a 500 from the service.
        try:
            policies_check(policies)
        except ValidationFailed as error:
            self.add_error(
                None, [f"{key}: {message}" for key, messages in error.errors.items() for message in messages]
            )
        cleaned["policies"] = policies
        return cleaned


# The grid's fields are declared on the class (ModelAdmin builds the form from its fieldsets' names).
SlaPoliciesAdminForm = type(
    "SlaPoliciesAdminForm",
    (_SlaPoliciesGrid,),
    {
        policy_field(priority, target): _minutes_field(label)
        for priority in PRIORITIES
        for target, label in TARGET_LABELS.items()
    },
)


@admin.register(SlaPolicies)
class SlaPoliciesAdmin(OnePerOrganizationAdmin):
    """One policy set per organization: targets in business minutes per priority (docs/sla.md)."""

    form = SlaPoliciesAdminForm
    nothing_stored_message = "Nenhuma política informada: sem políticas, nada a salvar."
    list_display = ["__str__", "updated_at"]
    fieldsets = [
        (
            PRIORITY_ROWS[priority],
            {
                "fields": [tuple(policy_field(priority, target) for target in TARGET_LABELS)],
                "description": (
                    "Prazos em minutos de horário de atendimento (4 horas = 240; um dia útil de 9 horas = 540). "
                    "Em branco: sem esse prazo; tudo em branco: sem política para esta prioridade."
                ),
            },
        )
        for priority in PRIORITIES
    ]

    def save_model(self, request, obj, form, change):
        organization = obj.organization if change else request.user.organization
        sla_policies_set(organization=organization, policies=form.cleaned_data["policies"])
        self._keep_pk(obj, organization)
