"""Rows that come and go with others, whatever writes them: not domain events (those are announced by the
services, tickets.signals), but what must hold for every organization, status and stored file."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from helpdesk.models import Organization
from tickets.attachments.services import attachment_usage_release
from tickets.attachments.storage import files_delete_after_commit
from tickets.models import Attachment, TicketStatus
from tickets.selectors import status_cache_forget
from tickets.services import ticketing_setup


@receiver(post_save, sender=Organization, dispatch_uid="tickets.organization_created")
def organization_created(sender, instance: Organization, created: bool, raw=False, **kwargs) -> None:
    """Every new organization can take tickets at once, whichever door created it."""
    if created and not raw:
        ticketing_setup(organization=instance)


@receiver(post_save, sender=TicketStatus, dispatch_uid="tickets.status_saved")
@receiver(post_delete, sender=TicketStatus, dispatch_uid="tickets.status_deleted")
def status_written(sender, instance: TicketStatus, raw=False, **kwargs) -> None:
    """A status written any way is never served stale from the default-status cache."""
    status_cache_forget(instance.organization_id)


@receiver(post_delete, sender=Attachment, dispatch_uid="tickets.attachment_deleted")
def attachment_deleted(sender, instance: Attachment, **kwargs) -> None:
    """However the row goes (with its ticket, by a cascade), its file goes once the deletion commits; a
    rollback keeps both. Its bytes leave the organization's usage in the same transaction."""
    files_delete_after_commit([instance.storage_key])
    attachment_usage_release(organization_id=instance.organization_id, size=instance.size)
