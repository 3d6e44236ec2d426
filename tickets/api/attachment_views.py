"""Attachments through the API: the partner's upload and list, the agents' list, and the signed download.

Uploads are multipart/form-data, streamed to temporary files before any transaction begins
(EnvelopeViewMixin.streams_upload); the service opens its own.
"""

from django.http import FileResponse, HttpResponseRedirect
from django.utils.http import content_disposition_header
from rest_framework.permissions import AllowAny

from api_framework.base import EnvelopeViewSet
from api_framework.pagination import page_payload
from api_framework.responses import EnvelopeResponse
from foundation.exceptions import ValidationFailed
from helpdesk.api.panel import AgentPanelViewSet
from integrations.api.base import PartnerViewSet, Scope
from tickets.api.attachment_serializers import (
    AttachmentListQuery,
    AttachmentUploadIn,
)
from tickets.api.attachment_views_docs import (
    attachment_download_docs,
    panel_ticket_attachment_docs,
    ticket_attachment_docs,
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


def _page(request, queryset, columns, build):
    page = AttachmentListQuery.from_request(request).page_of(queryset, columns=columns)
    return page_payload(page, lambda rows: build(request, rows))


@ticket_attachment_docs
class TicketAttachmentViewSet(PartnerViewSet):
    parser_classes = [StreamedMultiPartParser]
    upload_actions = frozenset({"create"})
    scopes = {"list": Scope.TICKETS_READ, "create": Scope.ATTACHMENTS_WRITE}
    takes_body = False  # an empty multipart body is a missing `arquivo` (422), not malformed JSON
    _ticket: Ticket | None = None

    def list(self, request, **kwargs):
        ticket = ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        payload = _page(request, attachment_list_public(ticket=ticket), ATTACHMENT_COLUMNS, attachments_public)
        return EnvelopeResponse(payload, message="Anexos listados.")

    def create(self, request, **kwargs):
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


@panel_ticket_attachment_docs
class PanelTicketAttachmentViewSet(AgentPanelViewSet):
    def list(self, request, **kwargs):
        ticket = ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        queryset = attachment_list_panel(ticket=ticket)
        payload = _page(request, queryset, PANEL_ATTACHMENT_COLUMNS, attachments_panel)
        return EnvelopeResponse(payload, message="Anexos listados.")


@attachment_download_docs
class AttachmentDownloadViewSet(EnvelopeViewSet):
    """The file behind a signed link; the signature is the credential (as the avatars')."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    lookup_field = "token"

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
