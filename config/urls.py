from django.contrib import admin
from django.urls import include, path, re_path

from helpdesk.api.views import HealthView, api_route_not_found

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/health", HealthView.as_view(), name="health"),
    path("api/v1/", include("tickets.api.urls")),
    # Anything else under /api/ is a 404 envelope, never an HTML page.
    re_path(r"^api/", api_route_not_found),
]

handler404 = "helpdesk.api.views.handler404"
handler500 = "helpdesk.api.views.handler500"
