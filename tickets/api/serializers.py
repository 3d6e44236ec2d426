"""Partner API shapes: TicketPublico and RespostaPublica out, requests in."""

from rest_framework import serializers

from helpdesk.api.fields import EmailTextField, TextField
from helpdesk.api.pagination import PageQuery
from tickets.models import Priority, Reply, ReplyOrigin
from tickets.services import RequesterData


class BlankAsNullField(serializers.CharField):
    """Optional text the partner did not give is null, not ""."""

    def to_representation(self, value):
        return value or None


class StatusOut(serializers.Serializer):
    nome = serializers.CharField(source="name")
    categoria = serializers.CharField(source="category")
    cor = serializers.CharField(source="color")


class RequesterOut(serializers.Serializer):
    nome = serializers.CharField(source="name")
    email = BlankAsNullField()
    telefone = BlankAsNullField(source="phone")
    external_id = BlankAsNullField()


class ReplyPublicOut(serializers.Serializer):
    id = serializers.UUIDField()
    mensagem = serializers.CharField(source="body")
    origem = serializers.CharField(source="origin")
    editado = serializers.BooleanField(source="edited")
    autor = serializers.SerializerMethodField()
    criado_em = serializers.DateTimeField(source="created_at")

    def get_autor(self, reply: Reply) -> dict:
        if reply.origin == ReplyOrigin.AGENT:
            agent = reply.author_agent
            # Agents' e-mail addresses are not the partner's business.
            return {"tipo": "agente", "nome": agent.name if agent else None, "email": None, "external_id": None}
        contact = reply.author_contact
        return {
            "tipo": "cliente",
            "nome": contact.name,
            "email": contact.email or None,
            "external_id": contact.external_id or None,
        }


class TicketSummaryOut(serializers.Serializer):
    """TicketPublico without respostas (also the ticket of a webhook payload)."""

    id = serializers.UUIDField()
    numero = serializers.IntegerField(source="number")
    assunto = serializers.CharField(source="subject")
    descricao = serializers.CharField(source="description")
    prioridade = serializers.CharField(source="priority")
    canal_origem = serializers.CharField(source="channel")
    status = StatusOut()
    solicitante = RequesterOut(source="requester")
    external_id = BlankAsNullField()
    origem_sistema = serializers.CharField(source="source_system")
    criado_em = serializers.DateTimeField(source="created_at")
    atualizado_em = serializers.DateTimeField(source="updated_at")
    resolvido_em = serializers.DateTimeField(source="resolved_at")


class TicketPublicOut(TicketSummaryOut):
    respostas = ReplyPublicOut(source="public_replies", many=True)


class RequesterIn(serializers.Serializer):
    nome = TextField(source="name", max_length=255)
    email = EmailTextField(required=False, allow_blank=True, allow_null=True)
    telefone = TextField(source="phone", required=False, allow_blank=True, allow_null=True, max_length=32)
    external_id = TextField(required=False, allow_null=True, max_length=255)

    def validate(self, attrs) -> RequesterData:
        return RequesterData(**attrs)


class TicketCreateIn(serializers.Serializer):
    # Fields map to ticket_create's arguments (source=); docstrings would show in the OpenAPI schema.
    assunto = TextField(source="subject", max_length=255)
    descricao = TextField(source="description", max_length=65535)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False, allow_null=True)
    external_id = TextField(required=False, allow_null=True, max_length=255)
    solicitante = RequesterIn(source="requester")


class ReplyIn(serializers.Serializer):
    mensagem = TextField(source="body", max_length=65535)


class TicketListQuery(PageQuery):
    # Fields map to ticket_list_public's filters (source=), plus the page.
    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False)
    numero = serializers.IntegerField(source="number", required=False, min_value=1, max_value=2_147_483_647)
    busca = TextField(source="search", required=False, allow_blank=True, max_length=255)
