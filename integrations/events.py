"""Outbox: an event (always: the event feed reads them all) and one delivery per
subscribed, active webhook, written in the transaction of the action that caused it;
queued to Celery once it commits.

Payloads are built by the partner API's own builders (tickets.payloads), so a
webhook shows a ticket exactly as GET /api/v1/tickets/{id} does, and never an
internal note. An event about a ticket also keeps every `incluir` block of it
(integrations.bodies), for the webhooks and the feed that ask for them.
"""

from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from helpdesk.actors import SYSTEM, Actor
from helpdesk.audit import audit_record, change
from helpdesk.models import Agent, Organization
from integrations.bodies import body_dumps, delivery_blocks, ticket_blocks_dumps
from integrations.exceptions import OrganizationSuspended
from integrations.models import DeliveryStatus, EventKind, Webhook, WebhookDelivery, WebhookEvent
from integrations.services import webhook_ensure_active
from integrations.tasks import deliveries_enqueue
from tickets.models import Attachment, Reply, Ticket, TicketStatus
from tickets.payloads import (
    ALL_TICKET_BLOCKS,
    ATTACHMENT_COLUMNS,
    REPLY_COLUMNS,
    agent_ref,
    attachment_event,
    contact_public,
    iso,
    reply_public,
    sla_public,
    sla_target_public,
    status_public,
    ticket_blocks_by_name,
    ticket_columns,
    ticket_ref,
    ticket_summary,
)

# An event's ticket is read with the columns of every block: one statement, whatever the webhooks ask for.
EVENT_TICKET_COLUMNS = ticket_columns(ALL_TICKET_BLOCKS)


def _body(event_id, kind: str, created_at, data: dict) -> str:
    # Timestamps exactly as the API writes them (microseconds, "Z").
    return body_dumps({"id": str(event_id), "evento": kind, "criado_em": iso(created_at), "data": data})


def _ticket_read(ticket_id) -> tuple[dict, dict]:
    """The ticket as `data.ticket` shows it, and every block of it by name (kept beside the body)."""
    row = Ticket.objects.values_list(*EVENT_TICKET_COLUMNS, named=True).get(pk=ticket_id)
    return ticket_summary(row), ticket_blocks_by_name(row)


def _first_attempt_guard():
    """When the dispatcher queues a delivery again if its message never arrives."""
    return timezone.now() + timedelta(seconds=settings.WEBHOOK_REQUEUE_AFTER)


def event_emit(*, organization, kind: str, data_builder, webhooks=None, ticket_id=None) -> WebhookEvent:
    """Write the event, and a delivery for each active webhook that wants this kind.

    The event is written even when no webhook wants it: GET /api/v1/eventos reads every event.
    `webhooks` narrows the targets (the test event goes to one webhook only). A suspended
    organization gets no delivery: nothing goes out while it is suspended, and its partner reads
    what happened meanwhile from the feed once it is restored. An event about a ticket
    (`ticket_id`) carries it first in `data`, and keeps its blocks beside the body; each delivery
    keeps the blocks its webhook asks for now.
    """
    if webhooks is None:
        targets = Webhook.objects.filter(organization=organization, is_active=True, organization__is_active=True)
        webhooks = [webhook for webhook in targets if kind in webhook.events]
    elif not Organization.objects.filter(pk=organization.pk, is_active=True).exists():
        webhooks = []
    # Part of the action's own transaction (no savepoint: the outbox stands or falls with the action).
    with transaction.atomic(savepoint=False):
        event = WebhookEvent(organization=organization, kind=kind)
        data, blocks = data_builder(), None
        if ticket_id is not None:
            ticket, blocks = _ticket_read(ticket_id)
            data = {"ticket": ticket, **data}
        event.body = _body(event.id, kind, timezone.now(), data)
        event.ticket_blocks = ticket_blocks_dumps(blocks)
        event.save()
        if webhooks:
            deliveries = WebhookDelivery.objects.bulk_create(
                [
                    WebhookDelivery(
                        webhook=webhook,
                        event=event,
                        status=DeliveryStatus.PENDING,
                        next_attempt_at=_first_attempt_guard(),
                        blocks=delivery_blocks(webhook.blocks if blocks is not None else ()),
                    )
                    for webhook in webhooks
                ]
            )
            transaction.on_commit(partial(deliveries_enqueue, [(d.pk, 0) for d in deliveries]), robust=True)
    return event


