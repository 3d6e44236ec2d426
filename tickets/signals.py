"""post_save adapter: every new organization, through any door, can take tickets at once."""

from django.db.models.signals import post_save
from django.dispatch import receiver

from helpdesk.models import Organization
from tickets.services import ticketing_setup


@receiver(post_save, sender=Organization, dispatch_uid="tickets.organization_created")
def organization_created(sender, instance: Organization, created: bool, raw=False, **kwargs) -> None:
    if created and not raw:
        ticketing_setup(organization=instance)
