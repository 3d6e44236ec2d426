"""The audit trail's query and records (helpdesk.api.audit_views)."""

from rest_framework import serializers

from api_framework.fields import InstantField, TextField
from api_framework.pagination import PageQuery
from helpdesk.audit import AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES
from helpdesk.models import AuditRecord

ACTOR_TYPES = [AuditRecord.ACTOR_USER, AuditRecord.ACTOR_CREDENTIAL, AuditRecord.ACTOR_SYSTEM]


class AuditQuery(PageQuery):
    por_pagina = serializers.IntegerField(required=False, default=25, min_value=1, max_value=100)
    ator_id = TextField(source="actor_id", required=False, max_length=64, help_text="O id do usuário ou da credencial.")
    recurso_tipo = serializers.ChoiceField(source="resource_type", required=False, choices=AUDIT_RESOURCE_TYPES)
    recurso_id = TextField(source="resource_id", required=False, max_length=64)
    acao = serializers.ChoiceField(source="action", required=False, choices=AUDIT_ACTIONS)
    desde = InstantField(source="since", required=False, help_text="A partir deste instante (ISO 8601 com fuso).")
    ate = InstantField(source="until", required=False, help_text="Até este instante, inclusive (ISO 8601 com fuso).")


class AuditActorOut(serializers.Serializer):
    tipo = serializers.ChoiceField(source="actor_type", choices=ACTOR_TYPES)
    id = serializers.CharField(source="actor_id", allow_null=True)
    nome = serializers.CharField(source="actor_name")

    def to_representation(self, record):
        return {"tipo": record.actor_type, "id": record.actor_id or None, "nome": record.actor_name}


class AuditOriginOut(serializers.Serializer):
    ip = serializers.CharField(allow_null=True)
    user_agent = serializers.CharField(allow_null=True)

    def to_representation(self, record):
        return {"ip": record.ip or None, "user_agent": record.user_agent or None}


class AuditResourceOut(serializers.Serializer):
    tipo = serializers.CharField(source="resource_type")
    id = serializers.CharField(source="resource_id", allow_null=True)

    def to_representation(self, record):
        return {"tipo": record.resource_type, "id": record.resource_id or None}


class AuditRecordOut(serializers.Serializer):
    id = serializers.UUIDField()
    criado_em = serializers.DateTimeField(source="created_at")
    acao = serializers.CharField(source="action")
    ator = AuditActorOut(source="*")
    origem = AuditOriginOut(
        source="*", help_text="ip e user_agent null em ações do sistema (beat, comandos do operador)."
    )
    recurso = AuditResourceOut(source="*")
    alteracoes = serializers.DictField(
        source="changes", help_text="Campo: {antes, depois}; nunca chaves, tokens, segredos ou senhas."
    )
