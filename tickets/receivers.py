"""What tickets do when other apps announce a change (helpdesk.signals): the change list moves wherever a
ticket shows what changed."""

from django.dispatch import receiver

from helpdesk.signals import agent_renamed
from tickets.services import tickets_of_agent_touch


@receiver(agent_renamed, dispatch_uid="tickets.agent_renamed")
def agent_renamed_moves_its_tickets(sender, agent, previous_name, actor, **kwargs) -> None:
    tickets_of_agent_touch(agent=agent)
