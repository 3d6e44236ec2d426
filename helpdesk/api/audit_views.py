"""GET /api/auditoria: the organization's audit trail, for whoever manages its API (api_publica:gerenciar)."""

from api_framework.pagination import page_payload
from api_framework.responses import EnvelopeResponse
from helpdesk.api.audit_serializers import AuditQuery, AuditRecordOut
from helpdesk.api.audit_views_docs import audit_docs
from helpdesk.api.panel import ManagementViewSet
from helpdesk.selectors import audit_list


@audit_docs
class AuditViewSet(ManagementViewSet):
    def list(self, request):
        query = AuditQuery.from_request(request)
        page = query.page_of(audit_list(organization=self.organization, **query.filters))
        return EnvelopeResponse(page_payload(page, AuditRecordOut), message="Auditoria listada.")
