"""The ticket list's two modes, one description: pages (`page`) and the cursor (`cursor`)."""

from api_framework.pagination import Page, page_payload
from tickets.api.serializers import TicketListQuery, list_cursor
from tickets.selectors import ticket_page, ticket_page_after


def ticket_list_payload(
    query: TicketListQuery, organization, *, columns: tuple, build, within: dict | None = None
) -> dict:
    """The paginated shape; in cursor mode it also carries `proximo_cursor` (null after the last page).
    `within` are filters the route itself sets (a contact's tickets: `requester_id`), added to the query's."""
    data, position = query.validated_data, query.position
    per_page, filters = data["por_pagina"], {**query.filters, **(within or {})}
    if position is None:
        page = ticket_page(
            organization=organization, filters=filters, page=data["page"], per_page=per_page, columns=columns
        )
        return page_payload(page, build)
    read = ticket_page_after(
        organization=organization, filters=filters, after=position.after, per_page=per_page, columns=columns
    )
    page = Page(items=read.items, total=read.total, per_page=per_page, number=position.page)
    next_cursor = list_cursor(read.last, position.page + 1, organization) if read.last else None
    return {**page_payload(page, build), "proximo_cursor": next_cursor}
