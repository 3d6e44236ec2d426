"""Partner API v1: the organization's contacts (requesters), their tickets, and corrections to them."""

from functools import partial

from rest_framework.decorators import action

from api_framework.pagination import page_payload
from api_framework.responses import EnvelopeResponse
from helpdesk.actors import PARTNER
from integrations.api.base import PartnerViewSet, Scope
from tickets.api.contact_serializers import ContactListQuery, ContactUpdateIn
from tickets.api.contact_views_docs import contact_docs
from tickets.api.pages import ticket_list_payload
from tickets.api.serializers import TicketListQuery
from tickets.payloads import CONTACT_COLUMNS, contact_partner, contact_row, ticket_columns, tickets_public
from tickets.selectors import contact_get, contact_page, contact_row_get
from tickets.services import contact_update


def _contacts(rows) -> list[dict]:
    return [contact_partner(row) for row in rows]


@contact_docs
class ContactViewSet(PartnerViewSet):
    scopes = {
        "list": Scope.CONTACTS_READ,
        "retrieve": Scope.CONTACTS_READ,
        "partial_update": Scope.CONTACTS_WRITE,
        # What it answers are tickets, as GET /api/v1/tickets does: a contacts-only key does not read them.
        "tickets": Scope.TICKETS_READ,
    }

    def list(self, request):
        query = ContactListQuery.from_request(request)
        data = query.validated_data
        page = contact_page(
            organization=self.organization,
            page=data["page"],
            per_page=data["por_pagina"],
            columns=CONTACT_COLUMNS,
            **query.filters,
        )
        return EnvelopeResponse(page_payload(page, _contacts), message="Contatos listados.")

    def retrieve(self, request, **kwargs):
        row = contact_row_get(organization=self.organization, contact_id=kwargs["id"], columns=CONTACT_COLUMNS)
        return EnvelopeResponse(contact_partner(row), message="Contato encontrado.")

    def partial_update(self, request, **kwargs):
        contact = contact_get(organization=self.organization, contact_id=kwargs["id"])  # the 404 before the 422
        payload = ContactUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        contact = contact_update(contact=contact, actor=PARTNER, **payload.validated_data)
        return EnvelopeResponse(contact_partner(contact_row(contact)), message="Contato atualizado.")

    @action(detail=True, methods=["get"], url_path="tickets")
    def tickets(self, request, **kwargs):
        contact = contact_get(organization=self.organization, contact_id=kwargs["id"])  # the 404 before the 422
        query = TicketListQuery.from_request(request, self.organization)
        blocks = query.blocks
        payload = ticket_list_payload(
            query,
            self.organization,
            columns=ticket_columns(blocks),
            build=partial(tickets_public, blocks=blocks),
            requester_id=contact.pk,
        )
        return EnvelopeResponse(payload, message="Tickets listados.")
