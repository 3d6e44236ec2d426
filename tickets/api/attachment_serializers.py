"""Attachment shapes (Anexo), in and out, and the builders of the output from rows.

The serializers are the OpenAPI schema and the oracle of the builders (tests/attachments); the
builders make the payloads from ATTACHMENT_COLUMNS rows, as tickets.api.output does for tickets.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from helpdesk.api.fields import TextField
from helpdesk.api.pagination import PageQuery
from tickets.api.output import iso
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


def attachment_event(row) -> dict:
    """A webhook's `anexo`, from an ATTACHMENT_COLUMNS row."""
    return {
        "id": str(row[0]),
        "nome": row[1],
        "tipo": row[2],
        "tamanho": row[3],
        "resposta_id": str(row[4]) if row[4] else None,
        "criado_em": iso(row[5]),
    }


def attachment_row(attachment) -> tuple:
    """The PANEL_ATTACHMENT_COLUMNS row of an attachment the service returned (no re-read)."""
    names = ("id", "name", "content_type", "size", "reply_id", "created_at", "organization_id")
    internal = attachment.reply.is_internal if attachment.reply_id else None  # as the LEFT JOIN reads it
    return (*(getattr(attachment, name) for name in names), internal, attachment.sender)


def attachments_public(request, rows) -> list[dict]:
    return [{**attachment_event(row), "url": attachment_url(request, row[0], row[6])} for row in rows]


def attachments_panel(request, rows) -> list[dict]:
    return [
        {
            **attachment_event(row),
            "url": attachment_url(request, row[0], row[6], for_agent=True),
            "interna": bool(row[7]),
        }
        for row in rows
    ]
