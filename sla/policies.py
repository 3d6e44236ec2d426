"""SLA policies as a value: an organization's targets per ticket priority, in business minutes (counted with
sla.calendar over the organization's calendar). Pure: no query, no Django."""

from dataclasses import dataclass

# The priorities a policy is for, in the one order the policies are kept and answered; None is the policy of a
# ticket without priority (every ticket has one today, tickets.models.Priority; the issue asks for it anyway).
PRIORITIES = ("baixa", "media", "alta", "urgente", None)
# tickets.models.Priority's labels, which sla (below tickets) cannot import; a test keeps the two equal.
PRIORITY_LABELS = {"baixa": "Baixa", "media": "Média", "alta": "Alta", "urgente": "Urgente"}
# What support leads read for each target (the admin's grid, a ticket's page).
TARGET_LABELS = {"first_response": "Primeira resposta", "next_response": "Próxima resposta", "resolution": "Resolução"}


@dataclass(frozen=True)
class Policy:
    """The targets of one priority, each a number of business minutes or None (no such target).
    `first_response`: creation to the first public agent reply; `next_response`: each customer reply to the next
    public agent reply; `resolution`: creation to resolution."""

    priority: str | None
    first_response: int | None = None
    next_response: int | None = None
    resolution: int | None = None


@dataclass(frozen=True)
class PolicySet:
    """An organization's policies, at most one per priority, in PRIORITIES' order. Empty: no targets at all."""

    policies: tuple[Policy, ...] = ()

    def policy_for(self, priority: str | None) -> Policy | None:
        """The policy of tickets of this priority (None: without priority); None when it has none."""
        for policy in self.policies:
            if policy.priority == priority:
                return policy
        return None


NO_POLICIES = PolicySet()
