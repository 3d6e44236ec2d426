from api_framework.routers import ApiRouter
from tickets.api.attachment_views import PanelTicketAttachmentViewSet
from tickets.api.field_views import CustomFieldViewSet
from tickets.api.merge_views import PanelTicketMergeViewSet
from tickets.api.panel_views import PanelStatusViewSet, PanelTagViewSet, PanelTicketViewSet

router = ApiRouter()
router.register("tickets", PanelTicketViewSet, basename="panel-ticket")
router.register(r"tickets/(?P<id>[^/]+)/anexos", PanelTicketAttachmentViewSet, basename="panel-ticket-attachment")
router.register(r"tickets/(?P<id>[^/]+)/mesclar", PanelTicketMergeViewSet, basename="panel-ticket-merge")
router.register("ticket-status", PanelStatusViewSet, basename="panel-status")
router.register("campos", CustomFieldViewSet, basename="custom-field")
router.register("tags", PanelTagViewSet, basename="panel-tag")
urlpatterns = router.urls
