from django.urls import path

from tickets.api import panel_views as views

urlpatterns = [
    path("tickets", views.PanelTicketCollectionView.as_view(), name="panel-tickets"),
    path("tickets/<str:id>", views.PanelTicketDetailView.as_view(), name="panel-ticket"),
    path("tickets/<str:id>/respostas", views.PanelReplyCollectionView.as_view(), name="panel-replies"),
    path("tickets/<str:id>/respostas/<str:resposta>", views.PanelReplyDetailView.as_view(), name="panel-reply"),
    path("ticket-status", views.PanelStatusCollectionView.as_view(), name="panel-statuses"),
]
