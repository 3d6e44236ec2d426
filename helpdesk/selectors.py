"""Read queries on agents and organizations."""

import uuid

from django.db.models import QuerySet

from helpdesk.exceptions import NotFound
from helpdesk.models import Agent, Organization


def agent_list_active(*, organization: Organization) -> QuerySet[Agent]:
    return Agent.objects.filter(organization=organization, is_active=True).order_by("name", "id")


class AgentNotFound(NotFound):
    message = "Atendente não encontrado."
    field = "atendente_id"
    detail = "Atendente inexistente nesta organização."


def agent_get(*, organization: Organization, agent_id) -> Agent:
    try:
        pk = uuid.UUID(str(agent_id))
    except ValueError:
        pk = None
    agent = Agent.objects.filter(organization=organization, pk=pk).first() if pk else None
    if agent is None:
        raise AgentNotFound()
    return agent
