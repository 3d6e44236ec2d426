"""Management API: API credentials and webhooks of the user's organization."""

from rest_framework.decorators import action

from api_framework.pagination import page_payload
from api_framework.responses import EnvelopeResponse
from helpdesk.actors import Actor
from helpdesk.api.panel import ManagementViewSet
from helpdesk.selectors import active_agent_of
from integrations.api.serializers import (
    CredentialCreatedOut,
    CredentialCreateIn,
    CredentialOut,
    DeliveryListQuery,
    DeliveryOut,
    WebhookCreateIn,
    WebhookOut,
    WebhookUpdateIn,
    WebhookWithSecretOut,
)
from integrations.api.views_docs import credential_docs, webhook_docs
from integrations.events import delivery_resend, webhook_test_send
from integrations.selectors import (
    credential_get,
    credential_list,
    delivery_get,
    delivery_list,
    webhook_get,
    webhook_list,
)
from integrations.services import credential_create, credential_revoke, webhook_create, webhook_delete, webhook_update


@credential_docs
class CredentialViewSet(ManagementViewSet):
    def list(self, request):
        credentials = credential_list(organization=self.organization)
        return EnvelopeResponse(CredentialOut(credentials, many=True).data, message="Credenciais listadas.")

    def create(self, request):
        payload = CredentialCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        credential, key = credential_create(
            organization=self.organization, created_by=request.user, **payload.validated_data
        )
        credential.full_key = key
        return EnvelopeResponse(
            CredentialCreatedOut(credential).data,
            message="Credencial criada. Guarde a chave: ela não será exibida novamente.",
            status=201,
        )

    def destroy(self, request, **kwargs):
        credential = credential_revoke(
            credential=credential_get(organization=self.organization, credential_id=kwargs["id"])
        )
        return EnvelopeResponse(CredentialOut(credential).data, message="Credencial revogada.")


@webhook_docs
class WebhookViewSet(ManagementViewSet):
    def list(self, request):
        webhooks = webhook_list(organization=self.organization)
        return EnvelopeResponse(WebhookOut(webhooks, many=True).data, message="Webhooks listados.")

    def create(self, request):
        payload = WebhookCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        webhook = webhook_create(organization=self.organization, **payload.validated_data)
        return EnvelopeResponse(
            WebhookWithSecretOut(webhook).data,
            message="Webhook criado. Guarde o segredo: ele não será exibido novamente.",
        )

    def retrieve(self, request, **kwargs):
        webhook = webhook_get(organization=self.organization, webhook_id=kwargs["id"])
        return EnvelopeResponse(WebhookOut(webhook).data, message="Webhook encontrado.")

    def partial_update(self, request, **kwargs):
        webhook = webhook_get(organization=self.organization, webhook_id=kwargs["id"])
        payload = WebhookUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        webhook = webhook_update(webhook=webhook, **payload.validated_data)
        output = WebhookWithSecretOut if payload.validated_data["regenerate_secret"] else WebhookOut
        return EnvelopeResponse(output(webhook).data, message="Webhook atualizado.")

    def destroy(self, request, **kwargs):
        webhook_delete(webhook=webhook_get(organization=self.organization, webhook_id=kwargs["id"]))
        return EnvelopeResponse(None, message="Webhook removido.")

    @action(detail=True, methods=["post"], url_path="testar", takes_body=False)
    def test(self, request, **kwargs):
        webhook = webhook_get(organization=self.organization, webhook_id=kwargs["id"])
        delivery = webhook_test_send(webhook=webhook, actor=Actor.of_agent(active_agent_of(request.user)))
        return EnvelopeResponse(DeliveryOut(delivery).data, message="Evento de teste enfileirado.")

    @action(detail=True, methods=["get"], url_path="entregas")
    def deliveries(self, request, **kwargs):
        webhook = webhook_get(organization=self.organization, webhook_id=kwargs["id"])
        page = DeliveryListQuery.from_request(request).page_of(delivery_list(webhook=webhook))
        return EnvelopeResponse(page_payload(page, DeliveryOut), message="Entregas listadas.")

    @action(detail=True, methods=["post"], url_path=r"entregas/(?P<entrega>[^/]+)/reenviar", takes_body=False)
    def resend(self, request, entrega, **kwargs):
        webhook = webhook_get(organization=self.organization, webhook_id=kwargs["id"])
        copy = delivery_resend(delivery=delivery_get(webhook=webhook, delivery_id=entrega))
        return EnvelopeResponse(DeliveryOut(copy).data, message="Entrega reenviada.")
