"""Read queries on agents and organizations, and the id lookup every app shares."""

from django.db.models import Model, QuerySet

from foundation.exceptions import NotFound
from foundation.ids import parse_uuid
from helpdesk.models import Agent, AuditRecord, Organization


def object_by_id(queryset: QuerySet, raw_id, *, missing: type[NotFound]) -> Model:
    """The row of `queryset` with this id; a malformed id or another tenant's row is the same 404."""
    pk = parse_uuid(raw_id)
    found = queryset.filter(pk=pk).first() if pk else None
    if found is None:
        raise missing()
    return found


def agent_list_active(*, organization: Organization) -> QuerySet[Agent]:
    return Agent.objects.filter(organization=organization, is_active=True).order_by("name", "id")


def agent_avatar_for_link(*, agent_id, avatar_name: str) -> Agent | None:
    """The agent a signed avatar link names, while the link's photo is still theirs, the agent is active
    and its organization not suspended: the link is a door out, closed with the others."""
    pk = parse_uuid(agent_id)
    if pk is None or not avatar_name:
        return None
    return (
        Agent.objects.filter(pk=pk, avatar=avatar_name, is_active=True, organization__is_active=True)
        .only("avatar")
        .first()
    )


class AgentNotFound(NotFound):
    message = "Atendente não encontrado."
    field = "atendente_id"
    detail = "Atendente inexistente nesta organização."


def agent_get(*, organization_id, agent_id) -> Agent:
    """An agent of the organization, active or not; another organization's is AgentNotFound, as a missing one."""
    return object_by_id(Agent.objects.filter(organization_id=organization_id), agent_id, missing=AgentNotFound)


def active_agent_of(user) -> Agent | None:
    """The user's agent profile when it is active and in the user's organization: who may work tickets."""
    try:
        agent = user.agent
    except Agent.DoesNotExist:
        return None
    return agent if agent.is_active and agent.organization_id == user.organization_id else None


def audit_list(
    *,
    organization: Organization,
    actor_id: str | None = None,
    resource_type: str | None = None,
    resource_id: str | None = None,
    action: str | None = None,
    since=None,
    until=None,
) -> QuerySet[AuditRecord]:
    """The organization's audit trail, newest first; filters combine with AND, each on an index that starts
    with the organization (helpdesk.models.AuditRecord.Meta.indexes)."""
    records = AuditRecord.objects.filter(organization=organization)
    exact = {"actor_id": actor_id, "resource_type": resource_type, "resource_id": resource_id, "action": action}
    records = records.filter(**{field: value for field, value in exact.items() if value})
    if since is not None:
        records = records.filter(created_at__gte=since)
    if until is not None:
        records = records.filter(created_at__lte=until)
    return records.order_by("-created_at", "-id")
