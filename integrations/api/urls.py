from django.urls import path

from integrations.api import views

urlpatterns = [
    path("api-keys", views.CredentialCollectionView.as_view(), name="credentials"),
    path("api-keys/<str:id>", views.CredentialDetailView.as_view(), name="credential"),
    path("webhooks", views.WebhookCollectionView.as_view(), name="webhooks"),
    path("webhooks/<str:id>", views.WebhookDetailView.as_view(), name="webhook"),
    path("webhooks/<str:id>/testar", views.WebhookTestView.as_view(), name="webhook-test"),
    path("webhooks/<str:id>/entregas", views.DeliveryCollectionView.as_view(), name="webhook-deliveries"),
    path(
        "webhooks/<str:id>/entregas/<str:entrega>/reenviar",
        views.DeliveryResendView.as_view(),
        name="webhook-delivery-resend",
    ),
]
