"""Partner API shapes: TicketPublico, RespostaPublica and Atendente out, requests in."""

from dataclasses import dataclass
from datetime import datetime

from django.core import signing
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import EmailValidator
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from api_framework.fields import EmailTextField, InstantField, TextField
from api_framework.pagination import PageQuery
from api_framework.schema import EMAIL_PATTERN, NO_NUL, NOT_BLANK_NO_NUL, AllOfBases
from foundation.exceptions import ValidationFailed
from foundation.feeds import CursorExpired, cursor_dumps, cursor_loads
from foundation.retention import retention
from helpdesk.api.avatars import avatar_url
from tickets.api.field_serializers import CustomFieldValuesField
from tickets.exceptions import ChangesCursorExpired
from tickets.fields.selectors import FieldFilter, fields_by_key, fields_shown, shown_values
from tickets.fields.values import RANGED_TYPES, BadValue, query_value
from tickets.models import Channel, Priority, Reply, ReplyOrigin, StatusCategory
from tickets.payloads import TICKET_BLOCKS, ticket_blocks_chosen, ticket_blocks_unknown, ticket_blocks_unknown_message
from tickets.selectors import DEFAULT_ORDER, ORDERS
from tickets.service_levels import SLA_FILTERS, sla_view
from tickets.services import RequesterData, TagsChange
from tickets.tags import MAX_TAG_LENGTH, MAX_TAGS, TOO_MANY_TAGS, tags_normalize

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


class AgentRefOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")


# --- optional blocks (`incluir`): the schema of each block of tickets.payloads.TICKET_BLOCKS -----------
# A block's keys are optional here: a ticket has them exactly when `incluir` names the block. The
# docstrings are the components' descriptions.


class AssigneeBlockOut(serializers.Serializer):
    """Bloco `atendente` (`incluir=atendente`): quem atende o ticket."""

    atendente = AgentRefOut(
        source="assignee",
        allow_null=True,
        required=False,
        help_text="O atendente do ticket (`id` e `nome`, como em GET /api/v1/atendentes), ou null sem atendente.",
    )


class ContactBlockOut(serializers.Serializer):
    """Bloco `contato` (`incluir=contato`): o contato solicitante."""

    contato_id = serializers.UUIDField(
        source="requester_id",
        required=False,
        help_text="O id do contato solicitante do ticket (o mesmo contato para os tickets dele).",
    )


class TagsBlockOut(serializers.Serializer):
    """Bloco `tags` (`incluir=tags`): as tags do ticket."""

    tags = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        max_length=20,
        help_text="As tags do ticket, normalizadas (minúsculas, espaços internos como `-`), sem repetição, em "
        "ordem alfabética (por ponto de código); lista vazia sem tags.",
    )


@extend_schema_field(
    {
        "oneOf": [{"type": "string"}, {"type": "boolean"}, {"type": "array", "items": {"type": "string"}}],
        "description": (
            '`texto`, `lista`: o texto; `numero`: o decimal como texto (`"12.5"`); `data`: AAAA-MM-DD; '
            "`booleano`: true ou false; `multilista`: a lista das opções escolhidas, na ordem do campo."
        ),
    }
)
class CustomFieldValueField(serializers.JSONField):
    pass


class ShownCustomFieldsField(serializers.DictField):
    """A ticket's values of the fields partners see (the `campos` block of tickets.payloads)."""

    def to_representation(self, ticket):
        return shown_values(fields_shown(ticket.organization_id), ticket.custom_fields)


class CustomFieldsBlockOut(serializers.Serializer):
    """Bloco `campos` (`incluir=campos`): os campos personalizados do ticket."""

    campos = ShownCustomFieldsField(
        source="*",
        child=CustomFieldValueField(),
        required=False,
        help_text=(
            "Os valores dos campos personalizados visíveis ao parceiro (`chave -> valor`) que o ticket tem, na "
            "ordem dos campos; um campo sem valor não aparece. GET /api/campos (painel) define os campos."
        ),
    )


