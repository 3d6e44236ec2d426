from api_framework.routers import ApiRouter
from integrations.api.privacy_views import ContactViewSet
from integrations.api.views import CredentialViewSet, WebhookViewSet

router = ApiRouter()
router.register("api-keys", CredentialViewSet, basename="credential")
router.register("webhooks", WebhookViewSet, basename="webhook")
router.register("contatos", ContactViewSet, basename="contact")
urlpatterns = router.urls
