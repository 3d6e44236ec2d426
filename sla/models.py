import uuid

from django.db import models

from helpdesk.models import Organization


class BusinessHours(models.Model):
    """An organization's business hours (`horario_atendimento`): its time zone, weekly intervals and holidays.
    At most one per organization; without one the organization works 24x7 in America/Sao_Paulo. Kept whole in
    JSON, in the calendar's own terms (minutes after local midnight, ISO dates), because it is always read and
    written whole; written only by sla.services (docs/decisions.md, "Business hours")."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.OneToOneField(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="business_hours"
    )
    time_zone = models.CharField("fuso horário", max_length=64)
    # [{"weekday": 0..6 (0 = Monday), "start": minutes, "end": minutes (1440 = 24:00)}], by weekday and start.
    intervals = models.JSONField("intervalos", default=list, blank=True)
    # [{"date": "YYYY-MM-DD", "name": "..."}], by date.
    holidays = models.JSONField("feriados", default=list, blank=True)
    created_at = models.DateTimeField("criado em", auto_now_add=True)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)

    class Meta:
        verbose_name = "horário de atendimento"
        verbose_name_plural = "horários de atendimento"

    def __str__(self) -> str:
        return f"Horário de atendimento ({self.time_zone})"


class SlaPolicies(models.Model):
    """An organization's SLA policies (`politicas`): targets in business minutes per ticket priority. At most one
    row per organization; without one (or with an empty list) the organization has no targets. Kept whole in JSON
    like its business hours: always read and written whole, five entries at most; written only by sla.services
    (docs/decisions.md, "SLA policies")."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.OneToOneField(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="sla_policies"
    )
    # [{"priority": "baixa" | "media" | "alta" | "urgente" | None, "first_response": minutes | None,
    #   "next_response": minutes | None, "resolution": minutes | None}], in sla.policies.PRIORITIES' order.
    policies = models.JSONField("políticas", default=list, blank=True)
    created_at = models.DateTimeField("criado em", auto_now_add=True)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)

    class Meta:
        verbose_name = "políticas de SLA"
        verbose_name_plural = "políticas de SLA"

    def __str__(self) -> str:
        return "Políticas de SLA"


class SlaRetarget(models.Model):
    """A change of an organization's calendar or policies whose running deadlines are still to be moved: written
    with the change, in its transaction (nothing is lost when a worker is away), and consumed by the beat
    (tickets.service_levels.sla_retargets_run), which re-targets the organization's open tickets and deletes it.
    `previous_calendar` is the calendar before the change (rows' format), with which the time the targets ran
    until `changed_at` is counted. `next_pass_at`: when the beat takes it up (a second pass follows once the
    settings' cache can no longer serve the old version to a writer)."""

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    previous_calendar = models.JSONField()
    changed_at = models.DateTimeField()
    next_pass_at = models.DateTimeField(db_index=True)
    passes = models.PositiveSmallIntegerField(default=0)

    class Meta:
        verbose_name = "re-alvo de SLA pendente"
        verbose_name_plural = "re-alvos de SLA pendentes"

    def __str__(self) -> str:
        return f"Re-alvo de SLA ({self.changed_at:%Y-%m-%d %H:%M})"
