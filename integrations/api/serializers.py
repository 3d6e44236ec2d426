"""Management API shapes: API credentials and webhooks."""

from rest_framework import serializers

from helpdesk.api.fields import StrictBooleanField, TextField


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
    nome = TextField(max_length=100)


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
    nome = TextField(max_length=100)
    url = TextField(max_length=2048)
    eventos = serializers.ListField(child=TextField(max_length=100), allow_empty=False, max_length=20)


class WebhookUpdateIn(serializers.Serializer):
    nome = TextField(max_length=100, required=False)
    url = TextField(max_length=2048, required=False)
    eventos = serializers.ListField(child=TextField(max_length=100), allow_empty=False, max_length=20, required=False)
    ativo = StrictBooleanField(required=False)
    regenerar_segredo = StrictBooleanField(required=False, default=False)