class SlaTargetOut(serializers.Serializer):
    tipo = serializers.ChoiceField(
        choices=["primeira_resposta", "proxima_resposta", "resolucao"],
        help_text="`primeira_resposta`: da criação à primeira resposta pública de um agente; `proxima_resposta`: de "
        "uma resposta do cliente à resposta pública seguinte de um agente (um ciclo por resposta não respondida); "
        "`resolucao`: da criação à resolução.",
    )
    vence_em = serializers.DateTimeField(
        allow_null=True,
        help_text="O prazo, em horário comercial contado pelo horário de atendimento; null enquanto pausada (o prazo "
        "anda com a pausa) ou sem prazo calculável. Uma meta cumprida guarda o prazo que tinha.",
    )
    cumprida_em = serializers.DateTimeField(
        allow_null=True,
        help_text="Quando a meta foi cumprida (a resposta, a resolução; resolver cumpre as respostas devidas); "
        "null enquanto corre.",
    )
    violada = serializers.BooleanField(help_text="O prazo passou antes de a meta ser cumprida.")
    pausada = serializers.BooleanField(help_text="O ticket aguarda o cliente: a meta não corre.")


class SlaOut(serializers.Serializer):
    politica = serializers.ChoiceField(
        choices=Priority.values,
        allow_null=True,
        help_text="A prioridade da política de SLA que o ticket segue (null: a política de tickets sem prioridade, "
        "ou nenhuma política dá mais metas ao ticket).",
    )
    metas = SlaTargetOut(
        many=True,
        help_text="As metas da política, na ordem primeira_resposta, proxima_resposta, "
        "resolucao; proxima_resposta só depois de uma resposta do cliente.",
    )


class TicketSlaField(SlaOut):
    """The `sla` block of a ticket in hand, from its stored clock (tickets.service_levels.sla_view)."""

    def to_representation(self, ticket):
        view = sla_view(ticket.sla_clock, now=timezone.now())
        return None if view is None else super().to_representation(view)


class SlaBlockOut(serializers.Serializer):
    """Bloco `sla` (`incluir=sla`): as metas de SLA do ticket."""

    sla = TicketSlaField(
        source="*",
        required=False,
        allow_null=True,
        help_text="As metas de SLA do ticket e seus prazos; null quando a prioridade do ticket não tem política "
        "(GET /api/sla, painel) e nenhuma lhe deu metas. docs/sla.md explica como os prazos andam.",
    )


class MetricsOut(serializers.Serializer):
    primeira_resposta_em = serializers.DateTimeField(
        allow_null=True, help_text="A primeira resposta pública de um agente; null sem resposta."
    )
    tempo_primeira_resposta_min = serializers.IntegerField(
        allow_null=True,
        help_text="Minutos em horário comercial da criação à primeira resposta pública de um agente; null sem "
        "resposta (ou respondido antes de as métricas existirem).",
    )
    tempo_resolucao_min = serializers.IntegerField(
        allow_null=True,
        help_text="Minutos em horário comercial da criação à resolução (a última); null enquanto não resolvido.",
    )
    reaberturas = serializers.IntegerField(help_text="Quantas vezes o ticket saiu de resolvido ou fechado.")
    respostas_agente = serializers.IntegerField(help_text="Respostas públicas de agentes (notas internas não contam).")
    respostas_cliente = serializers.IntegerField(help_text="Respostas do cliente.")


class TicketMetricsField(MetricsOut):
    """The `metricas` block of a ticket in hand."""

    def to_representation(self, ticket):
        return super().to_representation(
            {
                "primeira_resposta_em": ticket.first_response_at,
                "tempo_primeira_resposta_min": ticket.first_response_minutes,
                "tempo_resolucao_min": ticket.resolution_minutes,
                "reaberturas": ticket.reopen_count,
                "respostas_agente": ticket.agent_reply_count,
                "respostas_cliente": ticket.customer_reply_count,
            }
        )


