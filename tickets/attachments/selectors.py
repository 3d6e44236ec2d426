"""Read queries of attachments: a page of a ticket's attachments is two statements (count and rows)."""

from django.db.models import Q, QuerySet

from tickets.models import Attachment, Ticket

# An attachment is public unless its reply is an internal note.
PUBLIC = Q(reply__isnull=True) | Q(reply__is_internal=False)


def attachment_list_public(*, ticket: Ticket) -> QuerySet[Attachment]:
    """The ticket's attachments a partner may see (the customer's and agents' public ones), oldest first."""
    return Attachment.objects.filter(PUBLIC, ticket_id=ticket.pk).order_by("created_at", "id")


def attachment_list_panel(*, ticket: Ticket) -> QuerySet[Attachment]:
    """Every attachment of the ticket, internal notes' included, oldest first."""
    return Attachment.objects.filter(ticket_id=ticket.pk).order_by("created_at", "id")


def attachment_for_download(*, attachment_id, organization_id, include_internal: bool) -> Attachment | None:
    """The attachment a signed link names, in the organization it was signed for, while that organization
    is not suspended (a link is a door too); an internal note's only for a link signed for agents."""
    attachments = Attachment.objects.filter(
        pk=attachment_id, organization_id=organization_id, organization__is_active=True
    )
    if not include_internal:
        attachments = attachments.filter(PUBLIC)
    return attachments.only("id", "storage_key", "name", "content_type", "size").first()
