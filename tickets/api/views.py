"""Partner API v1: thin viewsets over tickets' services and selectors."""

from functools import partial

from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError

from api_framework.pagination import PageQuery, page_payload
from api_framework.responses import EnvelopeResponse
from helpdesk.selectors import agent_list_active
from integrations.api.base import PartnerViewSet, Scope
from tickets.api.pages import ticket_list_payload
from tickets.api.serializers import (
    BlocksQuery,
    RatingIn,
    ReplyIn,
    TicketChangesQuery,
    TicketCreateIn,
    TicketListQuery,
    TicketTagsIn,
    changes_cursor,
)
from tickets.api.views_docs import agent_docs, ticket_docs
from tickets.payloads import (
    AGENT_COLUMNS,
    agents_public,
    rating_public,
    reply_public,
    reply_row,
    ticket_columns,
    ticket_fields_public,
    ticket_new_public,
    ticket_public,
    tickets_public,
    tombstone_public,
)
from tickets.selectors import reply_get_public, ticket_changes, ticket_get, ticket_row_get
from tickets.services import (
    reply_create_by_customer,
    reply_edit_as_customer,
    reply_ensure_editable_by_customer,
    ticket_create,
    ticket_fields_set_by_customer,
    ticket_rate_by_customer,
    ticket_reopen_by_customer,
    ticket_resolve_by_customer,
    ticket_tags_change_by_customer,
)

AGENTS_PER_PAGE = 10