class MetricsBlockOut(serializers.Serializer):
    """Bloco `metricas` (`incluir=metricas`): tempos e contagens do ticket."""

    metricas = TicketMetricsField(source="*", required=False, help_text="Tempos e contagens do atendimento do ticket.")


class RatingOut(serializers.Serializer):
    nota = serializers.IntegerField(min_value=1, max_value=5, help_text="A nota do cliente, de 1 a 5.")
    comentario = serializers.CharField(allow_blank=True, help_text="O comentário do cliente (vazio sem comentário).")
    criado_em = serializers.DateTimeField(
        help_text="Quando o cliente avaliou este ciclo pela primeira vez (uma nova avaliação em 7 dias a substitui)."
    )


class TicketRatingField(RatingOut):
    """The `avaliacao` block of a ticket in hand: its current cycle's rating."""

    def to_representation(self, ticket):
        rating = ticket.current_rating
        if rating is None:
            return None
        return super().to_representation(
            {"nota": rating.score, "comentario": rating.comment, "criado_em": rating.created_at}
        )


class RatingBlockOut(serializers.Serializer):
    """Bloco `avaliacao` (`incluir=avaliacao`): a avaliação do cliente."""

    avaliacao = TicketRatingField(
        source="*",
        required=False,
        allow_null=True,
        help_text="A avaliação do cliente da última resolução do ticket (POST /api/v1/tickets/{id}/avaliacao); null "
        "sem avaliação deste ciclo (uma nova resolução começa outro).",
    )


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": 5})
class ScoreField(serializers.Field):
    """A whole number from 1 to 5; never "5", 5.0 nor true."""

    default_error_messages = {"invalid": "Informe um número inteiro de 1 a 5."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int) or not 1 <= data <= 5:
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


class RatingIn(serializers.Serializer):
    nota = ScoreField(source="score", help_text="A nota do cliente, de 1 (insatisfeito) a 5 (muito satisfeito).")
    comentario = TextField(
        source="comment",
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=2000,
        help_text="O comentário do cliente, até 2.000 caracteres (opcional).",
    )

    def validate(self, attrs):
        attrs["comment"] = attrs.get("comment") or ""
        return attrs


# By the block's name, in the order of tickets.payloads.TICKET_BLOCKS (tests/tickets/test_payloads.py checks both).
class MergeRefOut(serializers.Serializer):
    id = serializers.UUIDField(help_text="O ticket que recebeu as respostas deste.")
    numero = serializers.IntegerField(source="number", min_value=1)


class MergeBlockOut(serializers.Serializer):
    """Bloco `mesclagem` (`incluir=mesclagem`): o ticket em que este foi mesclado."""

    mesclado_em = MergeRefOut(
        source="merged_into",
        allow_null=True,
        required=False,
        help_text="O ticket em que este foi mesclado (`id`, `numero`): as respostas deste estão lá, e este está "
        "fechado. null para um ticket não mesclado.",
    )


TICKET_BLOCK_SCHEMAS = {
    "atendente": AssigneeBlockOut,
    "contato": ContactBlockOut,
    "tags": TagsBlockOut,
    "campos": CustomFieldsBlockOut,
    "sla": SlaBlockOut,
    "metricas": MetricsBlockOut,
    "avaliacao": RatingBlockOut,
    "mesclagem": MergeBlockOut,
}


def _with_blocks(name: str, ticket, description: str) -> type:
    parts = (AllOfBases, ticket, *TICKET_BLOCK_SCHEMAS.values())
    return type(name, parts, {"__module__": __name__, "__doc__": description})


