from django.urls import path

from sla.api.views import BusinessHoursViewSet

# One calendar per organization: a resource without an id, read and replaced whole.
urlpatterns = [
    path(
        "horario-atendimento",
        BusinessHoursViewSet.as_view({"get": "retrieve", "put": "update"}),
        name="business-hours",
    ),
]
