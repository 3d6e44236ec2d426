"""What happened to agents, announced by helpdesk.services right after the write (as tickets.signals does
for tickets): apps above helpdesk listen, helpdesk imports none of them.

- agent_renamed: sender Agent, agent, previous_name, actor
- organization_restored: sender Organization, organization (a suspended organization is active again)
"""

from django.dispatch import Signal

agent_renamed = Signal()
organization_restored = Signal()
