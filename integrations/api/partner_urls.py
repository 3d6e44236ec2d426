from api_framework.routers import ApiRouter
from integrations.api.event_feed import EventFeedViewSet

router = ApiRouter()
router.register("eventos", EventFeedViewSet, basename="partner-event")
urlpatterns = router.urls
