"""Management API shapes: API credentials and webhooks."""

from rest_framework import serializers

from helpdesk.api.fields import StrictBooleanField, TextField
from helpdesk.api.pagination import PageQuery


class CredentialOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    key_prefix = serializers.CharField()
    ativa = serializers.BooleanField(source="is_active")
    ultimo_uso_em = serializers.DateTimeField(source="last_used_at")
    revogado_em = serializers.DateTimeField(source="revoked_at")
    criado_por = serializers.UUIDField(source="created_by_id")
    criado_em = serializers.DateTimeField(source="created_at")


class CredentialCreatedOut(CredentialOut):
    chave = serializers.CharField(source="full_key")


class CredentialCreateIn(serializers.Serializer):
    nome = TextField(source="name", max_length=100)


class WebhookOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    url = serializers.CharField()
    eventos = serializers.ListField(source="events", child=serializers.CharField())
    ativo = serializers.BooleanField(source="is_active")
    criado_em = serializers.DateTimeField(source="created_at")
    atualizado_em = serializers.DateTimeField(source="updated_at")


class WebhookWithSecretOut(WebhookOut):
    segredo = serializers.CharField(source="secret")


class WebhookCreateIn(serializers.Serializer):
    # Fields map to webhook_create's arguments (source=).
    nome = TextField(source="name", max_length=100)
    url = TextField(max_length=2048)
    eventos = serializers.ListField(source="events", child=TextField(max_length=100), allow_empty=False, max_length=20)


class WebhookUpdateIn(serializers.Serializer):
    # Fields map to webhook_update's arguments (source=); absent fields stay as they are.
    nome = TextField(source="name", max_length=100, required=False)
    url = TextField(max_length=2048, required=False)
    eventos = serializers.ListField(
        source="events", child=TextField(max_length=100), allow_empty=False, max_length=20, required=False
    )
    ativo = StrictBooleanField(source="is_active", required=False)
    regenerar_segredo = StrictBooleanField(source="regenerate_secret", required=False, default=False)


class DeliveryListQuery(PageQuery):
    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)


class DeliveryAttemptOut(serializers.Serializer):
    tentativa = serializers.IntegerField(source="number")
    enviada_em = serializers.DateTimeField(source="attempted_at")
    status_code = serializers.IntegerField(allow_null=True)
    duracao_ms = serializers.IntegerField(source="duration_ms")
    erro = serializers.CharField(source="error")
    resposta = serializers.CharField(source="response_excerpt")
    sucesso = serializers.BooleanField(source="succeeded")


class DeliveryOut(serializers.Serializer):
    id = serializers.UUIDField()
    evento = serializers.CharField(source="event.kind")
    evento_id = serializers.UUIDField(source="event_id")
    status = serializers.CharField()
    tentativas = serializers.IntegerField(source="attempt_count")
    proxima_tentativa_em = serializers.SerializerMethodField()
    ultima_tentativa_em = serializers.DateTimeField(source="last_attempt_at")
    criado_em = serializers.DateTimeField(source="created_at")
    historico = DeliveryAttemptOut(source="attempts", many=True)

    def get_proxima_tentativa_em(self, delivery) -> str | None:
        # Only a scheduled retry is news; the requeue guard of a fresh delivery is not.
        if delivery.status != "pendente" or delivery.attempt_count == 0 or delivery.next_attempt_at is None:
            return None
        return serializers.DateTimeField().to_representation(delivery.next_attempt_at)
