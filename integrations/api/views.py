"""Management API: API credentials and webhooks of the user's organization."""

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action

from helpdesk.api.pagination import page_payload
from helpdesk.api.panel import ManagementViewSet
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
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

CREDENTIAL_TAGS = ["Painel: credenciais"]
WEBHOOK_TAGS = ["Painel: webhooks"]


class CredentialViewSet(ManagementViewSet):
    @extend_schema(
        operation_id="api_keys_list",
        tags=CREDENTIAL_TAGS,
        responses={200: envelope("CredenciaisListadas", CredentialOut, many=True), **errors(401, 403, 429)},
    )
    def list(self, request):
        credentials = credential_list(organization=self.organization)
        return EnvelopeResponse(CredentialOut(credentials, many=True).data, message="Credenciais listadas.")

    @extend_schema(
        operation_id="api_keys_create",
        tags=CREDENTIAL_TAGS,
        request=CredentialCreateIn,
        responses={201: envelope("CredencialCriada", CredentialCreatedOut), **errors(400, 401, 403, 422, 429)},
    )
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

    @extend_schema(
        operation_id="api_keys_revoke",
        tags=CREDENTIAL_TAGS,
        responses={200: envelope("CredencialRevogada", CredentialOut), **errors(401, 403, 404, 429)},
    )
    def destroy(self, request, id):
        credential = credential_revoke(credential=credential_get(organization=self.organization, credential_id=id))
        return EnvelopeResponse(CredentialOut(credential).data, message="Credencial revogada.")


class WebhookViewSet(ManagementViewSet):
    @extend_schema(
        operation_id="webhooks_list",
        tags=WEBHOOK_TAGS,
        responses={200: envelope("WebhooksListados", WebhookOut, many=True), **errors(401, 403, 429)},
    )
    def list(self, request):
        webhooks = webhook_list(organization=self.organization)
        return EnvelopeResponse(WebhookOut(webhooks, many=True).data, message="Webhooks listados.")

    @extend_schema(
        operation_id="webhooks_create",
        tags=WEBHOOK_TAGS,
        request=WebhookCreateIn,
        responses={200: envelope("WebhookCriado", WebhookWithSecretOut), **errors(400, 401, 403, 422, 429)},
    )
    def create(self, request):
        payload = WebhookCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        webhook = webhook_create(organization=self.organization, **payload.validated_data)
        return EnvelopeResponse(
            WebhookWithSecretOut(webhook).data,
            message="Webhook criado. Guarde o segredo: ele não será exibido novamente.",
        )

    @extend_schema(
        operation_id="webhooks_retrieve",
        tags=WEBHOOK_TAGS,
        responses={200: envelope("WebhookEncontrado", WebhookOut), **errors(401, 403, 404, 429)},
    )
    def retrieve(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        return EnvelopeResponse(WebhookOut(webhook).data, message="Webhook encontrado.")

    @extend_schema(
        operation_id="webhooks_update",
        tags=WEBHOOK_TAGS,
        request=WebhookUpdateIn,
        responses={200: envelope("WebhookAtualizado", WebhookWithSecretOut), **errors(400, 401, 403, 404, 422, 429)},
    )
    def partial_update(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        payload = WebhookUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        webhook = webhook_update(webhook=webhook, **payload.validated_data)
        output = WebhookWithSecretOut if payload.validated_data["regenerate_secret"] else WebhookOut
        return EnvelopeResponse(output(webhook).data, message="Webhook atualizado.")

    @extend_schema(
        operation_id="webhooks_delete",
        tags=WEBHOOK_TAGS,
        responses={200: envelope("WebhookRemovido", None), **errors(401, 403, 404, 429)},
    )
    def destroy(self, request, id):
        webhook_delete(webhook=webhook_get(organization=self.organization, webhook_id=id))
        return EnvelopeResponse(None, message="Webhook removido.")

    @extend_schema(
        operation_id="webhooks_test",
        tags=WEBHOOK_TAGS,
        request=None,
        responses={200: envelope("TesteEnfileirado", DeliveryOut), **errors(401, 403, 404, 409, 429)},
    )
    @action(detail=True, methods=["post"], url_path="testar", takes_body=False)
    def test(self, request, id):
        delivery = webhook_test_send(webhook=webhook_get(organization=self.organization, webhook_id=id))
        return EnvelopeResponse(DeliveryOut(delivery).data, message="Evento de teste enfileirado.")

    @extend_schema(
        operation_id="webhooks_deliveries_list",
        tags=WEBHOOK_TAGS,
        parameters=[DeliveryListQuery],
        responses={
            200: envelope("EntregasListadas", page_of("PaginaEntrega", DeliveryOut)),
            **errors(401, 403, 404, 422, 429),
        },
    )
    @action(detail=True, methods=["get"], url_path="entregas")
    def deliveries(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        page = DeliveryListQuery.from_request(request).page_of(delivery_list(webhook=webhook))
        return EnvelopeResponse(page_payload(page, DeliveryOut), message="Entregas listadas.")

    @extend_schema(
        operation_id="webhooks_deliveries_resend",
        tags=WEBHOOK_TAGS,
        request=None,
        responses={200: envelope("EntregaReenviada", DeliveryOut), **errors(401, 403, 404, 409, 429)},
    )
    @action(detail=True, methods=["post"], url_path=r"entregas/(?P<entrega>[^/]+)/reenviar", takes_body=False)
    def resend(self, request, id, entrega):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        copy = delivery_resend(delivery=delivery_get(webhook=webhook, delivery_id=entrega))
        return EnvelopeResponse(DeliveryOut(copy).data, message="Entrega reenviada.")
