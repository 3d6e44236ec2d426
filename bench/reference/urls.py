"""The product's paths, so one wrk script and one URL path serve both servers."""

from django.urls import path

from bench.reference import views

urlpatterns = [
    path("api/health", views.health),
    path("api/v1/tickets", views.tickets),
    path("api/v1/tickets/<uuid:ticket_id>", views.ticket_detail),
    path("api/v1/tickets/<uuid:ticket_id>/respostas", views.reply_create),
    path("api/v1/atendentes", views.agents),
    path("api/tickets", views.panel_tickets),
]
