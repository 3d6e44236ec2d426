"""Agent panel API (JWT): the same services as the admin, for panel front ends."""

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action

from helpdesk.actors import Actor
from helpdesk.api.panel import AgentPanelViewSet
from helpdesk.api.parsers import JSONObjectParser
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
from helpdesk.exceptions import AccessDenied
from helpdesk.permissions import DELETE_TICKETS_PERM
from helpdesk.selectors import agent_get
from tickets.api.attachment_serializers import PanelReplyUploadIn
from tickets.api.pages import ticket_list_payload
from tickets.api.panel_serializers import (
    PanelReplyEditIn,
    PanelReplyIn,
    PanelReplyOut,
    PanelReplyWithAttachmentsOut,
    PanelStatusOut,
    PanelTicketCreateIn,
    PanelTicketListQuery,
    PanelTicketOut,
    PanelTicketUpdateIn,
)
from tickets.api.serializers import LIST_CURSOR_OUT
from tickets.attachments.services import reply_create_with_attachments
from tickets.attachments.uploads import FIELD, StreamedMultiPartParser, form_text, use_streamed_uploads
from tickets.payloads import (
    PANEL_TICKET_COLUMNS,
    attachment_row,
    attachments_panel,
    reply_panel,
    reply_row,
    ticket_panel_row,
    tickets_panel,
)
from tickets.selectors import reply_get, status_list, ticket_get, ticket_row_get
from tickets.services import (
    reply_create_by_agent,
    reply_edit_as_agent,
    reply_ensure_editable_by_agent,
    ticket_delete,
    ticket_open,
    ticket_update_by_ids,
)

TAGS = ["Painel: tickets"]
FILES_PER_REPLY = 10
CANNOT_DELETE = "O usuário não tem a permissão de excluir tickets (campo `permissao`)."
TICKET_NOT_FOUND = "Ticket não encontrado (campo `id`); um id que não é UUID responde igual."
REPLY_NOT_FOUND = "Ticket não encontrado (campo `id`) ou resposta não encontrada neste ticket (campo `resposta`)."


