"""Every write of business hours (the panel's `PUT /api/horario-atendimento`, the admin) and of SLA policies
(`PUT /api/sla`, the admin)."""

from django.db import transaction

from helpdesk.audit import audit_record, change
from helpdesk.models import Organization
from sla.calendar import BusinessCalendar, Holiday, Interval
from sla.models import BusinessHours, SlaPolicies, SlaRetarget
from sla.policies import Policy, PolicySet
from sla.rules import TARGETS, calendar_check, clock_text, policies_check
from sla.selectors import (
    business_calendar,
    business_calendar_forget,
    calendar_data,
    calendar_of_row,
    policies_of_row,
    sla_policies_forget,
)


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
        previous = calendar_of_row(row)
        before = calendar_payload(previous)
        after = calendar_payload(calendar)
        changes = {name: change(before[name], after[name]) for name in after if before[name] != after[name]}
        if not changes:  # the default included, when nothing is stored
            return calendar
        row = row or BusinessHours(organization=organization)
        data = calendar_data(calendar)
        row.time_zone, row.intervals, row.holidays = data["time_zone"], data["intervals"], data["holidays"]
        row.save()
        _retarget_later(organization, previous_calendar=previous, changed_at=row.updated_at)
        audit_record(
            "horario_atendimento.alterado",
            organization_id=organization.pk,
            resource_type="horario_atendimento",
            resource_id=organization.pk,
            changes=changes,
        )
        business_calendar_forget(organization.pk)
    return calendar


def _retarget_later(organization: Organization, *, previous_calendar: BusinessCalendar, changed_at) -> None:
    """The open tickets' clocks re-targeted by the beat, in a row written with the change (the outbox of it)."""
    SlaRetarget.objects.create(
        organization=organization,
        previous_calendar=calendar_data(previous_calendar),
        changed_at=changed_at,
        next_pass_at=changed_at,
    )


def policies_payload(policy_set: PolicySet) -> dict:
    """A policy set as the API and the audit trail write it."""
    return {
        "politicas": [
            {"prioridade": policy.priority} | {name: getattr(policy, field) for field, name in TARGETS.items()}
            for policy in policy_set.policies
        ]
    }


def sla_policies_set(*, organization: Organization, policies: list[Policy]) -> PolicySet:
    """The organization's SLA policies replaced whole (checked by sla.rules first: a 422 writes nothing). The set
    already kept (in any order) writes nothing and records nothing; a change is audited (`sla.politicas_alteradas`,
    the whole set as {antes, depois}) and drops the cached set. The open tickets' deadlines follow within a
    beat's interval (SlaRetarget)."""
    policy_set = policies_check(policies)
    with transaction.atomic(savepoint=False):
        # The organization's row lock serialises two first writes, which would both insert.
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        row = SlaPolicies.objects.select_for_update().filter(organization=organization).first()
        before = policies_of_row(row)
        if before == policy_set:  # no row and an empty list included
            return policy_set
        row = row or SlaPolicies(organization=organization)
        row.policies = [
            {"priority": policy.priority} | {field: getattr(policy, field) for field in TARGETS}
            for policy in policy_set.policies
        ]
        row.save()
        calendar = business_calendar(organization.pk, fresh=True)  # unchanged: counted with, before and after
        _retarget_later(organization, previous_calendar=calendar, changed_at=row.updated_at)
        audit_record(
            "sla.politicas_alteradas",
            organization_id=organization.pk,
            resource_type="sla",
            resource_id=organization.pk,
            changes={
                "politicas": change(policies_payload(before)["politicas"], policies_payload(policy_set)["politicas"])
            },
        )
        sla_policies_forget(organization.pk)
    return policy_set