TicketPublicWithBlocksOut = _with_blocks(
    "TicketPublicWithBlocksOut",
    TicketPublicOut,
    "TicketPublico (TicketPublicOut), e depois dele as chaves dos blocos pedidos em `incluir`, na ordem dos "
    "blocos. Sem `incluir`, exatamente TicketPublicOut.",
)
TicketSummaryWithBlocksOut = _with_blocks(
    "TicketSummaryWithBlocksOut",
    TicketSummaryOut,
    "O ticket de um evento (TicketSummaryOut), e depois dele as chaves dos blocos do `incluir` do webhook ou do "
    "feed. Sem `incluir`, exatamente TicketSummaryOut.",
)

INCLUIR_NAMES = "|".join(TICKET_BLOCKS)
INCLUIR_HELP = (
    f"Blocos a acrescentar a cada ticket, separados por vírgula, sem espaços: {', '.join(TICKET_BLOCKS)} "
    "(um nome repetido conta uma vez; o parâmetro também pode se repetir). Cada bloco traz chaves a mais no "
    "ticket, depois das do TicketPublico; sem `incluir`, o ticket é exatamente o TicketPublico. Um nome "
    "desconhecido é um 422 em `incluir`."
)


INCLUIR_MAX_LENGTH = 255


@extend_schema_field(
    {"type": "string", "maxLength": INCLUIR_MAX_LENGTH, "pattern": rf"^(({INCLUIR_NAMES})?,)*({INCLUIR_NAMES})?$"}
)
class BlocksField(serializers.Field):
    """`incluir`: the blocks asked for, known names only, each once, in the blocks' order (a tuple); absent
    or empty, none."""

    default_error_messages = {
        "invalid": "Informe um texto.",
        "max_length": f"Certifique-se de que este campo não tenha mais de {INCLUIR_MAX_LENGTH} caracteres.",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", INCLUIR_HELP)
        super().__init__(required=False, **kwargs)

    def get_value(self, dictionary):
        if not hasattr(dictionary, "getlist") or self.field_name not in dictionary:
            return super().get_value(dictionary)
        return ",".join(value for value in dictionary.getlist(self.field_name) if value)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if len(data) > INCLUIR_MAX_LENGTH:
            self.fail("max_length")
        names = [name for name in data.split(",") if name]
        unknown = ticket_blocks_unknown(names)
        if unknown:
            raise serializers.ValidationError(ticket_blocks_unknown_message(unknown))
        return ticket_blocks_chosen(names)

    def to_representation(self, value):
        return ",".join(value)


class BlocksQuery(serializers.Serializer):
    # The query string of an answer with one ticket (read, create, resolve, reopen).
    incluir = BlocksField()

    @classmethod
    def blocks_of(cls, request, *, first=None) -> tuple[str, ...]:
        """The blocks asked for. A bad `incluir` is a 422, after `first()` when given: the lookup whose 404
        comes before any validation error."""
        query = cls(data=request.query_params)
        if not query.is_valid():
            if first is not None:
                first()
            raise ValidationError(query.errors)
        return query.validated_data.get("incluir", ())


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


TAGS_HELP = (
    "Cada tag é normalizada antes de tudo: espaços nas pontas removidos, minúsculas (Unicode casefold), espaços "
    f"internos trocados por um `-`; depois disso, de 1 a {MAX_TAG_LENGTH} caracteres, sem o caractere NUL. "
    "Repetidas contam uma vez. Uma tag inválida é um 422 que a nomeia."
)


@extend_schema_field({"type": "array", "items": {"type": "string", "pattern": NOT_BLANK_NO_NUL}})
class TagsField(serializers.Field):
    """A list of tags, normalised, each once, sorted (tickets.tags); every refused tag named in the 422. With
    `limit`, at most MAX_TAGS of them (a new ticket's)."""

    def __init__(self, *, limit: bool = False, **kwargs):
        self.limit = limit
        kwargs.setdefault("help_text", TAGS_HELP)
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> list[str]:
        try:
            tags = tags_normalize(data, field=self.field_name)
        except ValidationFailed as refused:
            raise serializers.ValidationError(refused.errors[self.field_name]) from None
        if self.limit and len(tags) > MAX_TAGS:
            raise serializers.ValidationError(TOO_MANY_TAGS)
        return tags

    def to_representation(self, value):
        return list(value)


class TicketCreateIn(serializers.Serializer):
    # Fields map to ticket_create's arguments (source=); docstrings would show in the OpenAPI schema.
    assunto = TextField(source="subject", max_length=255)
    descricao = TextField(source="description", max_length=65535)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False, allow_null=True)
    external_id = TextField(required=False, allow_null=True, max_length=255)
    solicitante = RequesterIn(source="requester")
    campos = CustomFieldValuesField(source="custom_fields", required=False, allow_null=True)
    tags = TagsField(
        limit=True,
        required=False,
        help_text=f"As tags do ticket novo (no máximo {MAX_TAGS} depois de normalizadas). {TAGS_HELP}",
    )


