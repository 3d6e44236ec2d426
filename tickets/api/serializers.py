"""Partner API shapes: TicketPublico, RespostaPublica and Atendente out, requests in."""

from dataclasses import dataclass

from django.core import signing
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api_framework.fields import EmailTextField, TextField
from api_framework.pagination import PageQuery
from foundation.feeds import CursorExpired, cursor_dumps, cursor_loads
from foundation.retention import retention
from helpdesk.api.avatars import avatar_url
from tickets.exceptions import ChangesCursorExpired
from tickets.models import Channel, Priority, Reply, ReplyOrigin, StatusCategory
from tickets.services import RequesterData

# Output serializers are the OpenAPI schema of the payloads built in tickets.payloads (and their oracle,
# tests/tickets/test_payloads.py): `allow_null` marks what can be null, choices are the enums. A
# docstring here would show in the schema.


class BlankAsNullField(serializers.CharField):
    """Optional text the partner did not give is null, not ""."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return value or None


class StatusOut(serializers.Serializer):
    nome = serializers.CharField(source="name")
    categoria = serializers.ChoiceField(source="category", choices=StatusCategory.choices)
    cor = serializers.CharField(source="color")


class RequesterOut(serializers.Serializer):
    nome = serializers.CharField(source="name")
    email = BlankAsNullField()
    telefone = BlankAsNullField(source="phone")
    external_id = BlankAsNullField()


class AuthorOut(serializers.Serializer):
    # An agent's e-mail and external_id are always null: they are not the partner's business.
    tipo = serializers.ChoiceField(choices=[("agente", "Atendente"), ("cliente", "Cliente")])
    nome = serializers.CharField(allow_null=True)
    email = serializers.CharField(allow_null=True)
    external_id = serializers.CharField(allow_null=True)


class ReplyPublicOut(serializers.Serializer):
    id = serializers.UUIDField()
    mensagem = serializers.CharField(source="body")
    origem = serializers.ChoiceField(source="origin", choices=ReplyOrigin.choices)
    editado = serializers.BooleanField(source="edited")
    autor = serializers.SerializerMethodField()
    criado_em = serializers.DateTimeField(source="created_at")

    @extend_schema_field(AuthorOut)
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


# TicketPublico without respostas (also the ticket of a webhook payload).
class TicketSummaryOut(serializers.Serializer):
    id = serializers.UUIDField()
    numero = serializers.IntegerField(source="number", min_value=1)
    assunto = serializers.CharField(source="subject")
    descricao = serializers.CharField(source="description")
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices)
    canal_origem = serializers.ChoiceField(source="channel", choices=Channel.choices)
    status = StatusOut()
    solicitante = RequesterOut(source="requester")
    external_id = BlankAsNullField()
    origem_sistema = serializers.ChoiceField(source="source_system", choices=Channel.choices)
    criado_em = serializers.DateTimeField(source="created_at")
    atualizado_em = serializers.DateTimeField(source="updated_at")
    resolvido_em = serializers.DateTimeField(source="resolved_at", allow_null=True)


class TicketPublicOut(TicketSummaryOut):
    respostas = ReplyPublicOut(source="public_replies", many=True)


class AgentOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    avatar_url = serializers.SerializerMethodField()

    @extend_schema_field(
        {
            "type": "string",
            "format": "uri",
            "nullable": True,
            "description": "URL assinada, válida por cerca de 30 minutos; null quando o atendente não tem foto.",
        }
    )
    def get_avatar_url(self, agent) -> str | None:
        return avatar_url(self.context["request"], agent.pk, agent.avatar.name)


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


LIST_CURSOR_SALT = "tickets.lista"
BAD_LIST_CURSOR = "Informe o proximo_cursor de uma resposta anterior, ou deixe vazio para começar do início da lista."


def list_cursor(last: tuple, page: int, organization) -> str:
    """Where the next page of the list starts, signed for this organization: (criado_em, numero) of
    the last ticket read, and the next page's number."""
    created_at, number = last
    return signing.dumps([created_at.isoformat(), number, page], salt=f"{LIST_CURSOR_SALT}:{organization.pk}")


@dataclass(frozen=True)
class ListPosition:
    """A loaded list cursor: after this (created_at, number), on this page; `after` None at the start."""

    after: tuple | None
    page: int


LIST_CURSOR_OUT = {
    "proximo_cursor": serializers.CharField(
        required=False,
        allow_null=True,
        help_text="Só no modo cursor (`cursor`): o `cursor` da próxima página; null depois da última.",
    )
}


