"""Agent panel API (JWT): the same services as the admin, for panel front ends."""

from drf_spectacular.utils import extend_schema

from helpdesk.api.pagination import page_payload, paginate
from helpdesk.api.panel import AgentPanelAPIView
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
from helpdesk.selectors import agent_get
from tickets.api.panel_serializers import (
    PanelReplyEditIn,
    PanelReplyIn,
    PanelReplyOut,
    PanelStatusOut,
    PanelTicketListQuery,
    PanelTicketOut,
    PanelTicketUpdateIn,
)
from tickets.selectors import (
    reply_get,
    status_get,
    status_list,
    ticket_get,
    ticket_list_panel,
    ticket_panel_queryset,
)
from tickets.services import (
    reply_create_by_agent,
    reply_edit_as_agent,
    reply_ensure_editable_by_agent,
    ticket_update,
)


class PanelTicketCollectionView(AgentPanelAPIView):
    @extend_schema(
        operation_id="panel_tickets_list",
        tags=["Painel: tickets"],
        parameters=[PanelTicketListQuery],
        responses={
            200: envelope("TicketsDoPainelListados", page_of("PaginaTicketDoPainel", PanelTicketOut)),
            **errors(401, 403, 422, 429),
        },
    )
    def get(self, request):
        query = PanelTicketListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        tickets = ticket_list_panel(
            organization=self.organization,
            priority=params.get("prioridade"),
            number=params.get("numero"),
            search=params.get("busca"),
            status_id=params.get("status"),
            assignee_id=params.get("atendente"),
        )
        page = paginate(tickets, page=params["page"], per_page=params["por_pagina"])
        return EnvelopeResponse(page_payload(page, PanelTicketOut), message="Tickets listados.")


class PanelTicketDetailView(AgentPanelAPIView):
    body_required_methods = ("PATCH",)

    @extend_schema(
        operation_id="panel_tickets_retrieve",
        tags=["Painel: tickets"],
        responses={200: envelope("TicketDoPainel", PanelTicketOut), **errors(401, 403, 404, 429)},
    )
    def get(self, request, id):
        return EnvelopeResponse(PanelTicketOut(self._ticket(id)).data, message="Ticket encontrado.")

    @extend_schema(
        operation_id="panel_tickets_update",
        tags=["Painel: tickets"],
        request=PanelTicketUpdateIn,
        responses={200: envelope("TicketAtualizado", PanelTicketOut), **errors(400, 401, 403, 404, 422, 429)},
    )
    def patch(self, request, id):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        payload = PanelTicketUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        status = (
            status_get(organization=self.organization, status_id=data["status_id"]) if "status_id" in data else None
        )
        assignee = None
        if data.get("atendente_id") is not None:
            assignee = agent_get(organization=self.organization, agent_id=data["atendente_id"])
        ticket_update(
            ticket=ticket,
            status=status,
            assignee=assignee,
            priority=data.get("prioridade"),
            unassign="atendente_id" in data and data["atendente_id"] is None,
        )
        return EnvelopeResponse(PanelTicketOut(self._ticket(id)).data, message="Ticket atualizado.")

    def _ticket(self, ticket_id):
        return ticket_get(
            organization=self.organization,
            ticket_id=ticket_id,
            queryset=ticket_panel_queryset(organization=self.organization),
        )


class PanelReplyCollectionView(AgentPanelAPIView):
    body_required_methods = ("POST",)

    @extend_schema(
        operation_id="panel_replies_create",
        tags=["Painel: tickets"],
        request=PanelReplyIn,
        responses={201: envelope("RespostaDoAtendenteEnviada", PanelReplyOut), **errors(400, 401, 403, 404, 422, 429)},
    )
    def post(self, request, id):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        payload = PanelReplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_create_by_agent(
            ticket=ticket,
            agent=self.agent,
            body=payload.validated_data["mensagem"],
            internal=payload.validated_data["interna"],
        )
        reply = reply_get(ticket=ticket, reply_id=reply.pk)
        return EnvelopeResponse(PanelReplyOut(reply).data, message="Resposta enviada.", status=201)


class PanelReplyDetailView(AgentPanelAPIView):
    body_required_methods = ("PATCH",)

    @extend_schema(
        operation_id="panel_replies_update",
        tags=["Painel: tickets"],
        request=PanelReplyEditIn,
        responses={
            200: envelope("RespostaDoAtendenteAtualizada", PanelReplyOut),
            **errors(400, 401, 403, 404, 422, 429),
        },
    )
    def patch(self, request, id, resposta):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        reply = reply_get(ticket=ticket, reply_id=resposta)
        reply_ensure_editable_by_agent(reply, self.agent)  # 403 before the body is even looked at
        payload = PanelReplyEditIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_edit_as_agent(reply=reply, agent=self.agent, body=payload.validated_data["mensagem"])
        return EnvelopeResponse(PanelReplyOut(reply).data, message="Resposta atualizada.")


class PanelStatusCollectionView(AgentPanelAPIView):
    @extend_schema(
        operation_id="panel_statuses_list",
        tags=["Painel: tickets"],
        responses={200: envelope("StatusListados", PanelStatusOut, many=True), **errors(401, 403, 429)},
    )
    def get(self, request):
        statuses = status_list(organization=self.organization)
        return EnvelopeResponse(PanelStatusOut(statuses, many=True).data, message="Status listados.")
