"""OpenAPI documentation of helpdesk.api.audit_views: the audit trail."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, page_of
from helpdesk.api.audit_serializers import AuditQuery, AuditRecordOut

audit_docs = extend_schema_view(
    list=extend_schema(
        operation_id="audit_list",
        tags=["Painel: auditoria"],
        description=(
            "Quem fez o quê, de onde, em qualquer porta (API do parceiro, painel, admin, comandos, beat), da mais "
            "nova à mais antiga. Filtros combinam com E. Guardada por AUDIT_RETENTION_DAYS (365) dias."
        ),
        parameters=[AuditQuery],
        responses={200: envelope("AuditoriaListada", page_of("PaginaAuditoria", AuditRecordOut))},
    ),
)
