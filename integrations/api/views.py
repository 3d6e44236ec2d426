"""Management API: API credentials and webhooks of the user's organization."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers

from helpdesk.api.pagination import PageQuery, page_payload, paginate
from helpdesk.api.panel import ManagementAPIView
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
from integrations.api.serializers import (
    CredentialCreatedOut,
    CredentialCreateIn,
    CredentialOut,
    DeliveryOut,
    WebhookCreateIn,
    WebhookOut,
    WebhookUpdateIn,
    WebhookWithSecretOut,
)
from integrations.delivery import delivery_resend
from integrations.events import test_event
from integrations.exceptions import WebhookInactive
from integrations.selectors import (
    credential_get,
    credential_list,
    delivery_get,
    delivery_list,
    webhook_get,
    webhook_list,
)
from integrations.services import (
    credential_create,
    credential_revoke,
    webhook_create,
    webhook_delete,
    webhook_update,
)


class CredentialCollectionView(ManagementAPIView):
    body_required_methods = ("POST",)

    @extend_schema(
        operation_id="api_keys_list",
        tags=["Painel: credenciais"],
        responses={200: envelope("CredenciaisListadas", CredentialOut, many=True), **errors(401, 403, 429)},
    )
    def get(self, request):
        credentials = credential_list(organization=self.organization)
        return EnvelopeResponse(CredentialOut(credentials, many=True).data, message="Credenciais listadas.")

    @extend_schema(
        operation_id="api_keys_create",
        tags=["Painel: credenciais"],
        request=CredentialCreateIn,
        responses={201: envelope("CredencialCriada", CredentialCreatedOut), **errors(400, 401, 403, 422, 429)},
    )
    def post(self, request):
        payload = CredentialCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        credential, key = credential_create(
            organization=self.organization, name=payload.validated_data["nome"], created_by=request.user
        )
        credential.full_key = key
        return EnvelopeResponse(
            CredentialCreatedOut(credential).data,
            message="Credencial criada. Guarde a chave: ela não será exibida novamente.",
            status=201,
        )


class CredentialDetailView(ManagementAPIView):
    @extend_schema(
        operation_id="api_keys_revoke",
        tags=["Painel: credenciais"],
        responses={200: envelope("CredencialRevogada", CredentialOut), **errors(401, 403, 404, 429)},
    )
    def delete(self, request, id):
        credential = credential_get(organization=self.organization, credential_id=id)
        credential = credential_revoke(credential=credential)
        return EnvelopeResponse(CredentialOut(credential).data, message="Credencial revogada.")


class WebhookCollectionView(ManagementAPIView):
    body_required_methods = ("POST",)

    @extend_schema(
        operation_id="webhooks_list",
        tags=["Painel: webhooks"],
        responses={200: envelope("WebhooksListados", WebhookOut, many=True), **errors(401, 403, 429)},
    )
    def get(self, request):
        webhooks = webhook_list(organization=self.organization)
        return EnvelopeResponse(WebhookOut(webhooks, many=True).data, message="Webhooks listados.")

    @extend_schema(
        operation_id="webhooks_create",
        tags=["Painel: webhooks"],
        request=WebhookCreateIn,
        responses={200: envelope("WebhookCriado", WebhookWithSecretOut), **errors(400, 401, 403, 422, 429)},
    )
    def post(self, request):
        payload = WebhookCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        webhook = webhook_create(
            organization=self.organization, name=data["nome"], url=data["url"], events=data["eventos"]
        )
        return EnvelopeResponse(
            WebhookWithSecretOut(webhook).data,
            message="Webhook criado. Guarde o segredo: ele não será exibido novamente.",
        )


class WebhookDetailView(ManagementAPIView):
    body_required_methods = ("PATCH",)

    @extend_schema(
        operation_id="webhooks_retrieve",
        tags=["Painel: webhooks"],
        responses={200: envelope("WebhookEncontrado", WebhookOut), **errors(401, 403, 404, 429)},
    )
    def get(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        return EnvelopeResponse(WebhookOut(webhook).data, message="Webhook encontrado.")

    @extend_schema(
        operation_id="webhooks_update",
        tags=["Painel: webhooks"],
        request=WebhookUpdateIn,
        responses={200: envelope("WebhookAtualizado", WebhookWithSecretOut), **errors(400, 401, 403, 404, 422, 429)},
    )
    def patch(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        payload = WebhookUpdateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        webhook = webhook_update(
            webhook=webhook,
            name=data.get("nome"),
            url=data.get("url"),
            events=data.get("eventos"),
            is_active=data.get("ativo"),
            regenerate_secret=data["regenerar_segredo"],
        )
        output = WebhookWithSecretOut if data["regenerar_segredo"] else WebhookOut
        return EnvelopeResponse(output(webhook).data, message="Webhook atualizado.")

    @extend_schema(
        operation_id="webhooks_delete",
        tags=["Painel: webhooks"],
        responses={200: envelope("WebhookRemovido", None), **errors(401, 403, 404, 429)},
    )
    def delete(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        webhook_delete(webhook=webhook)
        return EnvelopeResponse(None, message="Webhook removido.")


class DeliveryListQuery(PageQuery):
    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)


class WebhookTestView(ManagementAPIView):
    @extend_schema(
        operation_id="webhooks_test",
        tags=["Painel: webhooks"],
        request=None,
        responses={200: envelope("TesteEnfileirado", DeliveryOut), **errors(401, 403, 404, 409, 429)},
    )
    def post(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        if not webhook.is_active:
            raise WebhookInactive()
        event = test_event(webhook)
        delivery = delivery_get(webhook=webhook, delivery_id=event.deliveries.get().pk)
        return EnvelopeResponse(DeliveryOut(delivery).data, message="Evento de teste enfileirado.")


class DeliveryCollectionView(ManagementAPIView):
    @extend_schema(
        operation_id="webhooks_deliveries_list",
        tags=["Painel: webhooks"],
        parameters=[DeliveryListQuery],
        responses={
            200: envelope("EntregasListadas", page_of("PaginaEntrega", DeliveryOut)),
            **errors(401, 403, 404, 422, 429),
        },
    )
    def get(self, request, id):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        query = DeliveryListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = paginate(
            delivery_list(webhook=webhook),
            page=query.validated_data["page"],
            per_page=query.validated_data["por_pagina"],
        )
        return EnvelopeResponse(page_payload(page, DeliveryOut), message="Entregas listadas.")


class DeliveryResendView(ManagementAPIView):
    @extend_schema(
        operation_id="webhooks_deliveries_resend",
        tags=["Painel: webhooks"],
        request=None,
        responses={200: envelope("EntregaReenviada", DeliveryOut), **errors(401, 403, 404, 409, 429)},
    )
    def post(self, request, id, entrega):
        webhook = webhook_get(organization=self.organization, webhook_id=id)
        delivery = delivery_get(webhook=webhook, delivery_id=entrega)
        if not webhook.is_active:
            raise WebhookInactive()
        copy = delivery_resend(delivery=delivery)
        return EnvelopeResponse(
            DeliveryOut(delivery_get(webhook=webhook, delivery_id=copy.pk)).data, message="Entrega reenviada."
        )
