from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularSwaggerView

from config.metrics import metrics_view
from helpdesk.api.auth_views import LoginView, LogoutView, RefreshView
from helpdesk.api.views import HealthView, SchemaView, api_route_not_found

urlpatterns = [
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),  # Prometheus, behind METRICS_TOKEN (outside /api)
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
    # Anything else under /api/ is a 404 envelope, never an HTML page.
    re_path(r"^api(/|$)", api_route_not_found),
]

handler400 = "helpdesk.api.views.handler400"
handler404 = "helpdesk.api.views.handler404"
handler500 = "helpdesk.api.views.handler500"
