"""Attachments through the API: the partner's upload and list, the agents' list, and the signed download.

Uploads are multipart/form-data, streamed to temporary files before any transaction begins
(EnvelopeViewMixin.streams_upload); the service opens its own.
"""

from django.http import FileResponse, HttpResponseRedirect
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny

from helpdesk.api.base import EnvelopeViewSet
from helpdesk.api.pagination import page_payload
from helpdesk.api.panel import AgentPanelViewSet
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
from helpdesk.exceptions import ValidationFailed
from integrations.api.base import PartnerViewSet, Scope
from tickets.api.attachment_serializers import (
    AttachmentListQuery,
    AttachmentOut,
    AttachmentUploadIn,
    PanelAttachmentOut,
)
from tickets.attachments.content import download_name
from tickets.attachments.selectors import attachment_for_download, attachment_list_panel, attachment_list_public
from tickets.attachments.services import attachment_add_by_partner
from tickets.attachments.signing import attachment_claims
from tickets.attachments.storage import attachment_storage
from tickets.attachments.uploads import FIELD, StreamedMultiPartParser, form_text, use_streamed_uploads
from tickets.exceptions import AttachmentNotFound
from tickets.models import Ticket
from tickets.payloads import (
    ATTACHMENT_COLUMNS,
    PANEL_ATTACHMENT_COLUMNS,
    attachment_row,
    attachments_panel,
    attachments_public,
)
from tickets.selectors import ticket_get

MULTIPART = "multipart/form-data"
TICKET_NOT_FOUND = "Ticket não encontrado (campo `id`); um id que não é UUID responde igual."
UPLOAD_DESCRIPTION = (
    "Envia um arquivo ao ticket (`multipart/form-data`, campo `arquivo`), sozinho ou com uma resposta que a "
    "organização enviou pela API (`resposta_id`). O tipo é reconhecido pelo conteúdo, nunca pelo nome ou pelo "
    "Content-Type enviado: imagens (PNG, JPEG, GIF, WebP), PDF, texto, CSV, documentos de escritório e ZIP; "
    "outro tipo é 415 no campo `arquivo`. Cada arquivo tem no máximo ANEXO_MAX_BYTES (10 MiB por padrão; acima, "
    "413 no campo `arquivo`) e um ticket guarda até ANEXOS_POR_TICKET (50 por padrão; depois, 409). Nenhum "
    "webhook é disparado."
)


def _page(request, queryset, columns, build):
    page = AttachmentListQuery.from_request(request).page_of(queryset, columns=columns)
    return page_payload(page, lambda rows: build(request, rows))


