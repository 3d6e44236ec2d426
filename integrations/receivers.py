"""The outbox's listeners: what tickets' services announce (tickets.signals) becomes events.

Connected in IntegrationsConfig.ready(). Every door that changes tickets through the services (admin,
agent panel API, operator commands, beat) emits the same way. What the partner did through the partner
API never emits (no echo), and an internal note never leaves.
"""

from django.dispatch import receiver

from helpdesk import signals as helpdesk_signals
from integrations import events
from integrations.delivery import deliveries_release_held
from integrations.models import EventKind
from integrations.privacy import contact_copies_anonymize
from tickets import signals
from tickets.models import AttachmentSender, StatusCategory


@receiver(signals.ticket_created, dispatch_uid="integrations.ticket_created")
def ticket_created(sender, ticket, actor, **kwargs) -> None:
    if not actor.is_partner:
        events.ticket_event(ticket, EventKind.TICKET_CREATED, actor)


@receiver(signals.reply_published, dispatch_uid="integrations.reply_published")
def reply_published(sender, reply, actor, **kwargs) -> None:
    if not actor.is_partner:
        events.reply_event(reply, EventKind.PUBLIC_REPLY, actor)


@receiver(signals.reply_edited, dispatch_uid="integrations.reply_edited")
def reply_edited(sender, reply, previous_body, actor, **kwargs) -> None:
    if not actor.is_partner and not reply.is_internal:
        events.reply_event(reply, EventKind.REPLY_EDITED, actor, previous_body=previous_body)


@receiver(signals.ticket_status_changed, dispatch_uid="integrations.ticket_status_changed")
def ticket_status_changed(sender, ticket, previous_status, actor, **kwargs) -> None:
    """`ticket.status_alterado`, then, entering `resolvido` (resolvido_em is stamped then, and only then),
    `ticket.resolvido`."""
    if actor.is_partner:
        return
    events.status_changed_event(ticket, previous_status, actor)
    entered_resolved = (
        ticket.status.category == StatusCategory.RESOLVED and previous_status.category != StatusCategory.RESOLVED
    )
    if entered_resolved:
        events.ticket_event(ticket, EventKind.RESOLVED, actor)


@receiver(signals.ticket_priority_changed, dispatch_uid="integrations.ticket_priority_changed")
def ticket_priority_changed(sender, ticket, previous_priority, actor, **kwargs) -> None:
    if not actor.is_partner:
        events.priority_changed_event(ticket, previous_priority, actor)


@receiver(signals.ticket_assigned, dispatch_uid="integrations.ticket_assigned")
def ticket_assigned(sender, ticket, previous_assignee, actor, **kwargs) -> None:
    if not actor.is_partner:
        events.assigned_event(ticket, previous_assignee, actor)


@receiver(signals.ticket_fields_changed, dispatch_uid="integrations.ticket_fields_changed")
def ticket_fields_changed(sender, ticket, changes, actor, **kwargs) -> None:
    """`ticket.campos_alterados` with the fields partners see; a change of hidden fields alone emits nothing."""
    shown = {key: item for key, item in changes.items() if item.shown_to_partner}
    if not actor.is_partner and shown:
        events.fields_changed_event(ticket, shown, actor)


@receiver(signals.ticket_tags_changed, dispatch_uid="integrations.ticket_tags_changed")
def ticket_tags_changed(sender, ticket, added, removed, actor, **kwargs) -> None:
    if not actor.is_partner:
        events.tags_changed_event(ticket, added, removed, actor)


@receiver(signals.ticket_sla_alert, dispatch_uid="integrations.ticket_sla_alert")
def ticket_sla_alert(sender, ticket, alert, target, actor, **kwargs) -> None:
    events.sla_alert_event(ticket, alert, target, actor)


@receiver(signals.ticket_merged, dispatch_uid="integrations.ticket_merged")
def ticket_merged(sender, ticket, target, actor, **kwargs) -> None:
    if not actor.is_partner:
        events.merged_event(ticket, target, actor)


@receiver(signals.ticket_deleted, dispatch_uid="integrations.ticket_deleted")
def ticket_deleted(sender, tombstone, actor, **kwargs) -> None:
    if not actor.is_partner:
        events.deleted_event(tombstone, actor)


@receiver(signals.attachment_added, dispatch_uid="integrations.attachment_added")
def attachment_added(sender, attachment, actor, **kwargs) -> None:
    """A file an agent sent with a public reply (never a note's, never the partner's own)."""
    reply = attachment.reply
    if not actor.is_partner and attachment.sender == AttachmentSender.AGENT and reply and not reply.is_internal:
        events.attachment_added_event(attachment, actor)


@receiver(signals.contact_anonymized, dispatch_uid="integrations.contact_anonymized")
def contact_anonymized(sender, contact, previous, tickets, actor, **kwargs) -> None:
    """The person's copies in events, deliveries and stored answers go with the contact's data; then partners
    hear of it (`contato.anonimizado`), whoever asked."""
    contact_copies_anonymize(contact=contact, previous=previous)
    events.contact_anonymized_event(contact, tickets, actor)


@receiver(helpdesk_signals.organization_restored, dispatch_uid="integrations.organization_restored")
def organization_restored(sender, organization, **kwargs) -> None:
    """What was held while the organization was suspended goes out now (integrations.delivery)."""
    deliveries_release_held(organization_id=organization.pk)
