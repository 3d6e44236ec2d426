"""Panel management API (JWT, `api_publica:gerenciar`): the organization's business hours and SLA policies."""

from api_framework.responses import EnvelopeResponse
from helpdesk.api.panel import ManagementViewSet
from sla.api.serializers import BusinessHoursIn, BusinessHoursOut, PoliciesIn, PoliciesOut
from sla.api.views_docs import business_hours_docs, sla_policies_docs
from sla.selectors import business_calendar, sla_policies
from sla.services import business_hours_set, calendar_payload, policies_payload, sla_policies_set


@business_hours_docs
class BusinessHoursViewSet(ManagementViewSet):
    def retrieve(self, request):
        calendar = business_calendar(self.organization.pk, fresh=True)
        return EnvelopeResponse(
            BusinessHoursOut(calendar_payload(calendar)).data, message="Horário de atendimento encontrado."
        )

    def update(self, request):
        payload = BusinessHoursIn(data=request.data)
        payload.is_valid(raise_exception=True)
        calendar = business_hours_set(organization=self.organization, **payload.validated_data)
        return EnvelopeResponse(
            BusinessHoursOut(calendar_payload(calendar)).data, message="Horário de atendimento atualizado."
        )


@sla_policies_docs
class SlaPoliciesViewSet(ManagementViewSet):
    def retrieve(self, request):
        policy_set = sla_policies(self.organization.pk, fresh=True)
        return EnvelopeResponse(PoliciesOut(policies_payload(policy_set)).data, message="Políticas de SLA encontradas.")

    def update(self, request):
        payload = PoliciesIn(data=request.data)
        payload.is_valid(raise_exception=True)
        policy_set = sla_policies_set(organization=self.organization, **payload.validated_data)
        return EnvelopeResponse(PoliciesOut(policies_payload(policy_set)).data, message="Políticas de SLA atualizadas.")