@ticket_docs
class TicketViewSet(PartnerViewSet):
    scopes = {
        "list": Scope.TICKETS_READ,
        "changes": Scope.TICKETS_READ,
        "retrieve": Scope.TICKETS_READ,
        "create": Scope.TICKETS_WRITE,
        "replies": Scope.REPLIES_WRITE,
        "reply": Scope.REPLIES_WRITE,
        "resolve": Scope.TICKETS_WRITE,
        "reopen": Scope.TICKETS_WRITE,
        "fields": Scope.TICKETS_WRITE,
        "tags": Scope.TICKETS_WRITE,
        "rating": Scope.TICKETS_WRITE,
    }
    # A PATCH that takes Idempotency-Key as the POSTs do (integrations.api.base).
    idempotent_patches = frozenset({"tags"})

    def list(self, request):
        query = TicketListQuery.from_request(request, self.organization)
        blocks = query.blocks
        payload = ticket_list_payload(
            query, self.organization, columns=ticket_columns(blocks), build=partial(tickets_public, blocks=blocks)
        )
        return EnvelopeResponse(payload, message="Tickets listados.")

    def create(self, request):
        blocks = BlocksQuery.blocks_of(request)
        payload = TicketCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        ticket, created = ticket_create(organization=self.organization, **payload.validated_data)
        if created:
            return EnvelopeResponse(ticket_new_public(ticket, blocks), message="Ticket criado.", status=201)
        return EnvelopeResponse(ticket_public(ticket, blocks), message="Ticket já existente para este external_id.")

    @action(detail=False, methods=["get"], url_path="alteracoes")
    def changes(self, request):
        query = TicketChangesQuery.from_request(request, self.organization).validated_data
        blocks = query.get("incluir", ())
        page = ticket_changes(
            organization=self.organization,
            start=query.get("desde"),
            limit=query["limite"],
            columns=ticket_columns(blocks),
        )
        payload = {
            "itens": tickets_public(page.tickets, blocks),
            "excluidos": [tombstone_public(tombstone) for tombstone in page.deleted],
            "proximo_cursor": changes_cursor(page.next, self.organization),
            "tem_mais": page.has_more,
        }
        return EnvelopeResponse(payload, message="Alterações listadas.")

    def retrieve(self, request, **kwargs):
        blocks = BlocksQuery.blocks_of(
            request, first=lambda: ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        )
        row = ticket_row_get(organization=self.organization, ticket_id=kwargs["id"], columns=ticket_columns(blocks))
        return EnvelopeResponse(tickets_public([row], blocks)[0], message="Ticket encontrado.")

    @action(detail=True, methods=["post"], url_path="respostas")
    def replies(self, request, **kwargs):
        payload = ReplyIn(data=request.data)
        if not payload.is_valid():
            ticket_get(organization=self.organization, ticket_id=kwargs["id"])  # a missing ticket's 404 comes first
            raise ValidationError(payload.errors)
        reply = reply_create_by_customer(
            organization=self.organization, ticket_id=kwargs["id"], **payload.validated_data
        )
        return EnvelopeResponse(reply_public(reply_row(reply)), message="Resposta enviada.", status=201)

    @action(detail=True, methods=["post"], url_path="resolver", takes_body=False)
    def resolve(self, request, **kwargs):
        blocks = BlocksQuery.blocks_of(
            request, first=lambda: ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        )
        ticket = ticket_resolve_by_customer(organization=self.organization, ticket_id=kwargs["id"])
        return EnvelopeResponse(ticket_public(ticket, blocks), message="Ticket resolvido.")

    @action(detail=True, methods=["post"], url_path="reabrir", takes_body=False)
    def reopen(self, request, **kwargs):
        blocks = BlocksQuery.blocks_of(
            request, first=lambda: ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        )
        ticket = ticket_reopen_by_customer(organization=self.organization, ticket_id=kwargs["id"])
        return EnvelopeResponse(ticket_public(ticket, blocks), message="Ticket reaberto.")

    @action(detail=True, methods=["post"], url_path="avaliacao")
    def rating(self, request, **kwargs):
        payload = RatingIn(data=request.data)
        if not payload.is_valid():
            ticket_get(organization=self.organization, ticket_id=kwargs["id"])  # a missing ticket's 404 comes first
            raise ValidationError(payload.errors)
        rating, created = ticket_rate_by_customer(
            organization=self.organization, ticket_id=kwargs["id"], **payload.validated_data
        )
        if created:
            return EnvelopeResponse(rating_public(rating), message="Avaliação registrada.", status=201)
        return EnvelopeResponse(rating_public(rating), message="Avaliação atualizada.")

    @action(detail=True, methods=["patch"], url_path="campos")
    def fields(self, request, **kwargs):
        ticket = ticket_fields_set_by_customer(
            organization=self.organization, ticket_id=kwargs["id"], values=request.data
        )
        return EnvelopeResponse(ticket_fields_public(ticket), message="Campos atualizados.")

    @action(detail=True, methods=["patch"], url_path="tags")
    def tags(self, request, **kwargs):
        payload = TicketTagsIn(data=request.data)
        if not payload.is_valid():
            ticket_get(organization=self.organization, ticket_id=kwargs["id"])  # a missing ticket's 404 comes first
            raise ValidationError(payload.errors)
        ticket = ticket_tags_change_by_customer(
            organization=self.organization, ticket_id=kwargs["id"], change=payload.validated_data
        )
        return EnvelopeResponse({"tags": list(ticket.tags)}, message="Tags atualizadas.")

    @action(detail=True, methods=["patch"], url_path=r"respostas/(?P<resposta>[^/]+)")
    def reply(self, request, resposta, **kwargs):
        reply = reply_get_public(
            ticket=ticket_get(organization=self.organization, ticket_id=kwargs["id"]), reply_id=resposta
        )
        reply_ensure_editable_by_customer(reply)  # 403 before the body is even looked at
        payload = ReplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_edit_as_customer(reply=reply, **payload.validated_data)
        return EnvelopeResponse(reply_public(reply_row(reply)), message="Resposta atualizada.")


@agent_docs
class AgentViewSet(PartnerViewSet):
    scopes = {"list": Scope.TICKETS_READ}

    def list(self, request):
        agents = agent_list_active(organization=self.organization)
        page = PageQuery.from_request(request).page_of(agents, columns=AGENT_COLUMNS, per_page=AGENTS_PER_PAGE)
        return EnvelopeResponse(
            page_payload(page, lambda rows: agents_public(request, rows)), message="Atendentes listados."
        )
