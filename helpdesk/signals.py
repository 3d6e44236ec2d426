"""What happened to agents, announced by helpdesk.services right after the write (as tickets.signals does
for tickets): apps above helpdesk listen, helpdesk imports none of them.

- agent_renamed: sender Agent, agent, previous_name, actor
"""

from django.dispatch import Signal

agent_renamed = Signal()