NO_TAGS_GIVEN = "Informe adicionar, remover ou os dois."


class TicketTagsIn(serializers.Serializer):
    # Becomes a tickets.services.TagsChange; either list may be absent, not both.
    adicionar = TagsField(required=False, help_text=f"Tags a acrescentar (as que o ticket já tem ficam). {TAGS_HELP}")
    remover = TagsField(
        required=False, help_text="Tags a retirar; uma que o ticket não tem não é erro. Normalizadas como em adicionar."
    )

    def validate(self, attrs) -> TagsChange:
        if "adicionar" not in attrs and "remover" not in attrs:
            raise serializers.ValidationError(NO_TAGS_GIVEN)
        try:
            return TagsChange.of(attrs.get("adicionar", ()), attrs.get("remover", ()))
        except ValidationFailed as refused:
            raise serializers.ValidationError(refused.errors) from None


class TicketTagsOut(serializers.Serializer):
    tags = serializers.ListField(
        child=serializers.CharField(), max_length=MAX_TAGS, help_text="As tags do ticket agora, em ordem alfabética."
    )


class ReplyIn(serializers.Serializer):
    mensagem = TextField(source="body", max_length=65535)


LIST_CURSOR_SALT = "tickets.lista"
BAD_LIST_CURSOR = "Informe o proximo_cursor de uma resposta anterior, ou deixe vazio para começar do início da lista."
OTHER_ORDER_CURSOR = (
    "Este proximo_cursor é de outra ordenacao: use a mesma ordenacao em todas as páginas, ou deixe o cursor vazio "
    "para começar do início."
)
# `ordenacao`, as partners write it, and the list's order it names (tickets.selectors.ORDERS).
ORDERINGS = {
    "-criado_em": "-created_at",
    "criado_em": "created_at",
    "-atualizado_em": "-updated_at",
    "atualizado_em": "updated_at",
    "numero": "number",
    "-numero": "-number",
}
DEFAULT_ORDERING = "-criado_em"
_ORDERING_OF = {order: ordering for ordering, order in ORDERINGS.items()}


def list_cursor(last: tuple, page: int, organization, order: str = DEFAULT_ORDER) -> str:
    """Where the next page of the list starts, signed for this organization: the last ticket's place in the
    order (order_place: (criado_em, numero) in the default order), the next page's number, and the
    `ordenacao` when it is not the default (a default cursor reads exactly as before `ordenacao` existed)."""
    values = [value.isoformat() if isinstance(value, datetime) else value for value in last]
    ordering = _ORDERING_OF[order]
    payload = [*values, page] if ordering == DEFAULT_ORDERING else [*values, page, ordering]
    return signing.dumps(payload, salt=f"{LIST_CURSOR_SALT}:{organization.pk}")


@dataclass(frozen=True)
class ListPosition:
    """A loaded list cursor: after this place in the order of `ordering` (None at the start: any ordering), on
    this page."""

    after: tuple | None
    page: int
    ordering: str | None = None


