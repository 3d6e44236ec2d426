"""Bulk edits of tickets (the admin's bulk actions, POST /api/tickets/lote): each ticket through the single
action's service, in its own transaction, so each is announced (audit, events) exactly as if edited alone and one
refused ticket never undoes another's change."""

from dataclasses import dataclass, field

from django.db import transaction

from foundation.exceptions import ApplicationError, ValidationFailed
from helpdesk.actors import Actor
from helpdesk.models import Agent, Organization
from helpdesk.selectors import agent_get
from tickets.models import StatusCategory
from tickets.selectors import status_get
from tickets.services import NO_TAGS_CHANGE, UNCHANGED, TagsChange, _assignee_check, _locked_ticket_of, ticket_update

MAX_BULK_TICKETS = 500
NOT_FOUND = "Ticket não encontrado."
CLOSED = "Ticket fechado: abra-o para alterá-lo."
NOTHING_TO_CHANGE = "Informe ao menos uma alteração: status_id, prioridade, atendente_id ou tags."


@dataclass
class BulkOutcome:
    """Which tickets were changed (or already were as asked), and which were left, with why."""

    updated: list = field(default_factory=list)
    ignored: list[tuple] = field(default_factory=list)

    def payload(self) -> dict:
        return {
            "atualizados": [str(ticket_id) for ticket_id in self.updated],
            "ignorados": [{"id": str(ticket_id), "motivo": reason} for ticket_id, reason in self.ignored],
        }


@dataclass(frozen=True)
class BulkChange:
    """What a bulk edit sets on every ticket; `assignee_id=None` unassigns, UNCHANGED leaves a field alone."""

    status_id: object = UNCHANGED
    priority: str | None = None
    assignee_id: object = UNCHANGED
    tags: TagsChange = NO_TAGS_CHANGE

    def is_empty(self) -> bool:
        return (
            self.status_id is UNCHANGED
            and self.priority is None
            and self.assignee_id is UNCHANGED
            and self.tags == NO_TAGS_CHANGE
        )


def tickets_update_in_bulk(*, organization: Organization, ticket_ids, change: BulkChange, actor: Actor) -> BulkOutcome:
    """Apply one change to many tickets of the organization (each id once), reported in the order given.

    What the change names (status, agent) is looked up once, before any ticket: a status or agent outside the
    organization refuses the whole request (404 on its field), like PATCH /api/tickets/{id}. Then each ticket is
    read under its row lock in its own transaction: one of another organization or gone is ignored as "not
    found", a closed one is ignored (it is reopened on its own page, on purpose), a ticket the change would break
    (over the tags' limit) is ignored with the rule's message. A ticket already as asked counts as updated: the
    request's outcome holds for it."""
    if change.is_empty():
        raise ValidationFailed({"body": [NOTHING_TO_CHANGE]})
    status = None
    if change.status_id is not UNCHANGED:
        status = status_get(organization_id=organization.pk, status_id=change.status_id)
    assignee: Agent | None = None
    if change.assignee_id not in (UNCHANGED, None):
        assignee = agent_get(organization_id=organization.pk, agent_id=change.assignee_id)
        _assignee_check(organization.pk, assignee)
    asked = list(dict.fromkeys(ticket_ids))
    # Tickets are locked in one order whatever the caller's: in the panel's request (one transaction, a savepoint
    # per ticket) the locks are held to the end, and two bulk edits over the same tickets must not deadlock.
    reasons = {
        ticket_id: _ticket_update_one(organization, ticket_id, change, status, assignee, actor)
        for ticket_id in sorted(asked, key=str)
    }
    outcome = BulkOutcome()
    for ticket_id in asked:
        if reasons[ticket_id] is None:
            outcome.updated.append(ticket_id)
        else:
            outcome.ignored.append((ticket_id, reasons[ticket_id]))
    return outcome


def _ticket_update_one(organization, ticket_id, change: BulkChange, status, assignee, actor: Actor) -> str | None:
    """One ticket's change in its own transaction; the reason it was left, or None."""
    try:
        with transaction.atomic():
            ticket = _locked_ticket_of(organization, ticket_id)
            if ticket is None:
                return NOT_FOUND
            if ticket.status.category == StatusCategory.CLOSED:
                return CLOSED
            ticket_update(
                ticket=ticket,
                status=status,
                assignee=assignee,
                unassign=change.assignee_id is None,
                priority=change.priority,
                tags_add=change.tags.add,
                tags_remove=change.tags.remove,
                actor=actor,
            )
    except ValidationFailed as refused:
        return " ".join(message for messages in refused.errors.values() for message in messages)
    except ApplicationError as refused:
        return refused.message
    return None
