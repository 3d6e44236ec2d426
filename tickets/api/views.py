"""Partner API v1: thin views over tickets' services and selectors."""

from rest_framework import serializers

from helpdesk.api.pagination import PageQuery, page_payload, paginate
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.avatars import avatar_url
from helpdesk.selectors import agent_list_active
from integrations.api.base import PartnerAPIView
from tickets.api.serializers import ReplyIn, ReplyPublicOut, TicketCreateIn, TicketListQuery, TicketPublicOut
from tickets.selectors import reply_for_output, reply_get_public, ticket_get, ticket_get_public, ticket_list_public
from tickets.services import RequesterData, reply_create_by_customer, reply_edit_as_customer, ticket_create

TICKETS_PER_PAGE_DEFAULT = 15
AGENTS_PER_PAGE = 10


class TicketCollectionView(PartnerAPIView):
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
    def get(self, request, ticket_id):
        ticket = ticket_get_public(organization=self.organization, ticket_id=ticket_id)
        return EnvelopeResponse(TicketPublicOut(ticket).data, message="Ticket encontrado.")


class ReplyCollectionView(PartnerAPIView):
    def post(self, request, ticket_id):
        ticket = ticket_get(organization=self.organization, ticket_id=ticket_id)
        payload = ReplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_create_by_customer(ticket=ticket, body=payload.validated_data["mensagem"])
        return EnvelopeResponse(ReplyPublicOut(reply_for_output(reply)).data, message="Resposta enviada.", status=201)


class ReplyDetailView(PartnerAPIView):
    def patch(self, request, ticket_id, reply_id):
        ticket = ticket_get(organization=self.organization, ticket_id=ticket_id)
        reply = reply_get_public(ticket=ticket, reply_id=reply_id)
        payload = ReplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_edit_as_customer(reply=reply, body=payload.validated_data["mensagem"])
        return EnvelopeResponse(ReplyPublicOut(reply).data, message="Resposta atualizada.")


class AgentOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    avatar_url = serializers.SerializerMethodField()

    def get_avatar_url(self, agent) -> str | None:
        return avatar_url(self.context["request"], agent)


class AgentCollectionView(PartnerAPIView):
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
