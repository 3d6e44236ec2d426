"""Base view and permissions of the panel APIs (JWT)."""

from django.conf import settings
from rest_framework.permissions import BasePermission, IsAuthenticated

from api_framework.base import EnvelopeViewSet
from foundation.ratelimit import count_request
from helpdesk.auth import PanelJWTAuthentication
from helpdesk.models import Agent
from helpdesk.permissions import MANAGE_PUBLIC_API_PERM
from helpdesk.selectors import active_agent_of


class InOrganization(BasePermission):
    """Panel endpoints act on the user's organization; a user without one has nothing here."""

    def has_permission(self, request, view):
        return request.user.organization_id is not None


class CanManagePublicApi(BasePermission):
    def has_permission(self, request, view):
        return request.user.has_perm(MANAGE_PUBLIC_API_PERM)


class IsActiveAgent(BasePermission):
    def has_permission(self, request, view):
        return active_agent_of(request.user) is not None


def _user_key(group, request) -> str:
    return str(request.user.pk)


class PanelViewSet(EnvelopeViewSet):
    authentication_classes = [PanelJWTAuthentication]
    permission_classes = [IsAuthenticated, InOrganization]
    auth_error_field = "token"

    @property
    def organization(self):
        return self.request.user.organization

    def rate_limit(self, request) -> None:
        count_request(request, group="panel-api", rate=settings.PANEL_RATE_LIMIT, key=_user_key, policy="painel")


class ManagementViewSet(PanelViewSet):
    """Credentials and webhooks: `api_publica:gerenciar` required."""

    permission_classes = [IsAuthenticated, InOrganization, CanManagePublicApi]


class AgentPanelViewSet(PanelViewSet):
    """Ticket work: any active agent of the organization."""

    permission_classes = [IsAuthenticated, InOrganization, IsActiveAgent]

    @property
    def agent(self) -> Agent:
        """The agent at work (IsActiveAgent let only an active one in). No query: the token's user came
        with its agent profile (PanelJWTAuthentication)."""
        return active_agent_of(self.request.user)
