from helpdesk.api.routers import ApiRouter
from integrations.api.event_feed import EventFeedViewSet

router = ApiRouter()
router.register("eventos", EventFeedViewSet, basename="partner-event")
urlpatterns = router.urls
