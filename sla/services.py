"""Every write of business hours (the panel's `PUT /api/horario-atendimento`, the admin)."""

from django.db import transaction

from helpdesk.audit import audit_record, change
from helpdesk.models import Organization
from sla.calendar import BusinessCalendar, Holiday, Interval
from sla.models import BusinessHours
from sla.rules import calendar_check, clock_text
from sla.selectors import business_calendar_forget, calendar_of_row


def calendar_payload(calendar: BusinessCalendar) -> dict:
    """A calendar as the API and the audit trail write it."""
    return {
        "fuso_horario": calendar.time_zone,
        "intervalos": [
            {"dia_semana": i.weekday, "inicio": clock_text(i.start), "fim": clock_text(i.end)}
            for i in calendar.intervals
        ],
        "feriados": [{"data": h.date.isoformat(), "nome": h.name or None} for h in calendar.holidays],
    }


def business_hours_set(
    *, organization: Organization, time_zone: str, intervals: list[Interval], holidays: list[Holiday]
) -> BusinessCalendar:
    """The organization's calendar replaced whole (checked by sla.rules first: a 422 writes nothing). A calendar
    equal to the one kept writes nothing and records nothing; a change is audited
    (`horario_atendimento.alterado`, what changed as {antes, depois}) and drops the cached calendar."""
    calendar = calendar_check(time_zone=time_zone, intervals=intervals, holidays=holidays)
    with transaction.atomic(savepoint=False):
        # The organization's row lock serialises two first writes, which would both insert.
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        row = BusinessHours.objects.select_for_update().filter(organization=organization).first()
        before = calendar_payload(calendar_of_row(row))
        after = calendar_payload(calendar)
        changes = {name: change(before[name], after[name]) for name in after if before[name] != after[name]}
        if not changes:  # the default included, when nothing is stored
            return calendar
        row = row or BusinessHours(organization=organization)
        row.time_zone = calendar.time_zone
        row.intervals = [{"weekday": i.weekday, "start": i.start, "end": i.end} for i in calendar.intervals]
        row.holidays = [{"date": h.date.isoformat(), "name": h.name} for h in calendar.holidays]
        row.save()
        audit_record(
            "horario_atendimento.alterado",
            organization_id=organization.pk,
            resource_type="horario_atendimento",
            resource_id=organization.pk,
            changes=changes,
        )
        business_calendar_forget(organization.pk)
    return calendar