def _position(payload) -> ListPosition | None:
    """A cursor's content as list_cursor wrote it, or None."""
    if not isinstance(payload, list) or len(payload) < 3:
        return None
    ordering, values, page = DEFAULT_ORDERING, payload[:-1], payload[-1]
    if isinstance(page, str) and page in ORDERINGS and page != DEFAULT_ORDERING:
        ordering, values, page = page, payload[:-2], payload[-2]
    columns = [name.lstrip("-") for name in ORDERS[ORDERINGS[ordering]]]
    if type(page) is not int or len(values) != len(columns):
        return None
    after = []
    for column, value in zip(columns, values, strict=True):
        if column == "number":
            if type(value) is not int:
                return None
            after.append(value)
            continue
        try:
            moment = parse_datetime(value) if isinstance(value, str) else None
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            return None
        after.append(moment)
    return ListPosition(after=tuple(after), page=page, ordering=ordering)


LIST_CURSOR_OUT = {
    "proximo_cursor": serializers.CharField(
        required=False,
        allow_null=True,
        help_text="Só no modo cursor (`cursor`): o `cursor` da próxima página; null depois da última.",
    )
}


@extend_schema_field({"type": "array", "items": {"type": "string", "pattern": NO_NUL}})
class TagsQueryField(serializers.ListField):
    """`tag`, repeatable (`?tag=a&tag=b`): tickets with all of them, each normalised as a ticket's tags are; an
    empty (or blank) one counts as absent."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.CharField(allow_blank=True, trim_whitespace=False), **kwargs)

    def to_internal_value(self, data) -> tuple:
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        given = [value for value in data if not (isinstance(value, str) and not value.strip())]
        try:
            return tuple(tags_normalize(given, field="tag"))
        except ValidationFailed as refused:
            raise serializers.ValidationError(refused.errors["tag"]) from None


class TicketPageQuery(PageQuery):
    # What every ticket list takes (the partner's and the panel's): the page or the cursor, and the filters both
    # doors have. Fields map to tickets.selectors.ticket_page's filters (source=).

    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)
    prioridade = serializers.ChoiceField(source="priority", choices=Priority.choices, required=False)
    numero = serializers.IntegerField(source="number", required=False, min_value=1, max_value=2_147_483_647)
    busca = TextField(source="search", required=False, allow_blank=True, max_length=255)
    external_id = TextField(
        required=False, allow_blank=True, max_length=255, help_text="O ticket com este `external_id` (busca exata)."
    )
    tag = TagsQueryField(
        source="tags",
        required=False,
        help_text=(
            "Só tickets com esta tag; repita o parâmetro para exigir várias (`tag=a&tag=b`: as duas). Normalizada "
            "como as tags do ticket (`Cliente VIP` procura `cliente-vip`)."
        ),
    )
    sla = serializers.ChoiceField(
        source="sla_state",
        choices=SLA_FILTERS,
        required=False,
        help_text="`violado`: tickets com uma meta de SLA violada (cumprida depois do prazo, ou com o prazo vencido "
        "e ainda devida); `em_risco`: tickets com uma meta devida que já gastou 80% do tempo, nenhuma devida vencida.",
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

    # Whose fields `campo.<chave>` names: the partner's list knows the fields partners see; the panel's, every one.
    partner_fields = True

    @classmethod
    def from_request(cls, request, organization=None) -> "TicketPageQuery":
        query = cls(data=request.query_params, context={"organization": organization})
        query.is_valid(raise_exception=True)
        return query

    def to_internal_value(self, data):
        """The declared parameters, then the custom field filters (`campo.<chave>`, `campo.<chave>__de`,
        `campo.<chave>__ate`), whose names depend on the organization's fields: every error of both in one 422."""
        errors = {}
        try:
            attrs = super().to_internal_value(data)
        except ValidationError as error:
            attrs, errors = None, dict(error.detail)
        filters, field_errors = self._field_filters(data)
        if errors or field_errors:
            raise ValidationError({**errors, **field_errors})
        attrs["custom_field_filters"] = filters
        return attrs

    def _field_filters(self, data) -> tuple[tuple, dict]:
        names = [name for name in getattr(data, "keys", lambda: ())() if name.startswith(FIELD_PARAMETER)]
        if not names:
            return (), {}
        known = fields_by_key(self.context["organization"].pk, partner=self.partner_fields)
        bounds, errors = {}, {}
        for name in names:
            text = data.get(name)
            if text in (None, ""):  # an empty parameter counts as absent
                continue
            key, bound = _field_parameter(name)
            definition = known.get(key)
            if definition is None or (self.partner_fields and not definition.is_active):
                errors[name] = ["Campo desconhecido nesta organização."]
            elif bound != "value" and definition.type not in RANGED_TYPES:
                errors[name] = ["Só campos numero e data aceitam intervalo (__de e __ate)."]
            else:
                try:
                    bounds.setdefault(key, {"definition": definition})[bound] = query_value(definition, text)
                except BadValue as problem:
                    errors[name] = [str(problem)]
        # One filter per field, its value and bounds together: one range of its index.
        filters = [FieldFilter(**values) for values in bounds.values()]
        return tuple(filters), errors

    @property
    def filters(self) -> dict:
        """What narrows the list; the order and the `incluir` blocks shape it instead."""
        return {name: value for name, value in super().filters.items() if name not in ("order", "incluir")}

    @property
    def blocks(self) -> tuple[str, ...]:
        """The `incluir` blocks asked for (the partner's list only)."""
        return self.validated_data.get("incluir", ())

    @property
    def order(self) -> str:
        """The list's order (tickets.selectors.ORDERS); newest first unless the query has `ordenacao`."""
        return self.validated_data.get("order", DEFAULT_ORDER)

    @property
    def position(self) -> ListPosition | None:
        """Where cursor mode reads from; None in page mode."""
        return self.validated_data.get("cursor")

    def validate_cursor(self, value: str) -> ListPosition:
        if value == "":
            return ListPosition(after=None, page=1)
        salt = f"{LIST_CURSOR_SALT}:{self.context['organization'].pk}"
        try:
            position = _position(signing.loads(value, salt=salt))
        except (signing.BadSignature, ValueError, TypeError, UnicodeError):
            position = None
        if position is None:
            raise serializers.ValidationError(BAD_LIST_CURSOR)
        return position

    def validate(self, attrs):
        position = attrs.get("cursor")
        order = attrs.get("order", DEFAULT_ORDER)
        if position is not None and position.ordering is not None and ORDERINGS[position.ordering] != order:
            raise serializers.ValidationError({"cursor": [OTHER_ORDER_CURSOR]})
        return attrs


