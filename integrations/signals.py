"""post_save adapters: look at what changed and who did it, then call events.

Connected in IntegrationsConfig.ready(). Every door that saves a reply or a
ticket through the services (agent panel API, admin, CLI) emits the same way;
bulk updates send no signal and must call integrations.events themselves.
"""

from django.db.models.signals import post_save
from django.dispatch import receiver

from integrations import events
from integrations.models import EventKind
from tickets.models import Attachment, Reply, Ticket


@receiver(post_save, sender=Reply, dispatch_uid="integrations.reply_saved")
def reply_saved(sender, instance: Reply, created: bool, update_fields=None, raw=False, **kwargs) -> None:
    if raw or not events.is_agent_public_reply(instance):
        return
    if created:
        events.reply_event(instance, EventKind.PUBLIC_REPLY)
        return
    if update_fields is not None and "body" not in update_fields:
        return
    previous = instance.loaded_value("body")
    if previous is not None and previous != instance.body:
        events.reply_event(instance, EventKind.REPLY_EDITED, previous_body=previous)


@receiver(post_save, sender=Ticket, dispatch_uid="integrations.ticket_saved")
def ticket_saved(sender, instance: Ticket, created: bool, update_fields=None, raw=False, **kwargs) -> None:
    """resolvido_em is stamped when a ticket enters `resolvido` (and only then): that is the event."""
    if raw or (update_fields is not None and "resolved_at" not in update_fields):
        return
    if instance.resolved_at is not None and instance.resolved_at != instance.loaded_value("resolved_at"):
        events.ticket_resolved_event(instance)


@receiver(post_save, sender=Attachment, dispatch_uid="integrations.attachment_saved")
def attachment_saved(sender, instance: Attachment, created: bool, raw=False, **kwargs) -> None:
    if created and not raw and events.is_agent_public_attachment(instance):
        events.attachment_added_event(instance)
