"""The ticket list's two modes, one description: pages (`page`) and the cursor (`cursor`)."""

from api_framework.pagination import Page, page_payload
from tickets.api.serializers import TicketPageQuery, list_cursor
from tickets.selectors import ticket_page, ticket_page_after


def ticket_list_payload(query: TicketPageQuery, organization, *, columns: tuple, build, requester_id=None) -> dict:
    """The paginated shape; in cursor mode it also carries `proximo_cursor` (null after the last page).

    `requester_id` narrows the list to one contact's tickets (a contact's own list): the query's filters, order,
    pages and cursor work there exactly as on the whole list."""
    data, position = query.validated_data, query.position
    filters = query.filters if requester_id is None else {**query.filters, "requester_id": requester_id}
    per_page, read_as = data["por_pagina"], {"columns": columns, "order": query.order}
    if position is None:
        page = ticket_page(organization=organization, filters=filters, page=data["page"], per_page=per_page, **read_as)
        return page_payload(page, build)
    read = ticket_page_after(
        organization=organization, filters=filters, after=position.after, per_page=per_page, **read_as
    )
    page = Page(items=read.items, total=read.total, per_page=per_page, number=position.page)
    next_cursor = list_cursor(read.last, position.page + 1, organization, query.order) if read.last else None
    return {**page_payload(page, build), "proximo_cursor": next_cursor}