FIELD_PARAMETER = "campo."
FIELD_BOUNDS = {"__de": "low", "__ate": "high"}
FIELD_FILTERS_HELP = (
    " Campos personalizados: `campo.<chave>=<valor>` só os tickets com este valor (`multilista`: que contêm esta "
    "opção; `booleano`: true ou false; `numero`: o decimal, `12.5`; `data`: AAAA-MM-DD); para `numero` e `data`, "
    "também `campo.<chave>__de` e `campo.<chave>__ate` (intervalo, extremos incluídos). Uma chave desconhecida (ou "
    "de um campo oculto ao parceiro), um valor inválido ou um intervalo em outro tipo é um 422 no parâmetro."
)


def _field_parameter(name: str) -> tuple[str, str]:
    """`campo.<chave>[__de|__ate]` as (chave, which bound of FieldFilter: value, low or high)."""
    key = name[len(FIELD_PARAMETER) :]
    for suffix, bound in FIELD_BOUNDS.items():
        if key.endswith(suffix):
            return key[: -len(suffix)], bound
    return key, "value"


class StatusCategoriesField(serializers.ListField):
    """Repeatable (`?status=aberto&status=aguardando`): any of them; an empty one counts as absent."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.ChoiceField(choices=StatusCategory.choices), **kwargs)

    def to_internal_value(self, data) -> tuple:
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        given = [value for value in data if value != ""]
        unknown = [value for value in given if value not in StatusCategory.values]
        if unknown:
            message = serializers.ChoiceField.default_error_messages["invalid_choice"]
            raise serializers.ValidationError([str(message).format(input=value) for value in unknown])
        return tuple(dict.fromkeys(given))


# An e-mail to look up: EmailTextField's rule, said by its pattern alone. Its EmailValidator would add
# `format: email` to the schema, which fuzzers read more narrowly than RFC 5321 and the validator do (a quoted
# local part at an address literal, `"a\\b"@[192.0.2.1]`, is an e-mail to both): a lookup that finds nothing
# would pass for a schema-violating value accepted.
@extend_schema_field({"type": "string", "pattern": EMAIL_PATTERN, "maxLength": 254})
class EmailLookupField(TextField):
    default_error_messages = {**TextField.default_error_messages, "email": "Informe um endereço de e-mail válido."}

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 254)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            EmailValidator()(value)
        except DjangoValidationError:
            self.fail("email")
        return value


class TicketListQuery(TicketPageQuery):
    # The partner's list: the shared fields, the lookups, status categories, time windows and the order.
    solicitante_external_id = TextField(
        source="requester_external_id",
        required=False,
        allow_blank=True,
        max_length=255,
        help_text="Os tickets do solicitante com este `external_id` (busca exata).",
    )
    solicitante_email = EmailLookupField(
        source="requester_email",
        required=False,
        help_text="Os tickets dos solicitantes com este e-mail (sem diferenciar maiúsculas).",
    )
    status = StatusCategoriesField(
        source="status_categories",
        required=False,
        help_text="Só tickets com status destas categorias; repita o parâmetro para mais de uma (qualquer delas).",
    )
    atualizado_desde = InstantField(
        source="updated_since",
        required=False,
        help_text="Só tickets com `atualizado_em` igual ou posterior a este instante (ISO 8601 com fuso).",
    )
    criado_desde = InstantField(
        source="created_since",
        required=False,
        help_text="Só tickets com `criado_em` igual ou posterior a este instante (ISO 8601 com fuso).",
    )
    criado_ate = InstantField(
        source="created_until",
        required=False,
        help_text="Só tickets com `criado_em` igual ou anterior a este instante (ISO 8601 com fuso).",
    )
    ordenacao = serializers.ChoiceField(
        source="order",
        choices=list(ORDERINGS),
        required=False,
        default=DEFAULT_ORDERING,
        help_text=(
            "A ordem da lista: `-criado_em` (padrão, do mais novo ao mais antigo), `criado_em`, `-atualizado_em`, "
            "`atualizado_em`, `numero` ou `-numero`. No modo cursor, use a mesma em todas as páginas."
        ),
    )

    incluir = BlocksField()

    def validate_ordenacao(self, value: str) -> str:
        return ORDERINGS[value]


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
    incluir = BlocksField()

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
    itens = TicketPublicWithBlocksOut(many=True, help_text="Tickets alterados, da alteração mais antiga à mais nova.")
    excluidos = DeletedTicketOut(
        many=True,
        help_text="Tickets excluídos nesta página, da exclusão mais antiga à mais nova: apague-os da cópia.",
    )
    proximo_cursor = serializers.CharField(
        help_text="Onde continuar: o `desde` da próxima chamada (agora, se `tem_mais`; mais tarde, se não)."
    )
    tem_mais = serializers.BooleanField(help_text="true quando já há mais alterações além desta página.")