class TicketAttachmentViewSet(PartnerViewSet):
    parser_classes = [StreamedMultiPartParser]
    upload_actions = frozenset({"create"})
    scopes = {"list": Scope.TICKETS_READ, "create": Scope.ATTACHMENTS_WRITE}
    takes_body = False  # an empty multipart body is a missing `arquivo` (422), not malformed JSON
    _ticket: Ticket | None = None

    @extend_schema(
        operation_id="v1_tickets_attachments_list",
        tags=["Parceiros v1"],
        description=(
            "Os anexos públicos do ticket (do cliente e dos atendentes; os de notas internas nunca), do mais "
            "antigo ao mais novo, cada um com um link de download válido por 30 minutos."
        ),
        parameters=[AttachmentListQuery],
        responses={
            200: envelope("AnexosListados", page_of("PaginaAnexo", AttachmentOut)),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    )
    def list(self, request, id):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        payload = _page(request, attachment_list_public(ticket=ticket), ATTACHMENT_COLUMNS, attachments_public)
        return EnvelopeResponse(payload, message="Anexos listados.")

    @extend_schema(
        operation_id="v1_tickets_attachments_create",
        tags=["Parceiros v1"],
        description=UPLOAD_DESCRIPTION,
        request={MULTIPART: AttachmentUploadIn},
        responses={
            201: envelope("AnexoEnviado", AttachmentOut),
            **errors(
                400,
                403,
                404,
                409,
                413,
                415,
                422,
                descriptions={
                    400: "Multipart inválido (campo `body`): o corpo multipart/form-data não pôde ser lido, ou tem "
                    "campos ou arquivos demais.",
                    422: "Erro de validação: `arquivo` ausente, vazio, repetido ou enviado fora de multipart/form-data "
                    "(um corpo JSON, por exemplo); `resposta_id` repetido ou que não é UUID.",
                    403: "`resposta_id` é uma resposta de atendente, não enviada pela API (campo `resposta_id`).",
                    404: (
                        "Ticket não encontrado (campo `id`), ou `resposta_id` não é uma resposta deste ticket "
                        "(campo `resposta_id`)."
                    ),
                    409: (
                        "O ticket já tem ANEXOS_POR_TICKET anexos (campo `arquivo`), está fechado (campo `status`), "
                        "ou uma requisição com o mesmo Idempotency-Key está em andamento."
                    ),
                    413: "Arquivo acima de ANEXO_MAX_BYTES (campo `arquivo`), ou campos de texto acima de 1 MiB.",
                    415: "Tipo de arquivo não aceito (campo `arquivo`).",
                },
            ),
        },
    )
    def create(self, request, id):
        self.read_upload(request)
        payload = AttachmentUploadIn(data=_form_data(request, ("resposta_id",)))
        payload.is_valid(raise_exception=True)
        attachment = attachment_add_by_partner(
            ticket=self._ticket,
            upload=payload.validated_data["arquivo"],
            reply_id=payload.validated_data.get("reply_id") or None,
        )
        data = attachments_public(request, [attachment_row(attachment)])[0]
        return EnvelopeResponse(data, message="Anexo enviado.", status=201)

    def read_upload(self, request) -> None:
        """The ticket (404) and the media type (415) before a byte of the body, then the body, streamed."""
        if self._ticket is None:
            self._ticket = ticket_get(organization=self.organization, ticket_id=self.kwargs["id"])
            require_multipart(request)
            use_streamed_uploads(request, max_files=1)
            request.data  # noqa: B018  (reads the body now: 413 or 400 before anything else)


def require_multipart(request) -> None:
    """A JSON (or any other) body carries no file: the 422 of a missing `arquivo`, saying how to send one."""
    if request.content_type.split(";")[0].strip().lower() != MULTIPART:
        raise ValidationFailed({FIELD: [f"Envie o arquivo como multipart/form-data, no campo `{FIELD}`."]})


def _form_data(request, text_fields: tuple[str, ...]) -> dict:
    """The fields a serializer reads; a file field only when a file came (a missing one is `required`)."""
    data = form_text(request, text_fields)
    files = request.FILES.getlist(FIELD)
    if files:
        data[FIELD] = files[0]
    return data


class PanelTicketAttachmentViewSet(AgentPanelViewSet):
    @extend_schema(
        operation_id="panel_tickets_attachments_list",
        tags=["Painel: tickets"],
        description=(
            "Todos os anexos do ticket, os de notas internas incluídos (`interna`), do mais antigo ao mais novo, "
            "cada um com um link de download para atendentes, válido por 30 minutos."
        ),
        parameters=[AttachmentListQuery],
        responses={
            200: envelope("AnexosDoPainelListados", page_of("PaginaAnexoDoPainel", PanelAttachmentOut)),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    )
    def list(self, request, id):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        queryset = attachment_list_panel(ticket=ticket)
        payload = _page(request, queryset, PANEL_ATTACHMENT_COLUMNS, attachments_panel)
        return EnvelopeResponse(payload, message="Anexos listados.")


class AttachmentDownloadViewSet(EnvelopeViewSet):
    """The file behind a signed link; the signature is the credential (as the avatars')."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    lookup_field = "token"

    @extend_schema(
        operation_id="v1_attachments_download",
        tags=["Parceiros v1"],
        description=(
            "O arquivo de um anexo, pelo `url` assinado de uma lista ou de um envio: a assinatura é a credencial. "
            "Servido como download (`Content-Disposition: attachment`), com o tipo reconhecido no envio. Com "
            "armazenamento de objetos (S3), 302 para uma URL pré-assinada de poucos minutos."
        ),
        auth=[],
        responses={
            (200, "*/*"): OpenApiResponse(
                OpenApiTypes.BINARY, description="O arquivo, com o tipo reconhecido pelo conteúdo no envio."
            ),
            302: OpenApiResponse(description="Armazenamento de objetos: o arquivo está na URL de `Location`."),
            **errors(
                403,
                404,
                descriptions={
                    403: "Link expirado ou com assinatura inválida (campo `assinatura`).",
                    404: "O anexo não existe mais (campo `anexo`).",
                },
            ),
        },
    )
    def retrieve(self, request, token: str):
        attachment_id, organization_id, for_agent = attachment_claims(token)
        attachment = attachment_for_download(
            attachment_id=attachment_id, organization_id=organization_id, include_internal=for_agent
        )
        if attachment is None:
            raise AttachmentNotFound()
        storage = attachment_storage()
        disposition = content_disposition_header(
            as_attachment=True, filename=download_name(attachment.name, attachment.content_type)
        )
        if _is_object_storage(storage):
            # No byte through the web process: a presigned URL that makes the bucket answer as we would.
            url = storage.url(
                attachment.storage_key,
                parameters={"ResponseContentDisposition": disposition, "ResponseContentType": attachment.content_type},
            )
            response = HttpResponseRedirect(url)
        else:
            try:
                stored = storage.open(attachment.storage_key, "rb")
            except FileNotFoundError:
                raise AttachmentNotFound()
            response = FileResponse(stored, content_type=attachment.content_type)
            response["Content-Disposition"] = disposition
            response["Content-Length"] = str(attachment.size)
        response["Cache-Control"] = "private, no-store"
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'"
        return response


def _is_object_storage(storage) -> bool:
    return hasattr(storage, "bucket_name")
