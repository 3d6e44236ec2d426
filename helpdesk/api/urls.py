from helpdesk.api.audit_views import AuditViewSet
from helpdesk.api.routers import ApiRouter

router = ApiRouter()
router.register("auditoria", AuditViewSet, basename="audit")
urlpatterns = router.urls
