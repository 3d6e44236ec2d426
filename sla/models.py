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
