"""post_save adapters: look at what changed and who did it, then call events.

Connected in IntegrationsConfig.ready(). Every door that saves a reply or a
ticket (agent panel API, admin, shell, services) emits the same way; bulk
updates send no signal and must call integrations.events themselves.
"""

from django.db.models.signals import post_save
from django.dispatch import receiver

from integrations import events
from integrations.models import EventKind
from tickets.models import Reply, StatusCategory, Ticket, TicketStatus


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
    if raw or (update_fields is not None and "status" not in update_fields):
        return
    previous_status_id = None if created else instance.loaded_value("status_id")
    if not created and previous_status_id == instance.status_id:
        return
    if instance.status.category != StatusCategory.RESOLVED:
        return
    if previous_status_id is not None:
        previous_category = (
            TicketStatus.objects.filter(pk=previous_status_id).values_list("category", flat=True).first()
        )
        if previous_category == StatusCategory.RESOLVED:
            return
    events.ticket_resolved_event(instance)
