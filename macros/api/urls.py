from api_framework.routers import ApiRouter
from macros.api.views import PanelMacroViewSet, PanelTicketMacroViewSet

# Its own router, included from config/urls.py beside the tickets' panel router.
router = ApiRouter()
router.register("macros", PanelMacroViewSet, basename="panel-macro")
router.register(r"tickets/(?P<id>[^/]+)/macros", PanelTicketMacroViewSet, basename="panel-ticket-macro")
urlpatterns = router.urls
