"""Merging duplicate tickets (issue 24): the sources' threads move to one target, and the sources close.

tickets_merge is the one path (the admin's "Mesclar em...", the panel's POST /api/tickets/{id}/mesclar). The
decisions it makes (the source's description, the counters, the locks) are in docs/decisions.md, "Merging
duplicate tickets".
"""

from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from foundation.exceptions import ValidationFailed
from helpdesk.actors import Actor
from tickets import signals
from tickets.exceptions import StatusUnavailable, TicketMerged, TicketNotFound
from tickets.models import Attachment, Reply, ReplyOrigin, StatusCategory, Ticket
from tickets.selectors import status_first_of_category
from tickets.services import _ticket_change, tickets_touch

MERGE_MIN_TICKETS = 2  # the target and one source
MERGE_MAX_TICKETS = 20


def tickets_merge_check(*, target: Ticket, sources: list[Ticket]) -> None:
    """What the input must be, before anything is locked (a 422 on `origens`): 2 to 20 tickets in all, one
    organization, each once, the target not among the sources."""
    source_ids = [source.pk for source in sources]
    errors = []
    if not source_ids:
        errors.append("Informe ao menos um ticket para mesclar.")
    elif len(set(source_ids)) != len(source_ids):
        errors.append("Um ticket aparece mais de uma vez.")
    elif target.pk in source_ids:
        errors.append("O ticket de destino não pode estar entre as origens.")
    elif len(source_ids) + 1 > MERGE_MAX_TICKETS:
        errors.append(f"Mescle no máximo {MERGE_MAX_TICKETS} tickets de uma vez (o destino incluído).")
    elif any(source.organization_id != target.organization_id for source in sources):
        # The doors look tickets up in the caller's organization: this is a guard for callers that do not.
        errors.append("Todos os tickets devem ser da mesma organização.")
    if errors:
        raise ValidationFailed({"origens": errors})


def tickets_merge(*, target: Ticket, sources: list[Ticket], actor: Actor) -> Ticket:
    """Merge `sources` into `target`, in one transaction: all of it or nothing.

    Every ticket is locked first, in the order of their ids (two merges over the same tickets lock in the same
    order: one waits for the other, never a deadlock), and judged under the locks: a ticket merged meanwhile is
    refused (TicketMerged, 409). Then, per source, in the order given: its replies, notes and attachments move
    to the target (each reply keeps its instant and is marked with the source's number), its description
    becomes a customer message of the target at the source's creation instant, the source gets `merged_into`
    and goes to its organization's first `fechado` status through the ticket's normal write (_ticket_change:
    SLA, change list, `ticket.status_alterado`), an internal note "Mesclado em #N", and `ticket_merged`
    (`ticket.mesclado`). Last, the target: its reply counters take the sources' (and the descriptions, customer
    messages now), it moves in the change list, and it gets a note listing the merged numbers. Tickets merged
    into a source before now point to the target (a merged ticket's `merged_into` is never merged itself).
    Returns the target, read again.
    """
    tickets_merge_check(target=target, sources=sources)
    # A savepoint when a caller's transaction is open: a refusal found under the locks (TicketMerged) or a failure
    # undoes the merge alone, and the caller (the admin's action, which then shows the error) goes on.
    with transaction.atomic():
        ids = [target.pk, *(source.pk for source in sources)]
        # The bare rows, locked in one fixed order (by id), with those merged into a source earlier (re-pointed
        # below): no merge waits for another while holding a row that one needs. Read with their relations once held.
        lockable = Ticket.objects.filter(Q(pk__in=ids) | Q(merged_into__in=ids[1:])).order_by("pk")
        list(lockable.select_for_update().values_list("pk", flat=True))
        held = Ticket.objects.select_related("status", "organization", "requester", "assignee", "current_rating")
        by_id = held.in_bulk(ids)
        if len(by_id) != len(ids):  # deleted since the caller looked them up
            raise Ticket.DoesNotExist("Ticket matching query does not exist.")
        target, sources = by_id[target.pk], [by_id[source.pk] for source in sources]
        _merge_refused(target, sources)
        closed = status_first_of_category(organization_id=target.organization_id, category=StatusCategory.CLOSED)
        if closed is None:
            raise StatusUnavailable(category=StatusCategory.CLOSED)
        moved = [_source_merge(source, target, closed, actor) for source in sources]
        _target_merged(target, sources, moved, actor)
    return Ticket.objects.select_related("status", "requester", "assignee").get(pk=target.pk)


