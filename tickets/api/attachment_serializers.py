"""Attachment shapes (Anexo), in and out.

The output serializers are the OpenAPI schema; the payloads are built in tickets.payloads, and
tests/tickets/test_payloads.py checks that both agree.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api_framework.fields import TextField
from api_framework.pagination import PageQuery
from tickets.attachments.content import SERVED_TYPES
from tickets.attachments.signing import attachment_url

URL_DESCRIPTION = (
    "Link de download deste serviço, assinado e válido por 30 minutos: peça a lista de novo para um link novo."
)


class AttachmentEventOut(serializers.Serializer):
    """What a webhook carries of an attachment: no link (it would expire before the retries end)."""

    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    tipo = serializers.ChoiceField(source="content_type", choices=SERVED_TYPES)
    tamanho = serializers.IntegerField(source="size", min_value=1)
    resposta_id = serializers.UUIDField(source="reply_id", allow_null=True)
    criado_em = serializers.DateTimeField(source="created_at")


class AttachmentOut(AttachmentEventOut):
    url = serializers.SerializerMethodField()

    @extend_schema_field({"type": "string", "format": "uri", "description": URL_DESCRIPTION})
    def get_url(self, attachment) -> str:
        return attachment_url(self.context["request"], attachment.pk, attachment.organization_id)


class PanelAttachmentOut(AttachmentOut):
    interna = serializers.SerializerMethodField()

    @extend_schema_field(
        {"type": "boolean", "description": "true: anexo de uma nota interna (nunca sai para o parceiro)."}
    )
    def get_interna(self, attachment) -> bool:
        return bool(attachment.reply_id and attachment.reply.is_internal)

    def get_url(self, attachment) -> str:
        return attachment_url(self.context["request"], attachment.pk, attachment.organization_id, for_agent=True)


@extend_schema_field({"type": "string", "format": "binary", "minLength": 1})
class NonEmptyFileField(serializers.FileField):
    """A file with at least one byte (an empty one is the service's 422, with its own message)."""


class AttachmentUploadIn(serializers.Serializer):
    arquivo = NonEmptyFileField(
        allow_empty_file=True,  # an empty file is the service's 422, with its own message
        use_url=False,
        help_text="O arquivo (no máximo ANEXO_MAX_BYTES, 10 MiB por padrão); o tipo é reconhecido pelo conteúdo.",
    )
    resposta_id = TextField(
        source="reply_id",
        required=False,
        allow_blank=True,
        help_text="Opcional: uma resposta deste ticket enviada pela API, à qual o arquivo pertence.",
    )


class FormBooleanField(serializers.BooleanField):
    """A form's true or false (any case), and nothing else: DRF's BooleanField also takes 1, "on", "yes"..."""

    default_error_messages = {"invalid": "Informe true ou false."}

    def to_internal_value(self, data):
        if isinstance(data, bool):
            return data
        if isinstance(data, str) and data.lower() in ("true", "false"):
            return data.lower() == "true"
        self.fail("invalid")


class PanelReplyUploadIn(serializers.Serializer):
    mensagem = TextField(source="body", max_length=65535)
    interna = FormBooleanField(source="internal", required=False, default=False)
    arquivo = serializers.ListField(
        child=NonEmptyFileField(allow_empty_file=True, use_url=False),
        source="uploads",
        required=False,
        default=list,
        max_length=10,
        help_text="Repetível: os arquivos da resposta ou nota (cada um no máximo ANEXO_MAX_BYTES).",
    )


class AttachmentListQuery(PageQuery):
    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)
