from django.urls import path

from sla.api.views import BusinessHoursViewSet, SlaPoliciesViewSet

# One calendar and one policy set per organization: resources without an id, read and replaced whole.
urlpatterns = [
    path(
        "horario-atendimento",
        BusinessHoursViewSet.as_view({"get": "retrieve", "put": "update"}),
        name="business-hours",
    ),
    path("sla", SlaPoliciesViewSet.as_view({"get": "retrieve", "put": "update"}), name="sla-policies"),
]
