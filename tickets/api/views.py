"""Partner API v1: thin views over tickets' services and selectors."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers

from helpdesk.api.pagination import PageQuery, page_payload, paginate
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
from helpdesk.avatars import avatar_url
from helpdesk.selectors import agent_list_active
from integrations.api.base import PartnerAPIView
from tickets.api.serializers import ReplyIn, ReplyPublicOut, TicketCreateIn, TicketListQuery, TicketPublicOut
from tickets.selectors import reply_for_output, reply_get_public, ticket_get, ticket_get_public, ticket_list_public
from tickets.services import (
    RequesterData,
    reply_create_by_customer,
    reply_edit_as_customer,
    reply_ensure_editable_by_customer,
    ticket_create,
)

TICKETS_PER_PAGE_DEFAULT = 15
AGENTS_PER_PAGE = 10


class TicketCollectionView(PartnerAPIView):
    body_required_methods = ("POST",)

    @extend_schema(
        operation_id="v1_tickets_list",
        tags=["Parceiros v1"],
        parameters=[TicketListQuery],
        responses={
            200: envelope("TicketsListados", page_of("PaginaTicketPublico", TicketPublicOut)),
            **errors(401, 422, 429),
        },
    )
    def get(self, request):
        query = TicketListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        tickets = ticket_list_public(
            organization=self.organization,
            priority=params.get("prioridade"),
            number=params.get("numero"),
            search=params.get("busca"),
        )
        page = paginate(tickets, page=params["page"], per_page=params["por_pagina"])
        return EnvelopeResponse(page_payload(page, TicketPublicOut), message="Tickets listados.")

    @extend_schema(
        operation_id="v1_tickets_create",
        tags=["Parceiros v1"],
        request=TicketCreateIn,
        responses={
            201: envelope("TicketCriado", TicketPublicOut),
            200: OpenApiResponse(envelope("TicketExistente", TicketPublicOut), description="Mesmo external_id."),
            **errors(400, 401, 413, 422, 429),
        },
    )
    def post(self, request):
        payload = TicketCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        requester = data["solicitante"]
        ticket, created = ticket_create(
            organization=self.organization,
            subject=data["assunto"],
            description=data["descricao"],
            priority=data.get("prioridade"),
            external_id=data.get("external_id"),
            requester=RequesterData(
                name=requester["nome"],
                email=(requester.get("email") or "").lower(),
                phone=requester.get("telefone") or "",
                external_id=requester.get("external_id"),
            ),
        )
        ticket = ticket_get_public(organization=self.organization, ticket_id=ticket.pk)
        if created:
            return EnvelopeResponse(TicketPublicOut(ticket).data, message="Ticket criado.", status=201)
        return EnvelopeResponse(TicketPublicOut(ticket).data, message="Ticket já existente para este external_id.")


class TicketDetailView(PartnerAPIView):
    @extend_schema(
        operation_id="v1_tickets_retrieve",
        tags=["Parceiros v1"],
        responses={200: envelope("TicketEncontrado", TicketPublicOut), **errors(401, 404, 429)},
    )
    def get(self, request, id):
        ticket = ticket_get_public(organization=self.organization, ticket_id=id)
        return EnvelopeResponse(TicketPublicOut(ticket).data, message="Ticket encontrado.")


class ReplyCollectionView(PartnerAPIView):
    body_required_methods = ("POST",)

    @extend_schema(
        operation_id="v1_tickets_replies_create",
        tags=["Parceiros v1"],
        request=ReplyIn,
        responses={201: envelope("RespostaEnviada", ReplyPublicOut), **errors(400, 401, 404, 409, 413, 422, 429)},
    )
    def post(self, request, id):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        payload = ReplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_create_by_customer(ticket=ticket, body=payload.validated_data["mensagem"])
        return EnvelopeResponse(ReplyPublicOut(reply_for_output(reply)).data, message="Resposta enviada.", status=201)


class ReplyDetailView(PartnerAPIView):
    body_required_methods = ("PATCH",)

    @extend_schema(
        operation_id="v1_tickets_replies_update",
        tags=["Parceiros v1"],
        request=ReplyIn,
        responses={200: envelope("RespostaAtualizada", ReplyPublicOut), **errors(400, 401, 403, 404, 422, 429)},
    )
    def patch(self, request, id, resposta):
        ticket = ticket_get(organization=self.organization, ticket_id=id)
        reply = reply_get_public(ticket=ticket, reply_id=resposta)
        reply_ensure_editable_by_customer(reply)  # 403 before the body is even looked at
        payload = ReplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_edit_as_customer(reply=reply, body=payload.validated_data["mensagem"])
        return EnvelopeResponse(ReplyPublicOut(reply).data, message="Resposta atualizada.")


class AgentOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    avatar_url = serializers.SerializerMethodField()

    @extend_schema_field(OpenApiTypes.URI)
    def get_avatar_url(self, agent) -> str | None:
        return avatar_url(self.context["request"], agent)


class AgentCollectionView(PartnerAPIView):
    @extend_schema(
        operation_id="v1_agents_list",
        tags=["Parceiros v1"],
        parameters=[PageQuery],
        responses={200: envelope("AtendentesListados", page_of("PaginaAtendente", AgentOut)), **errors(401, 422, 429)},
    )
    def get(self, request):
        query = PageQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = paginate(
            agent_list_active(organization=self.organization),
            page=query.validated_data["page"],
            per_page=AGENTS_PER_PAGE,
        )
        return EnvelopeResponse(
            page_payload(page, AgentOut, context={"request": request}), message="Atendentes listados."
        )
