"""Agent panel API (JWT): the same services as the admin, for panel front ends."""

from rest_framework.decorators import action

from api_framework.parsers import JSONObjectParser
from api_framework.responses import EnvelopeResponse
from foundation.exceptions import AccessDenied
from helpdesk.actors import Actor
from helpdesk.api.panel import AgentPanelViewSet
from helpdesk.permissions import DELETE_TICKETS_PERM
from helpdesk.selectors import agent_get
from integrations.api.base import IdempotencyKeyMixin
from tickets.api.attachment_serializers import PanelReplyUploadIn
from tickets.api.pages import ticket_list_payload
from tickets.api.panel_serializers import (
    PanelReplyEditIn,
    PanelReplyIn,
    PanelStatusOut,
    PanelTagOut,
    PanelTicketBulkIn,
    PanelTicketCreateIn,
    PanelTicketListQuery,
    PanelTicketUpdateIn,
)
from tickets.api.panel_views_docs import panel_status_docs, panel_tag_docs, panel_ticket_docs
from tickets.attachments.services import reply_create_with_attachments
from tickets.attachments.uploads import FIELD, StreamedMultiPartParser, form_text, use_streamed_uploads
from tickets.bulk import tickets_update_in_bulk
from tickets.payloads import (
    PANEL_TICKET_COLUMNS,
    attachment_row,
    attachments_panel,
    reply_panel,
    reply_row,
    ticket_panel_row,
    tickets_panel,
)
from tickets.selectors import reply_get, status_list, tag_counts, ticket_get, ticket_row_get
from tickets.services import (
    reply_create_by_agent,
    reply_edit_as_agent,
    reply_ensure_editable_by_agent,
    ticket_delete,
    ticket_open,
    ticket_update_by_ids,
)

FILES_PER_REPLY = 10


@panel_ticket_docs
class PanelTicketViewSet(IdempotencyKeyMixin, AgentPanelViewSet):
    upload_actions = frozenset({"replies"})
    # A bulk edit is retried whole by a front end that lost its answer: Idempotency-Key replays the first one.
    idempotent_actions = frozenset({"bulk"})

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.idempotency_begin(request)

    def idempotency_owner(self, request) -> dict:
        return {"user": request.user}

    def takes_idempotency_key(self, request) -> bool:
        return self.action in self.idempotent_actions

    def list(self, request):
        query = PanelTicketListQuery.from_request(request, self.organization)
        payload = ticket_list_payload(query, self.organization, columns=PANEL_TICKET_COLUMNS, build=tickets_panel)
        return EnvelopeResponse(payload, message="Tickets listados.")

    def create(self, request):
        payload = PanelTicketCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        values = dict(payload.validated_data)
        assignee_id = values.pop("assignee_id", None)
        if assignee_id is not None:
            values["assignee"] = agent_get(organization_id=self.organization.pk, agent_id=assignee_id)
        ticket = ticket_open(organization=self.organization, actor=Actor.of_agent(self.agent), **values)
        return EnvelopeResponse(tickets_panel([ticket_panel_row(ticket)])[0], message="Ticket criado.", status=201)

    def retrieve(self, request, **kwargs):
        row = ticket_row_get(organization=self.organization, ticket_id=kwargs["id"], columns=PANEL_TICKET_COLUMNS)
        return EnvelopeResponse(tickets_panel([row])[0], message="Ticket encontrado.")

    def partial_update(self, request, **kwargs):
        ticket = ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        payload = PanelTicketUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        ticket = ticket_update_by_ids(ticket=ticket, actor=Actor.of_agent(self.agent), **payload.validated_data)
        return EnvelopeResponse(tickets_panel([ticket_panel_row(ticket)])[0], message="Ticket atualizado.")

    @action(detail=False, methods=["post"], url_path="lote")
    def bulk(self, request):
        payload = PanelTicketBulkIn(data=request.data)
        payload.is_valid(raise_exception=True)
        outcome = tickets_update_in_bulk(
            organization=self.organization, actor=Actor.of_agent(self.agent), **payload.validated_data
        )
        return EnvelopeResponse(outcome.payload(), message="Tickets atualizados.")

    def destroy(self, request, **kwargs):
        if not request.user.has_perm(DELETE_TICKETS_PERM):
            raise AccessDenied(detail="Você não tem permissão para excluir tickets.")
        ticket_delete(
            ticket=ticket_get(organization=self.organization, ticket_id=kwargs["id"]), actor=Actor.of_agent(self.agent)
        )
        return EnvelopeResponse(None, message="Ticket excluído.")

    @action(
        detail=True,
        methods=["post"],
        url_path="respostas",
        parser_classes=[JSONObjectParser, StreamedMultiPartParser],
    )
    def replies(self, request, **kwargs):
        ticket = ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        # Private DRF API: test_a_panel_reply_with_files_answers_the_reply_and_its_attachments
        if not self.streams_upload(request._request):
            payload = PanelReplyIn(data=request.data)
            payload.is_valid(raise_exception=True)
            reply = reply_create_by_agent(ticket=ticket, agent=self.agent, **payload.validated_data)
            return EnvelopeResponse(reply_panel(reply_row(reply)), message="Resposta enviada.", status=201)
        use_streamed_uploads(request, max_files=FILES_PER_REPLY)
        payload = PanelReplyUploadIn(data=_reply_form(request))
        payload.is_valid(raise_exception=True)
        reply, attachments = reply_create_with_attachments(ticket=ticket, agent=self.agent, **payload.validated_data)
        rows = [attachment_row(attachment) for attachment in attachments]
        data = {**reply_panel(reply_row(reply)), "anexos": attachments_panel(request, rows)}
        return EnvelopeResponse(data, message="Resposta enviada.", status=201)

    @action(detail=True, methods=["patch"], url_path=r"respostas/(?P<resposta>[^/]+)")
    def reply(self, request, resposta, **kwargs):
        reply = reply_get(ticket=ticket_get(organization=self.organization, ticket_id=kwargs["id"]), reply_id=resposta)
        reply_ensure_editable_by_agent(reply, self.agent)  # 403 before the body is even looked at
        payload = PanelReplyEditIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_edit_as_agent(reply=reply, agent=self.agent, **payload.validated_data)
        return EnvelopeResponse(reply_panel(reply_row(reply)), message="Resposta atualizada.")


@panel_status_docs
class PanelStatusViewSet(AgentPanelViewSet):
    def list(self, request):
        statuses = status_list(organization=self.organization)
        return EnvelopeResponse(PanelStatusOut(statuses, many=True).data, message="Status listados.")


@panel_tag_docs
class PanelTagViewSet(AgentPanelViewSet):
    def list(self, request):
        tags = tag_counts(organization=self.organization)
        return EnvelopeResponse(PanelTagOut(tags, many=True).data, message="Tags listadas.")


def _reply_form(request) -> dict:
    """The multipart reply's fields for PanelReplyUploadIn: text as sent, every `arquivo` file."""
    data = form_text(request, ("mensagem", "interna"))
    data[FIELD] = request.data.getlist(FIELD)  # the files, and any text sent as `arquivo` (a 422)
    return data
