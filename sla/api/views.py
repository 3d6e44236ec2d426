"""Panel management API (JWT, `api_publica:gerenciar`): the organization's business hours."""

from api_framework.responses import EnvelopeResponse
from helpdesk.api.panel import ManagementViewSet
from sla.api.serializers import BusinessHoursIn, BusinessHoursOut
from sla.api.views_docs import business_hours_docs
from sla.selectors import business_calendar
from sla.services import business_hours_set, calendar_payload


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