class PanelTicketViewSet(AgentPanelViewSet):
    upload_actions = frozenset({"replies"})

    @extend_schema(
        operation_id="panel_tickets_list",
        tags=TAGS,
        description="Tickets da organização, com notas internas (`interna`), do mais novo ao mais antigo.",
        parameters=[PanelTicketListQuery],
        responses={
            200: envelope("TicketsDoPainelListados", page_of("PaginaTicketDoPainel", PanelTicketOut, **LIST_CURSOR_OUT))
        },
    )
    def list(self, request):
        query = PanelTicketListQuery.from_request(request, self.organization)
        payload = ticket_list_payload(query, self.organization, columns=PANEL_TICKET_COLUMNS, build=tickets_panel)
        return EnvelopeResponse(payload, message="Tickets listados.")

    @extend_schema(
        operation_id="panel_tickets_create",
        tags=TAGS,
        description=(
            "Abre um ticket em nome de um solicitante (reaproveitado pelo `external_id` ou, sem ele, pelo e-mail, como "
            "na API de parceiros), com `canal_origem` `painel`. Dispara `ticket.criado` e, com `atendente_id`, "
            "`ticket.atribuido`."
        ),
        request=PanelTicketCreateIn,
        responses={
            201: envelope("TicketDoPainelCriado", PanelTicketOut),
            **errors(404, descriptions={404: "Atendente não encontrado (campo `atendente_id`)."}),
        },
    )
    def create(self, request):
        payload = PanelTicketCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        values = dict(payload.validated_data)
        assignee_id = values.pop("assignee_id", None)
        if assignee_id is not None:
            values["assignee"] = agent_get(organization=self.organization, agent_id=assignee_id)
        ticket = ticket_open(organization=self.organization, actor=Actor.of_agent(self.agent), **values)
        return EnvelopeResponse(tickets_panel([ticket_panel_row(ticket)])[0], message="Ticket criado.", status=201)

    @extend_schema(
        operation_id="panel_tickets_retrieve",
        tags=TAGS,
        description="Um ticket com toda a conversa, notas internas incluídas.",
        responses={
            200: envelope("TicketDoPainel", PanelTicketOut),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    )
    def retrieve(self, request, id):
        row = ticket_row_get(organization=self.organization, ticket_id=id, columns=PANEL_TICKET_COLUMNS)
        return EnvelopeResponse(tickets_panel([row])[0], message="Ticket encontrado.")

    @extend_schema(
        operation_id="panel_tickets_update",
        tags=TAGS,
        description=(
            "Muda status, atendente e prioridade; campos ausentes ficam como estão e `atendente_id: null` tira o "
            "atendente. Entrar num status resolvido dispara `ticket.resolvido`."
        ),
        request=PanelTicketUpdateIn,
        responses={
            200: envelope("TicketAtualizado", PanelTicketOut),
            **errors(
                404,
                descriptions={
                    404: (
                        "Ticket não encontrado (campo `id`), status não encontrado (campo `status_id`) ou "
                        "atendente não encontrado (campo `atendente_id`)."
                    )
                },
            ),
        },
    )
    def partial_update(self, request, id):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        payload = PanelTicketUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        ticket = ticket_update_by_ids(ticket=ticket, actor=Actor.of_agent(self.agent), **payload.validated_data)
        return EnvelopeResponse(tickets_panel([ticket_panel_row(ticket)])[0], message="Ticket atualizado.")

    @extend_schema(
        operation_id="panel_tickets_destroy",
        tags=TAGS,
        description=(
            "Exclui o ticket, com as suas respostas, notas e anexos. Exige a permissão de excluir tickets "
            "(`tickets.delete_ticket`, do grupo Suporte, a mesma do admin); sem ela, 403 no campo `permissao`. "
            "Dispara `ticket.excluido`, e o ticket passa a vir em `excluidos` da lista de alterações."
        ),
        request=None,
        responses={
            200: envelope("TicketExcluido", None),
            **errors(403, 404, descriptions={403: CANNOT_DELETE, 404: TICKET_NOT_FOUND}),
        },
    )
    def destroy(self, request, id):
        if not request.user.has_perm(DELETE_TICKETS_PERM):
            raise AccessDenied(detail="Você não tem permissão para excluir tickets.")
        ticket_delete(ticket=ticket_get(organization=self.organization, ticket_id=id), actor=Actor.of_agent(self.agent))
        return EnvelopeResponse(None, message="Ticket excluído.")

    @extend_schema(
        operation_id="panel_replies_create",
        tags=TAGS,
        description=(
            "Resposta pública (dispara `ticket.resposta_publica`) ou nota interna (`interna: true`). Em "
            "`multipart/form-data`, com arquivos no campo `arquivo` (repetível, até 10): a resposta e os arquivos "
            "ficam juntos ou nenhum fica, e a resposta devolvida traz `anexos`. Cada arquivo de uma resposta "
            "pública dispara `ticket.anexo_adicionado`; os de uma nota interna nunca saem para o parceiro."
        ),
        request={"application/json": PanelReplyIn, "multipart/form-data": PanelReplyUploadIn},
        responses={
            201: envelope("RespostaDoAtendenteEnviada", PanelReplyWithAttachmentsOut),
            **errors(
                404,
                409,
                413,
                415,
                descriptions={
                    404: TICKET_NOT_FOUND,
                    409: "Os arquivos passariam de ANEXOS_POR_TICKET anexos no ticket (campo `arquivo`).",
                    413: "Um arquivo acima de ANEXO_MAX_BYTES (campo `arquivo`), ou um corpo JSON acima de 1 MiB.",
                    415: "Corpo que não é JSON nem multipart/form-data (campo `Content-Type`), ou tipo de arquivo não "
                    "aceito (campo `arquivo`).",
                },
            ),
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="respostas",
        parser_classes=[JSONObjectParser, StreamedMultiPartParser],
    )
    def replies(self, request, id):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
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

    @extend_schema(
        operation_id="panel_replies_update",
        tags=TAGS,
        description=(
            "Edita uma resposta ou nota do próprio atendente; um texto diferente dispara `ticket.resposta_editada`."
        ),
        request=PanelReplyEditIn,
        responses={
            200: envelope("RespostaDoAtendenteAtualizada", PanelReplyOut),
            **errors(
                403,
                404,
                descriptions={
                    403: "A resposta não é do atendente (campo `resposta`).",
                    404: REPLY_NOT_FOUND,
                },
            ),
        },
    )
    @action(detail=True, methods=["patch"], url_path=r"respostas/(?P<resposta>[^/]+)")
    def reply(self, request, id, resposta):
        reply = reply_get(ticket=ticket_get(organization=self.organization, ticket_id=id), reply_id=resposta)
        reply_ensure_editable_by_agent(reply, self.agent)  # 403 before the body is even looked at
        payload = PanelReplyEditIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_edit_as_agent(reply=reply, agent=self.agent, **payload.validated_data)
        return EnvelopeResponse(reply_panel(reply_row(reply)), message="Resposta atualizada.")


class PanelStatusViewSet(AgentPanelViewSet):
    @extend_schema(
        operation_id="panel_statuses_list",
        tags=TAGS,
        description="Os status de ticket da organização.",
        responses={200: envelope("StatusListados", PanelStatusOut, many=True)},
    )
    def list(self, request):
        statuses = status_list(organization=self.organization)
        return EnvelopeResponse(PanelStatusOut(statuses, many=True).data, message="Status listados.")


def _reply_form(request) -> dict:
    """The multipart reply's fields for PanelReplyUploadIn: text as sent, every `arquivo` file."""
    data = form_text(request, ("mensagem", "interna"))
    data[FIELD] = request.data.getlist(FIELD)  # the files, and any text sent as `arquivo` (a 422)
    return data
