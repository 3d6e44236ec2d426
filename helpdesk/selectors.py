"""Read queries on agents and organizations."""

from django.db.models import QuerySet

from helpdesk.models import Agent, Organization


def agent_list_active(*, organization: Organization) -> QuerySet[Agent]:
    return Agent.objects.filter(organization=organization, is_active=True).order_by("name", "id")