def _merge_refused(target: Ticket, sources: list[Ticket]) -> None:
    """A ticket already merged cannot be merged again nor receive a merge: its thread lives elsewhere."""
    for ticket, field in ((target, "id"), *((source, "origens") for source in sources)):
        if ticket.merged_into_id is not None:
            number = Ticket.objects.values_list("number", flat=True).get(pk=ticket.merged_into_id)
            raise TicketMerged(
                target_id=ticket.merged_into_id,
                target_number=number,
                field=field,
                detail=f"O ticket #{ticket.number} já foi mesclado no ticket #{number}.",
            )


def _source_merge(source: Ticket, target: Ticket, closed, actor: Actor) -> tuple[int, int]:
    """One source into the target (both locked): its thread moves, then it closes. Returns the public replies it
    gave the target, by side (agent, customer: its description included)."""
    moved = (source.agent_reply_count, source.customer_reply_count + 1)
    # A message moved by an earlier merge keeps the number of the ticket it was written in.
    Reply.objects.filter(ticket=source).update(
        ticket=target, merged_from_number=Coalesce(F("merged_from_number"), Value(source.number))
    )
    Reply.objects.create(
        ticket=target,
        body=source.description,
        origin=ReplyOrigin.CUSTOMER_API,
        author_contact=source.requester,
        created_at=source.created_at,
        merged_from_number=source.number,
    )
    Attachment.objects.filter(ticket=source).update(ticket=target)
    # Its thread is the target's now: its counters go with it (the target adds them up).
    source.merged_into = target
    source.agent_reply_count = source.customer_reply_count = 0
    source.save(update_fields=["merged_into", "agent_reply_count", "customer_reply_count", "updated_at"])
    _ticket_change(source, status=closed, actor=actor)
    _system_note(source, f"Mesclado em #{target.number}.", actor)
    # Tickets merged into this source earlier now point to where its thread went.
    earlier = list(Ticket.objects.filter(merged_into=source).values_list("pk", flat=True))
    if earlier:
        Ticket.objects.filter(pk__in=earlier).update(merged_into=target)
        tickets_touch(tickets=Ticket.objects.filter(pk__in=earlier))
    signals.ticket_merged.send(sender=Ticket, ticket=source, target=target, actor=actor)
    return moved


def _target_merged(target: Ticket, sources: list[Ticket], moved: list[tuple[int, int]], actor: Actor) -> None:
    """The target holds the sources' replies: its counters add theirs (each description is a customer message
    in its thread now), it moves in the change list, and a note says what was merged."""
    target.agent_reply_count += sum(agent for agent, _customer in moved)
    target.customer_reply_count += sum(customer for _agent, customer in moved)
    target.save(update_fields=["agent_reply_count", "customer_reply_count", "updated_at"])
    numbers = ", ".join(f"#{source.number}" for source in sources)
    _system_note(target, f"Mesclados neste ticket: {numbers}.", actor)


def _system_note(ticket: Ticket, body: str, actor: Actor) -> Reply:
    """An internal note of the system (no author: nobody may edit it); who merged is in the audit trail."""
    note = Reply.objects.create(
        ticket=ticket, body=body, is_internal=True, origin=ReplyOrigin.AGENT, created_at=timezone.now()
    )
    signals.note_added.send(sender=Reply, reply=note, actor=actor)
    return note


def merge_sources_get(*, organization, source_ids: list) -> list[Ticket]:
    """The sources a door names, in the order given, looked up in the caller's organization: another
    organization's id answers exactly like a missing one (404 on `origens`)."""
    found = Ticket.objects.filter(organization=organization).in_bulk(source_ids)
    missing = [str(ticket_id) for ticket_id in dict.fromkeys(source_ids) if ticket_id not in found]
    if missing:
        raise TicketNotFound(field="origens", detail=f"Ticket inexistente nesta organização: {', '.join(missing)}.")
    return [found[ticket_id] for ticket_id in source_ids]
