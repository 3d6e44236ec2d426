from django.urls import path

from helpdesk.avatars import AvatarView
from tickets.api import views

urlpatterns = [
    path("tickets", views.TicketCollectionView.as_view(), name="partner-tickets"),
    path("tickets/<str:id>", views.TicketDetailView.as_view(), name="partner-ticket"),
    path("tickets/<str:id>/respostas", views.ReplyCollectionView.as_view(), name="partner-replies"),
    path("tickets/<str:id>/respostas/<str:resposta>", views.ReplyDetailView.as_view(), name="partner-reply"),
    path("atendentes", views.AgentCollectionView.as_view(), name="partner-agents"),
    path("atendentes/avatar/<str:token>", AvatarView.as_view(), name="agent-avatar"),
]
