from api_framework.routers import ApiRouter
from helpdesk.api.avatars import AvatarViewSet
from tickets.api.attachment_views import AttachmentDownloadViewSet, TicketAttachmentViewSet
from tickets.api.contact_views import ContactViewSet
from tickets.api.views import AgentViewSet, TicketViewSet

router = ApiRouter()
router.register("tickets", TicketViewSet, basename="partner-ticket")
router.register(r"tickets/(?P<id>[^/]+)/anexos", TicketAttachmentViewSet, basename="partner-ticket-attachment")
router.register("anexos", AttachmentDownloadViewSet, basename="attachment-download")
router.register("atendentes", AgentViewSet, basename="partner-agent")
router.register("atendentes/avatar", AvatarViewSet, basename="agent-avatar")
router.register("contatos", ContactViewSet, basename="partner-contact")
urlpatterns = router.urls