class TicketListQuery(PageQuery):
    # Fields map to ticket_list_public's filters (source=), plus the page.
    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False)
    numero = serializers.IntegerField(source="number", required=False, min_value=1, max_value=2_147_483_647)
    busca = TextField(source="search", required=False, allow_blank=True, max_length=255)
    external_id = TextField(
        required=False, allow_blank=True, max_length=255, help_text="O ticket com este `external_id` (busca exata)."
    )
    cursor = TextField(
        required=False,
        allow_blank=True,
        max_length=1000,
        help_text=(
            "Modo cursor, o recomendado para percorrer a lista inteira: vazio na primeira chamada, depois o "
            "`proximo_cursor` da resposta anterior (com os mesmos filtros). Cada página custa o mesmo em "
            "qualquer ponto da lista e nenhum ticket é pulado nem repetido enquanto outros são criados; "
            "`page` é ignorado."
        ),
    )

    @classmethod
    def from_request(cls, request, organization=None) -> "TicketListQuery":
        query = cls(data=request.query_params, context={"organization": organization})
        query.is_valid(raise_exception=True)
        return query

    @property
    def position(self) -> ListPosition | None:
        """Where cursor mode reads from; None in page mode."""
        return self.validated_data.get("cursor")

    def validate_cursor(self, value: str) -> ListPosition:
        if value == "":
            return ListPosition(after=None, page=1)
        salt = f"{LIST_CURSOR_SALT}:{self.context['organization'].pk}"
        try:
            created_at, number, page = signing.loads(value, salt=salt)
            moment = parse_datetime(created_at)
        except (signing.BadSignature, ValueError, TypeError, UnicodeError):
            moment = None
        if moment is None or type(number) is not int or type(page) is not int:
            raise serializers.ValidationError(BAD_LIST_CURSOR)
        return ListPosition(after=(moment, number), page=page)


# --- the change list -----------------------------------------------------------------------------

CHANGES_CURSOR_SALT = "tickets.alteracoes"
FEED_LIMIT = 100
BAD_DESDE = (
    "Informe o proximo_cursor de uma resposta anterior ou uma data e hora ISO 8601 com fuso horário "
    "(por exemplo, 2025-01-31T12:00:00Z)."
)


def changes_cursor(position, organization) -> str:
    """Encrypted for this organization (foundation.feeds): another organization's cursor does not load either."""
    return cursor_dumps(position, salt=f"{CHANGES_CURSOR_SALT}:{organization.pk}")


class TicketChangesQuery(serializers.Serializer):
    # `desde` becomes a Position (a cursor) or an aware datetime; the organization comes in the context.
    desde = TextField(
        required=False,
        max_length=255,
        help_text=(
            "Onde continuar: o `proximo_cursor` da resposta anterior (opaco e cifrado), ou, na primeira chamada, "
            "uma data e hora ISO 8601 com fuso (por exemplo, 2025-01-31T12:00:00Z): os tickets alterados a partir "
            "dela. Sem `desde`, todos os tickets da organização."
        ),
    )
    limite = serializers.IntegerField(required=False, default=FEED_LIMIT, min_value=1, max_value=FEED_LIMIT)

    @classmethod
    def from_request(cls, request, organization) -> "TicketChangesQuery":
        query = cls(data=request.query_params, context={"organization": organization})
        query.is_valid(raise_exception=True)
        return query

    def validate_desde(self, value: str):
        try:
            moment = parse_datetime(value)
        except ValueError:  # well formed, but not a date (month 13)
            moment = None
        if moment is not None:
            if moment.tzinfo is None:
                raise serializers.ValidationError(BAD_DESDE)
            return moment
        organization = self.context["organization"]
        try:
            # Tombstones are kept as long as events: an older cursor may have missed a deletion.
            position = cursor_loads(value, salt=f"{CHANGES_CURSOR_SALT}:{organization.pk}", max_age=retention())
        except CursorExpired:
            raise ChangesCursorExpired() from None
        if position is None:
            raise serializers.ValidationError(BAD_DESDE)
        return position


class DeletedTicketOut(serializers.Serializer):
    id = serializers.UUIDField()
    numero = serializers.IntegerField(source="number", min_value=1)
    external_id = BlankAsNullField()
    excluido_em = serializers.DateTimeField(source="deleted_at")


class TicketChangesOut(serializers.Serializer):
    itens = TicketPublicOut(many=True, help_text="Tickets alterados, da alteração mais antiga à mais nova.")
    excluidos = DeletedTicketOut(
        many=True,
        help_text="Tickets excluídos nesta página, da exclusão mais antiga à mais nova: apague-os da cópia.",
    )
    proximo_cursor = serializers.CharField(
        help_text="Onde continuar: o `desde` da próxima chamada (agora, se `tem_mais`; mais tarde, se não)."
    )
    tem_mais = serializers.BooleanField(help_text="true quando já há mais alterações além desta página.")