def actor_payload(actor: Actor) -> dict:
    """`data.ator` of every event: the agent as GET /api/v1/atendentes shows it, or the system."""
    if actor.kind == Actor.AGENT:
        return {"tipo": Actor.AGENT, "id": str(actor.agent.pk), "nome": actor.agent.name}
    return {"tipo": Actor.SYSTEM}


def _agent_ref(agent: Agent | None) -> dict | None:
    return agent_ref(agent.pk, agent.name) if agent is not None else None


def _change(previous, current) -> dict:
    return {"anterior": previous, "atual": current}


def ticket_event(ticket: Ticket, kind: str, actor: Actor, **data) -> WebhookEvent:
    """An event about a ticket: `data` is the ticket as GET /api/v1/tickets/{id} shows it (without
    `respostas`, read when the event is written), what the kind adds, and who did it."""
    return event_emit(
        organization=ticket.organization,
        kind=kind,
        ticket_id=ticket.pk,
        data_builder=lambda: {**data, "ator": actor_payload(actor)},
    )


def reply_event(reply: Reply, kind: str, actor: Actor, previous_body: str | None = None) -> WebhookEvent:
    def build() -> dict:
        data = {"resposta": reply_public(Reply.objects.values_list(*REPLY_COLUMNS, named=True).get(pk=reply.pk))}
        if previous_body is not None:
            data["mensagem_anterior"] = previous_body
        data["ator"] = actor_payload(actor)
        return data

    return event_emit(organization=reply.ticket.organization, kind=kind, ticket_id=reply.ticket_id, data_builder=build)


def attachment_added_event(attachment: Attachment, actor: Actor) -> WebhookEvent:
    """One per file of an agent's public reply: the ticket and the attachment's metadata, no link (a
    signed link would expire before the retries end; the partner asks the list for a fresh one)."""
    return event_emit(
        organization=attachment.ticket.organization,
        kind=EventKind.ATTACHMENT_ADDED,
        ticket_id=attachment.ticket_id,
        data_builder=lambda: {
            "anexo": attachment_event(
                Attachment.objects.values_list(*ATTACHMENT_COLUMNS, named=True).get(pk=attachment.pk)
            ),
            "ator": actor_payload(actor),
        },
    )


def status_changed_event(ticket: Ticket, previous: TicketStatus, actor: Actor) -> WebhookEvent:
    change = _change(status_public(previous), status_public(ticket.status))
    return ticket_event(ticket, EventKind.STATUS_CHANGED, actor, alteracoes={"status": change})


def priority_changed_event(ticket: Ticket, previous: str, actor: Actor) -> WebhookEvent:
    change = _change(previous, ticket.priority)
    return ticket_event(ticket, EventKind.PRIORITY_CHANGED, actor, alteracoes={"prioridade": change})


def assigned_event(ticket: Ticket, previous: Agent | None, actor: Actor) -> WebhookEvent:
    change = _change(_agent_ref(previous), _agent_ref(ticket.assignee))
    return ticket_event(ticket, EventKind.ASSIGNED, actor, alteracoes={"atendente": change})


def fields_changed_event(ticket: Ticket, changes: dict, actor: Actor) -> WebhookEvent:
    """`alteracoes.campos`: `{chave: {anterior, atual}}` of the fields partners see that changed (null: no value)."""
    fields = {key: _change(item.previous, item.current) for key, item in changes.items()}
    return ticket_event(ticket, EventKind.FIELDS_CHANGED, actor, alteracoes={"campos": fields})


