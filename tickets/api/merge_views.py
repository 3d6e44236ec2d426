"""Agent panel API: merging duplicate tickets (tickets.merging), the service the admin's "Mesclar em..." uses."""

from api_framework.responses import EnvelopeResponse
from helpdesk.actors import Actor
from helpdesk.api.panel import AgentPanelViewSet
from tickets.api.merge_serializers import PanelMergeIn
from tickets.api.merge_views_docs import panel_merge_docs
from tickets.merging import merge_sources_get, tickets_merge
from tickets.payloads import ticket_panel_row, tickets_panel
from tickets.selectors import ticket_get


@panel_merge_docs
class PanelTicketMergeViewSet(AgentPanelViewSet):
    def create(self, request, **kwargs):
        target = ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        payload = PanelMergeIn(data=request.data)
        payload.is_valid(raise_exception=True)
        sources = merge_sources_get(organization=self.organization, source_ids=payload.validated_data["origens"])
        ticket = tickets_merge(target=target, sources=sources, actor=Actor.of_agent(self.agent))
        return EnvelopeResponse(tickets_panel([ticket_panel_row(ticket)])[0], message="Tickets mesclados.")
