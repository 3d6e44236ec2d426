from api_framework.routers import ApiRouter
from helpdesk.api.audit_views import AuditViewSet

router = ApiRouter()
router.register("auditoria", AuditViewSet, basename="audit")
urlpatterns = router.urls
