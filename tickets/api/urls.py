from helpdesk.api.avatars import AvatarViewSet
from helpdesk.api.routers import ApiRouter
from tickets.api.views import AgentViewSet, TicketViewSet

router = ApiRouter()
router.register("tickets", TicketViewSet, basename="partner-ticket")
router.register("atendentes", AgentViewSet, basename="partner-agent")
router.register("atendentes/avatar", AvatarViewSet, basename="agent-avatar")
urlpatterns = router.urls
