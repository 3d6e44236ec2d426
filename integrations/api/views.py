"""Management API: API credentials and webhooks of the user's organization."""

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action

from helpdesk.actors import Actor
from helpdesk.api.pagination import page_payload
from helpdesk.api.panel import ManagementViewSet
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
from helpdesk.selectors import active_agent_of
from integrations.api.serializers import (
    CredentialCreatedOut,
    CredentialCreateIn,
    CredentialOut,
    DeliveryListQuery,
    DeliveryOut,
    WebhookCreateIn,
    WebhookOut,
    WebhookUpdatedOut,
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
WEBHOOK_NOT_FOUND = "Webhook não encontrado nesta organização (campo `id`)."
WEBHOOK_INACTIVE = "Webhook inativo (campo `ativo`)."


class CredentialViewSet(ManagementViewSet):
    @extend_schema(
        operation_id="api_keys_list",
        tags=CREDENTIAL_TAGS,
        description="As credenciais da organização, revogadas incluídas, da mais nova à mais antiga.",
        responses={200: envelope("CredenciaisListadas", CredentialOut, many=True)},
    )
    def list(self, request):
        credentials = credential_list(organization=self.organization)
        return EnvelopeResponse(CredentialOut(credentials, many=True).data, message="Credenciais listadas.")

    @extend_schema(
        operation_id="api_keys_create",
        tags=CREDENTIAL_TAGS,
        description=(
            "Cria uma chave de aplicação; a chave completa (`chave`) aparece só nesta resposta. Uma organização tem "
            "no máximo 20 credenciais ativas (API_KEYS_PER_ORGANIZATION): a seguinte é um 422 no campo `credencial`."
        ),
        request=CredentialCreateIn,
        responses={201: envelope("CredencialCriada", CredentialCreatedOut)},
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
        description="Revoga a chave (idempotente): ela falha já na próxima requisição; o registro fica para auditoria.",
        responses={
            200: envelope("CredencialRevogada", CredentialOut),
            **errors(404, descriptions={404: "Credencial não encontrada nesta organização (campo `id`)."}),
        },
    )
    def destroy(self, request, id):
        credential = credential_revoke(credential=credential_get(organization=self.organization, credential_id=id))
        return EnvelopeResponse(CredentialOut(credential).data, message="Credencial revogada.")


class WebhookViewSet(ManagementViewSet):
    @extend_schema(
        operation_id="webhooks_list",
        tags=WEBHOOK_TAGS,
        description="Os webhooks da organização (no máximo 10), sem os segredos.",
        responses={200: envelope("WebhooksListados", WebhookOut, many=True)},
    )
    def list(self, request):
        webhooks = webhook_list(organization=self.organization)
        return EnvelopeResponse(WebhookOut(webhooks, many=True).data, message="Webhooks listados.")

    @extend_schema(
        operation_id="webhooks_create",
        tags=WEBHOOK_TAGS,
        description=(
            "Cria um webhook; o segredo (`segredo`) aparece só nesta resposta. Uma organização tem no máximo "
            "10 webhooks: o 11º é um 422 no campo `webhook`."
        ),
        request=WebhookCreateIn,
        responses={200: envelope("WebhookCriado", WebhookWithSecretOut)},
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
        description="Um webhook, sem o segredo.",
        responses={
            200: envelope("WebhookEncontrado", WebhookOut),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
        },
    )
    def retrieve(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        return EnvelopeResponse(WebhookOut(webhook).data, message="Webhook encontrado.")

    @extend_schema(
        operation_id="webhooks_update",
        tags=WEBHOOK_TAGS,
        description=(
            "Muda só os campos enviados (`{}` não muda nada). `ativo: false` cancela as entregas pendentes. "
            "`segredo` vem na resposta só quando `regenerar_segredo` é true."
        ),
        request=WebhookUpdateIn,
        responses={
            200: envelope("WebhookAtualizado", WebhookUpdatedOut),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
        },
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
        description="Remove o webhook com as suas entregas e o registro delas.",
        responses={
            200: envelope("WebhookRemovido", None),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
        },
    )
    def destroy(self, request, id):
        webhook_delete(webhook=webhook_get(organization=self.organization, webhook_id=id))
        return EnvelopeResponse(None, message="Webhook removido.")

    @extend_schema(
        operation_id="webhooks_test",
        tags=WEBHOOK_TAGS,
        description="Enfileira uma entrega do evento `webhook.teste`. Não leva corpo.",
        request=None,
        responses={
            200: envelope("TesteEnfileirado", DeliveryOut),
            **errors(404, 409, descriptions={404: WEBHOOK_NOT_FOUND, 409: WEBHOOK_INACTIVE}),
        },
    )
    @action(detail=True, methods=["post"], url_path="testar", takes_body=False)
    def test(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        delivery = webhook_test_send(webhook=webhook, actor=Actor.of_agent(active_agent_of(request.user)))
        return EnvelopeResponse(DeliveryOut(delivery).data, message="Evento de teste enfileirado.")

    @extend_schema(
        operation_id="webhooks_deliveries_list",
        tags=WEBHOOK_TAGS,
        description="As entregas do webhook, da mais nova à mais antiga, cada uma com as suas tentativas.",
        parameters=[DeliveryListQuery],
        responses={
            200: envelope("EntregasListadas", page_of("PaginaEntrega", DeliveryOut)),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
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
        description="Envia de novo o mesmo evento, como uma entrega nova (id e registro próprios). Não leva corpo.",
        request=None,
        responses={
            200: envelope("EntregaReenviada", DeliveryOut),
            **errors(
                404,
                409,
                descriptions={
                    404: (
                        "Webhook não encontrado (campo `id`) ou entrega não encontrada neste webhook (campo `entrega`)."
                    ),
                    409: WEBHOOK_INACTIVE,
                },
            ),
        },
    )
    @action(detail=True, methods=["post"], url_path=r"entregas/(?P<entrega>[^/]+)/reenviar", takes_body=False)
    def resend(self, request, id, entrega):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        copy = delivery_resend(delivery=delivery_get(webhook=webhook, delivery_id=entrega))
        return EnvelopeResponse(DeliveryOut(copy).data, message="Entrega reenviada.")
