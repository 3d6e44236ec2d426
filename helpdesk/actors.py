"""Who did something: every service that changes what a partner sees is told, and says so when it announces
the change (tickets.signals), so listeners never guess it from a diff or a request."""

from dataclasses import dataclass

from helpdesk.models import Agent


@dataclass(frozen=True)
class Actor:
    """An agent (the admin, the agent panel API), the partner (its application key, the partner API) or the
    system (beat, operator commands, a staff user without an agent profile)."""

    kind: str
    agent: Agent | None = None

    AGENT = "agente"
    PARTNER = "parceiro"
    SYSTEM = "sistema"

    @classmethod
    def of_agent(cls, agent: Agent | None) -> "Actor":
        """The agent, or the system for a staff user who is not one (a superuser in the admin)."""
        return cls(cls.AGENT, agent) if agent is not None else SYSTEM

    @property
    def is_partner(self) -> bool:
        """What the partner did itself is never told back to it (no echo)."""
        return self.kind == self.PARTNER


SYSTEM = Actor(Actor.SYSTEM)
PARTNER = Actor(Actor.PARTNER)
