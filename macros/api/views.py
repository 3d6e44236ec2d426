"""Agent panel API (JWT) of macros: list them, apply one to a ticket (macros.services.macro_apply)."""

from rest_framework.decorators import action

from api_framework.responses import EnvelopeResponse
from helpdesk.api.panel import AgentPanelViewSet
from macros.api.serializers import MacroApplyIn
from macros.api.views_docs import macro_docs, ticket_macro_docs
from macros.payloads import macro_panel
from macros.selectors import macro_get, macro_list
from macros.services import macro_apply
from tickets.payloads import ticket_panel_row, tickets_panel
from tickets.selectors import ticket_get


@macro_docs
class PanelMacroViewSet(AgentPanelViewSet):
    def list(self, request):
        macros = macro_list(organization_id=self.organization.pk)
        return EnvelopeResponse([macro_panel(macro) for macro in macros], message="Macros listadas.")


@ticket_macro_docs
class PanelTicketMacroViewSet(AgentPanelViewSet):
    @action(detail=False, methods=["post"], url_path=r"(?P<macro>[^/]+)")
    def apply(self, request, macro, **kwargs):
        # The ticket first, then the macro, then the body: a 404 answers before any body error.
        ticket = ticket_get(organization=self.organization, ticket_id=kwargs["id"])
        found = macro_get(organization_id=self.organization.pk, macro_id=macro)
        payload = MacroApplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        ticket, _ = macro_apply(ticket=ticket, macro=found, agent=self.agent, **payload.validated_data)
        return EnvelopeResponse(tickets_panel([ticket_panel_row(ticket)])[0], message="Macro aplicada.")