def tags_changed_event(ticket: Ticket, added: list[str], removed: list[str], actor: Actor) -> WebhookEvent:
    """Not `{anterior, atual}`: what came and what went, as the change was asked (the ticket's whole list is in
    the `tags` block, for webhooks and feeds that ask for it)."""
    change = {"adicionadas": added, "removidas": removed}
    return ticket_event(ticket, EventKind.TAGS_CHANGED, actor, alteracoes={"tags": change})


SLA_ALERT_KINDS = {"em_risco": EventKind.SLA_AT_RISK, "violado": EventKind.SLA_BREACHED}


def sla_alert_event(ticket: Ticket, alert: str, target, actor: Actor) -> WebhookEvent:
    """`ticket.sla_em_risco` / `ticket.sla_violado`: the ticket, its SLA as the `sla` block shows it when the beat
    saw the moment (`data.sla`), and the target that reached it (`data.meta`)."""
    now = timezone.now()
    return ticket_event(
        ticket,
        SLA_ALERT_KINDS[alert],
        actor,
        sla=sla_public(ticket.sla_clock, now),
        meta=sla_target_public(target, now),
    )


def merged_event(ticket: Ticket, target: Ticket, actor: Actor) -> WebhookEvent:
    """`ticket.mesclado`: the source (closed, its thread moved) and `destino`, the ticket it was merged into."""
    return ticket_event(ticket, EventKind.MERGED, actor, destino={"id": str(target.pk), "numero": target.number})


def deleted_event(tombstone, actor: Actor) -> WebhookEvent:
    """The ticket is gone: `ticket` is what identifies it, nothing more."""
    return event_emit(
        organization=tombstone.organization,
        kind=EventKind.DELETED,
        data_builder=lambda: {"ticket": ticket_ref(tombstone), "ator": actor_payload(actor)},
    )


def contact_anonymized_event(contact, tickets, actor: Actor) -> WebhookEvent:
    """A contact's data is gone (a data-subject request): the contact as it now is and the tickets it asked,
    so a partner's copy drops the person too; never what the data was."""
    return event_emit(
        organization=contact.organization,
        kind=EventKind.CONTACT_ANONYMIZED,
        data_builder=lambda: {
            "contato": contact_public(contact),
            "tickets": [ticket_ref(ticket) for ticket in tickets],
            "ator": actor_payload(actor),
        },
    )


def webhook_test_send(*, webhook: Webhook, actor: Actor = SYSTEM) -> WebhookDelivery:
    """A `webhook.teste` event to this one webhook, which must be active."""
    webhook_ensure_active(webhook)
    event = event_emit(
        organization=webhook.organization,
        kind=EventKind.TEST,
        webhooks=[webhook],
        data_builder=lambda: {
            "mensagem": "Evento de teste do webhook.",
            "webhook": {"id": str(webhook.pk), "nome": webhook.name},
            "ator": actor_payload(actor),
        },
    )
    delivery = event.deliveries.select_related("event").first()
    if delivery is None:  # suspended since webhook_ensure_active looked
        raise OrganizationSuspended()
    audit_record(
        "webhook.teste_enviado",
        organization_id=webhook.organization_id,
        resource_type="webhook",
        resource_id=webhook.pk,
    )
    return delivery


def delivery_resend(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """A new delivery of the same event (same payload, its blocks included, and event id; new delivery id and
    log)."""
    webhook_ensure_active(delivery.webhook)
    with transaction.atomic():
        # The same body too: the blocks the first delivery carried, whatever the webhook asks for now.
        copy = WebhookDelivery.objects.create(
            webhook=delivery.webhook,
            event=delivery.event,
            blocks=delivery.blocks,
            next_attempt_at=_first_attempt_guard(),
        )
        audit_record(
            "entrega.reenviada",
            organization_id=delivery.webhook.organization_id,
            resource_type="entrega",
            resource_id=delivery.pk,
            changes={"nova_entrega": change(None, str(copy.pk))},
        )
        transaction.on_commit(partial(deliveries_enqueue, [(copy.pk, 0)]), robust=True)
    return copy
