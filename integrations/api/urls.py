from django.urls import path

from integrations.api import views

urlpatterns = [
    path("api-keys", views.CredentialCollectionView.as_view(), name="credentials"),
    path("api-keys/<str:id>", views.CredentialDetailView.as_view(), name="credential"),
    path("webhooks", views.WebhookCollectionView.as_view(), name="webhooks"),
    path("webhooks/<str:id>", views.WebhookDetailView.as_view(), name="webhook"),
]
