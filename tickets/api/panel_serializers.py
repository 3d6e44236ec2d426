"""Agent panel API shapes: the partner's shapes plus what only agents see."""

from rest_framework import serializers

from api_framework.fields import StrictBooleanField, StrictUUIDField, TextField
from tickets.api.attachment_serializers import PanelAttachmentOut
from tickets.api.field_serializers import CustomFieldValuesField
from tickets.api.serializers import ReplyPublicOut, RequesterIn, TicketPageQuery, TicketSummaryOut, TicketTagsIn
from tickets.bulk import MAX_BULK_TICKETS, BulkChange
from tickets.models import Priority, StatusCategory


class PanelStatusOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    categoria = serializers.ChoiceField(source="category", choices=StatusCategory.choices)
    cor = serializers.CharField(source="color")


class PanelAgentRefOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")


class PanelReplyOut(ReplyPublicOut):
    interna = serializers.BooleanField(source="is_internal")


class PanelReplyWithAttachmentsOut(PanelReplyOut):
    anexos = PanelAttachmentOut(many=True, required=False, help_text="Só na resposta a um envio multipart/form-data.")


class PanelTicketOut(TicketSummaryOut):
    status = PanelStatusOut()
    atendente = PanelAgentRefOut(source="assignee", allow_null=True)
    campos = serializers.DictField(
        source="custom_fields",
        child=serializers.JSONField(),
        help_text="Todos os campos personalizados que o ticket tem (`chave -> valor`), visíveis ao parceiro ou não.",
    )
    tags = serializers.ListField(child=serializers.CharField(), max_length=20, help_text="Em ordem alfabética.")
    respostas = PanelReplyOut(source="thread", many=True)


class PanelTicketListQuery(TicketPageQuery):
    # Fields map to ticket_page's filters (source=), plus the page; `campo.<chave>` names any field, hidden too.
    partner_fields = False
    status = serializers.UUIDField(source="status_id", required=False)
    atendente = serializers.UUIDField(source="assignee_id", required=False)


class PanelReplyIn(serializers.Serializer):
    mensagem = TextField(source="body", max_length=65535)
    interna = StrictBooleanField(source="internal", required=False, default=False)


class PanelReplyEditIn(serializers.Serializer):
    mensagem = TextField(source="body", max_length=65535)


class PanelTicketUpdateIn(serializers.Serializer):
    # Fields map to ticket_update_by_ids: an absent field stays as it is, `atendente_id: null` unassigns.
    status_id = StrictUUIDField(required=False)
    atendente_id = StrictUUIDField(source="assignee_id", required=False, allow_null=True)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False)
    campos = CustomFieldValuesField(source="custom_fields", required=False)
    tags = TicketTagsIn(
        required=False,
        help_text="Tags a acrescentar (`adicionar`) e a retirar (`remover`), como em PATCH /api/v1/tickets/{id}/tags.",
    )


class PanelTagOut(serializers.Serializer):
    nome = serializers.CharField(source="name")
    tickets = serializers.IntegerField(min_value=1, help_text="Quantos tickets da organização têm esta tag.")


class PanelTicketCreateIn(serializers.Serializer):
    # Fields map to ticket_open's arguments (source=); `atendente_id` is looked up in the organization.
    assunto = TextField(source="subject", max_length=255)
    descricao = TextField(source="description", max_length=65535)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False, allow_null=True)
    solicitante = RequesterIn(source="requester")
    atendente_id = StrictUUIDField(source="assignee_id", required=False, allow_null=True)
    campos = CustomFieldValuesField(source="custom_fields", required=False, allow_null=True)


class PanelTicketBulkIn(serializers.Serializer):
    # Fields map to tickets.bulk.BulkChange (plus the ids): an absent field stays as it is, `atendente_id: null`
    # unassigns.
    ids = serializers.ListField(
        child=StrictUUIDField(),
        min_length=1,
        max_length=MAX_BULK_TICKETS,
        help_text=f"De 1 a {MAX_BULK_TICKETS} ids de tickets; um repetido conta uma vez.",
    )
    status_id = StrictUUIDField(required=False)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False)
    atendente_id = StrictUUIDField(source="assignee_id", required=False, allow_null=True)
    tags = TicketTagsIn(required=False, help_text="Tags a acrescentar (`adicionar`) e a retirar (`remover`).")

    def validate(self, attrs) -> dict:
        ids = attrs.pop("ids")
        return {"ticket_ids": ids, "change": BulkChange(**attrs)}


class PanelTicketIgnoredOut(serializers.Serializer):
    id = serializers.UUIDField()
    motivo = serializers.CharField(
        help_text="Por que o ticket ficou como estava (o mesmo texto para um inexistente e um de outra organização)."
    )


class PanelTicketBulkOut(serializers.Serializer):
    atualizados = serializers.ListField(
        child=serializers.UUIDField(), help_text="Os tickets alterados (ou que já estavam como pedido), na ordem dada."
    )
    ignorados = PanelTicketIgnoredOut(many=True)
