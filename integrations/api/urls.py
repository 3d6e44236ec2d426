from helpdesk.api.routers import ApiRouter
from integrations.api.views import CredentialViewSet, WebhookViewSet

router = ApiRouter()
router.register("api-keys", CredentialViewSet, basename="credential")
router.register("webhooks", WebhookViewSet, basename="webhook")
urlpatterns = router.urls
