"""post_save adapters: every new organization can take tickets at once; a changed status is not served
stale; what tickets show of their status, requester or agents changing moves them in the change list."""

from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from helpdesk.models import Agent, Organization
from tickets.attachments.storage import files_delete_after_commit
from tickets.models import Attachment, Contact, Reply, Ticket, TicketStatus
from tickets.selectors import status_cache_forget
from tickets.services import ticketing_setup, tickets_touch


@receiver(post_save, sender=Organization, dispatch_uid="tickets.organization_created")
def organization_created(sender, instance: Organization, created: bool, raw=False, **kwargs) -> None:
    if created and not raw:
        ticketing_setup(organization=instance)


@receiver(post_save, sender=TicketStatus, dispatch_uid="tickets.status_saved")
@receiver(post_delete, sender=TicketStatus, dispatch_uid="tickets.status_deleted")
def status_changed(sender, instance: TicketStatus, raw=False, **kwargs) -> None:
    status_cache_forget(instance.organization_id)


def _shown_values_changed(instance, created: bool, raw: bool) -> bool:
    """An existing row whose values tickets show changed (TracksLoadedValues remembers them as loaded)."""
    if created or raw or not hasattr(instance, "_loaded_values"):
        return False
    return any(instance.loaded_value(name) != getattr(instance, name) for name in instance.tracked_fields)


@receiver(post_save, sender=TicketStatus, dispatch_uid="tickets.status_shown")
def status_shown_changed(sender, instance: TicketStatus, created: bool, raw=False, **kwargs) -> None:
    if _shown_values_changed(instance, created, raw):
        tickets_touch(tickets=Ticket.objects.filter(status=instance))


@receiver(post_save, sender=Contact, dispatch_uid="tickets.contact_shown")
def contact_shown_changed(sender, instance: Contact, created: bool, raw=False, **kwargs) -> None:
    if _shown_values_changed(instance, created, raw):
        tickets_touch(tickets=Ticket.objects.filter(requester=instance))


@receiver(pre_save, sender=Agent, dispatch_uid="tickets.agent_name_loaded")
def agent_name_loaded(sender, instance: Agent, raw=False, update_fields=None, **kwargs) -> None:
    # helpdesk does not track loaded values: the name is read before a save that may change it.
    if raw or instance._state.adding or (update_fields is not None and "name" not in update_fields):
        instance._name_before_save = None
        return
    instance._name_before_save = Agent.objects.filter(pk=instance.pk).values_list("name", flat=True).first()


@receiver(post_save, sender=Agent, dispatch_uid="tickets.agent_name_shown")
def agent_name_shown_changed(sender, instance: Agent, created: bool, raw=False, **kwargs) -> None:
    """An agent's name is the author of its public replies."""
    before = getattr(instance, "_name_before_save", None)
    if before is not None and before != instance.name:
        replied = Reply.objects.filter(author_agent=instance, is_internal=False).values("ticket_id")
        tickets_touch(tickets=Ticket.objects.filter(pk__in=replied))


@receiver(post_delete, sender=Attachment, dispatch_uid="tickets.attachment_deleted")
def attachment_deleted(sender, instance: Attachment, **kwargs) -> None:
    """However the row goes (a ticket or reply deleted in the admin, a cascade, a purge), its file goes
    once the deletion commits; a rollback keeps both."""
    files_delete_after_commit([instance.storage_key])
