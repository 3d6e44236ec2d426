"""Management API: data-subject requests on a contact of the user's organization (LGPD/GDPR):
GET /api/contatos/{id}/exportar and POST /api/contatos/{id}/anonimizar."""

from rest_framework.decorators import action

from api_framework.responses import EnvelopeResponse
from helpdesk.actors import Actor
from helpdesk.api.panel import ManagementViewSet
from helpdesk.selectors import active_agent_of
from integrations.api.privacy_serializers import ExportedDeliveryOut
from integrations.api.privacy_views_docs import contact_docs
from integrations.privacy import contact_export
from tickets.payloads import contact_public
from tickets.selectors import contact_get
from tickets.services import contact_anonymize


@contact_docs
class ContactViewSet(ManagementViewSet):
    @action(detail=True, methods=["get"], url_path="exportar")
    def export(self, request, **kwargs):
        document = contact_export(
            contact=contact_get(organization=self.organization, contact_id=kwargs["id"]), request=request
        )
        document["entregas"] = ExportedDeliveryOut(document["entregas"], many=True).data
        return EnvelopeResponse(document, message="Dados do contato exportados.")

    @action(detail=True, methods=["post"], url_path="anonimizar", takes_body=False)
    def anonymize(self, request, **kwargs):
        contact = contact_anonymize(
            contact=contact_get(organization=self.organization, contact_id=kwargs["id"]),
            actor=Actor.of_agent(active_agent_of(request.user)),
        )
        return EnvelopeResponse(contact_public(contact), message="Contato anonimizado.")
