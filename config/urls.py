from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularSwaggerView

from api_framework.views import HealthView, SchemaView, api_route_not_found
from foundation.metrics.view import metrics_view
from helpdesk.api.auth_views import LoginView, LogoutView, RefreshView
from integrations.metrics import DeliveryQueueCollector

urlpatterns = [
    path("admin/", admin.site.urls),
    # Prometheus, behind METRICS_TOKEN (outside /api); its collectors are read at scrape time
    path("metrics", metrics_view, {"collectors": [DeliveryQueueCollector]}, name="metrics"),
    path("api/health", HealthView.as_view(), name="health"),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/v1/", include("tickets.api.urls")),
    path("api/v1/", include("integrations.api.partner_urls")),
    path("api/auth/login", LoginView.as_view(), name="login"),
    path("api/auth/refresh", RefreshView.as_view(), name="refresh"),
    path("api/auth/logout", LogoutView.as_view(), name="logout"),
    path("api/", include("integrations.api.urls")),
    path("api/", include("helpdesk.api.urls")),
    path("api/", include("tickets.api.panel_urls")),
    path("api/", include("macros.api.urls")),
    path("api/", include("sla.api.urls")),
    # Anything else under /api/ is a 404 envelope, never an HTML page.
    re_path(r"^api(/|$)", api_route_not_found),
]

handler400 = "api_framework.views.handler400"
handler404 = "api_framework.views.handler404"
handler500 = "api_framework.views.handler500"
