"""OpenAPI documentation of integrations.api.views: the organization's API credentials and webhooks."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors, page_of
from integrations.api import serializers

CREDENTIAL_TAGS = ["Painel: credenciais"]
WEBHOOK_TAGS = ["Painel: webhooks"]
WEBHOOK_NOT_FOUND = "Webhook não encontrado nesta organização (campo `id`)."
WEBHOOK_INACTIVE = "Webhook inativo (campo `ativo`)."

credential_docs = extend_schema_view(
    list=extend_schema(
        operation_id="api_keys_list",
        tags=CREDENTIAL_TAGS,
        description="As credenciais da organização, revogadas incluídas, da mais nova à mais antiga.",
        responses={200: envelope("CredenciaisListadas", serializers.CredentialOut, many=True)},
    ),
    create=extend_schema(
        operation_id="api_keys_create",
        tags=CREDENTIAL_TAGS,
        description=(
            "Cria uma chave de aplicação; a chave completa (`chave`) aparece só nesta resposta. Uma organização tem "
            "no máximo 20 credenciais ativas (API_KEYS_PER_ORGANIZATION): a seguinte é um 422 no campo `credencial`."
        ),
        request=serializers.CredentialCreateIn,
        responses={201: envelope("CredencialCriada", serializers.CredentialCreatedOut)},
    ),
    destroy=extend_schema(
        operation_id="api_keys_revoke",
        tags=CREDENTIAL_TAGS,
        description="Revoga a chave (idempotente): ela falha já na próxima requisição; o registro fica para auditoria.",
        responses={
            200: envelope("CredencialRevogada", serializers.CredentialOut),
            **errors(404, descriptions={404: "Credencial não encontrada nesta organização (campo `id`)."}),
        },
    ),
)

webhook_docs = extend_schema_view(
    list=extend_schema(
        operation_id="webhooks_list",
        tags=WEBHOOK_TAGS,
        description="Os webhooks da organização (no máximo 10), sem os segredos.",
        responses={200: envelope("WebhooksListados", serializers.WebhookOut, many=True)},
    ),
    create=extend_schema(
        operation_id="webhooks_create",
        tags=WEBHOOK_TAGS,
        description=(
            "Cria um webhook; o segredo (`segredo`) aparece só nesta resposta. Uma organização tem no máximo "
            "10 webhooks: o 11º é um 422 no campo `webhook`."
        ),
        request=serializers.WebhookCreateIn,
        responses={200: envelope("WebhookCriado", serializers.WebhookWithSecretOut)},
    ),
    retrieve=extend_schema(
        operation_id="webhooks_retrieve",
        tags=WEBHOOK_TAGS,
        description="Um webhook, sem o segredo.",
        responses={
            200: envelope("WebhookEncontrado", serializers.WebhookOut),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
        },
    ),
    partial_update=extend_schema(
        operation_id="webhooks_update",
        tags=WEBHOOK_TAGS,
        description=(
            "Muda só os campos enviados (`{}` não muda nada). `ativo: false` cancela as entregas pendentes. "
            "`segredo` vem na resposta só quando `regenerar_segredo` é true."
        ),
        request=serializers.WebhookUpdateIn,
        responses={
            200: envelope("WebhookAtualizado", serializers.WebhookUpdatedOut),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
        },
    ),
    destroy=extend_schema(
        operation_id="webhooks_delete",
        tags=WEBHOOK_TAGS,
        description="Remove o webhook com as suas entregas e o registro delas.",
        responses={
            200: envelope("WebhookRemovido", None),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
        },
    ),
    test=extend_schema(
        operation_id="webhooks_test",
        tags=WEBHOOK_TAGS,
        description="Enfileira uma entrega do evento `webhook.teste`. Não leva corpo.",
        request=None,
        responses={
            200: envelope("TesteEnfileirado", serializers.DeliveryOut),
            **errors(404, 409, descriptions={404: WEBHOOK_NOT_FOUND, 409: WEBHOOK_INACTIVE}),
        },
    ),
    deliveries=extend_schema(
        operation_id="webhooks_deliveries_list",
        tags=WEBHOOK_TAGS,
        description="As entregas do webhook, da mais nova à mais antiga, cada uma com as suas tentativas.",
        parameters=[serializers.DeliveryListQuery],
        responses={
            200: envelope("EntregasListadas", page_of("PaginaEntrega", serializers.DeliveryOut)),
            **errors(404, descriptions={404: WEBHOOK_NOT_FOUND}),
        },
    ),
    resend=extend_schema(
        operation_id="webhooks_deliveries_resend",
        tags=WEBHOOK_TAGS,
        description="Envia de novo o mesmo evento, como uma entrega nova (id e registro próprios). Não leva corpo.",
        request=None,
        responses={
            200: envelope("EntregaReenviada", serializers.DeliveryOut),
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
    ),
)
