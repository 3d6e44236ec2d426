"""post_save adapters: every new organization can take tickets at once; a changed status is not served stale."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from helpdesk.models import Organization
from tickets.models import TicketStatus
from tickets.selectors import status_cache_forget
from tickets.services import ticketing_setup


@receiver(post_save, sender=Organization, dispatch_uid="tickets.organization_created")
def organization_created(sender, instance: Organization, created: bool, raw=False, **kwargs) -> None:
    if created and not raw:
        ticketing_setup(organization=instance)


@receiver(post_save, sender=TicketStatus, dispatch_uid="tickets.status_saved")
@receiver(post_delete, sender=TicketStatus, dispatch_uid="tickets.status_deleted")
def status_changed(sender, instance: TicketStatus, raw=False, **kwargs) -> None:
    status_cache_forget(instance.organization_id)
