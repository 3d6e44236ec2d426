"""The audit trail of tickets: what tickets' services announce (tickets.signals) is recorded (helpdesk.audit),
by every door, the partner's own writes included (unlike events, an audit record is not sent to anyone).

Connected in TicketsConfig.ready(). A record names the ticket, reply, attachment or contact it is about
and what changed, never a message's or a file's content: the trail says who did what, the ticket says what.
"""

from django.dispatch import receiver

from helpdesk.audit import audit_record, change
from tickets import signals


def _ticket(action: str, ticket, changes: dict | None = None) -> None:
    audit_record(
        action, organization_id=ticket.organization_id, resource_type="ticket", resource_id=ticket.pk, changes=changes
    )


@receiver(signals.ticket_created, dispatch_uid="tickets.audit.ticket_created")
def ticket_created(sender, ticket, actor, **kwargs) -> None:
    _ticket(
        "ticket.criado",
        ticket,
        {
            "numero": change(None, ticket.number),
            "prioridade": change(None, ticket.priority),
            "status": change(None, ticket.status.name),
            "external_id": change(None, ticket.external_id),
        },
    )


@receiver(signals.ticket_status_changed, dispatch_uid="tickets.audit.ticket_status_changed")
def ticket_status_changed(sender, ticket, previous_status, actor, **kwargs) -> None:
    _ticket("ticket.status_alterado", ticket, {"status": change(previous_status.name, ticket.status.name)})


@receiver(signals.ticket_priority_changed, dispatch_uid="tickets.audit.ticket_priority_changed")
def ticket_priority_changed(sender, ticket, previous_priority, actor, **kwargs) -> None:
    _ticket("ticket.prioridade_alterada", ticket, {"prioridade": change(previous_priority, ticket.priority)})


@receiver(signals.ticket_assigned, dispatch_uid="tickets.audit.ticket_assigned")
def ticket_assigned(sender, ticket, previous_assignee, actor, **kwargs) -> None:
    before = str(previous_assignee.pk) if previous_assignee else None
    _ticket("ticket.atribuido", ticket, {"atendente_id": change(before, str(ticket.assignee_id or "") or None)})


@receiver(signals.ticket_fields_changed, dispatch_uid="tickets.audit.ticket_fields_changed")
def ticket_fields_changed(sender, ticket, changes, actor, **kwargs) -> None:
    """Which custom fields changed, never their values (an order id, a plan: the ticket says what)."""
    _ticket("ticket.campos_alterados", ticket, {"campos": change(None, sorted(changes))})


@receiver(signals.ticket_tags_changed, dispatch_uid="tickets.audit.ticket_tags_changed")
def ticket_tags_changed(sender, ticket, added, removed, actor, **kwargs) -> None:
    """The partner's changes too (the audit trail goes to no one): the ticket's tags before and after."""
    before = sorted((set(ticket.tags) - set(added)) | set(removed))
    _ticket("ticket.tags_alteradas", ticket, {"tags": change(before, list(ticket.tags))})


@receiver(signals.ticket_merged, dispatch_uid="tickets.audit.ticket_merged")
def ticket_merged(sender, ticket, target, actor, **kwargs) -> None:
    _ticket("ticket.mesclado", ticket, {"mesclado_em": change(None, target.number)})


@receiver(signals.ticket_deleted, dispatch_uid="tickets.audit.ticket_deleted")
def ticket_deleted(sender, tombstone, actor, **kwargs) -> None:
    audit_record(
        "ticket.excluido",
        organization_id=tombstone.organization_id,
        resource_type="ticket",
        resource_id=tombstone.pk,
        changes={"numero": change(tombstone.number, None)},
    )


def _reply(action: str, reply) -> None:
    audit_record(
        action,
        organization_id=reply.ticket.organization_id,
        resource_type="resposta",
        resource_id=reply.pk,
        changes={"ticket_id": change(None, str(reply.ticket_id))},
    )


@receiver(signals.reply_published, dispatch_uid="tickets.audit.reply_published")
def reply_published(sender, reply, actor, **kwargs) -> None:
    _reply("resposta.publicada", reply)


@receiver(signals.note_added, dispatch_uid="tickets.audit.note_added")
def note_added(sender, reply, actor, **kwargs) -> None:
    _reply("nota.adicionada", reply)


@receiver(signals.reply_edited, dispatch_uid="tickets.audit.reply_edited")
def reply_edited(sender, reply, previous_body, actor, **kwargs) -> None:
    _reply("nota.editada" if reply.is_internal else "resposta.editada", reply)


@receiver(signals.attachment_added, dispatch_uid="tickets.audit.attachment_added")
def attachment_added(sender, attachment, actor, **kwargs) -> None:
    audit_record(
        "anexo.adicionado",
        organization_id=attachment.ticket.organization_id,
        resource_type="anexo",
        resource_id=attachment.pk,
        changes={"ticket_id": change(None, str(attachment.ticket_id)), "tamanho": change(None, attachment.size)},
    )


# A contact's fields as the API names them (Contato), for `campos` of `contato.atualizado`.
CONTACT_FIELDS = {"name": "nome", "email": "email", "phone": "telefone", "external_id": "external_id"}


@receiver(signals.contact_updated, dispatch_uid="tickets.audit.contact_updated")
def contact_updated(sender, contact, changed, actor, **kwargs) -> None:
    """Which fields changed, never their values (a person's data, as for `contato.anonimizado`)."""
    fields = [CONTACT_FIELDS[name] for name in changed] if changed is not None else None
    audit_record(
        "contato.atualizado",
        organization_id=contact.organization_id,
        resource_type="contato",
        resource_id=contact.pk,
        changes={"campos": change(None, fields)},
    )


@receiver(signals.contact_anonymized, dispatch_uid="tickets.audit.contact_anonymized")
def contact_anonymized(sender, contact, previous, tickets, actor, **kwargs) -> None:
    """Which fields were replaced and how many tickets were kept, never what the person's data was."""
    audit_record(
        "contato.anonimizado",
        organization_id=contact.organization_id,
        resource_type="contato",
        resource_id=contact.pk,
        changes={
            "campos": change(None, ["nome", "email", "telefone", "external_id"]),
            "tickets": change(None, len(tickets)),
        },
    )
