"""Management API shapes: API credentials and webhooks."""

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api_framework.fields import InstantField, StrictBooleanField, TextField
from api_framework.pagination import PageQuery
from integrations.models import SUBSCRIBABLE_EVENTS, DeliveryStatus, EventKind
from integrations.scopes import MAX_NETWORKS, Scope
from tickets.payloads import TICKET_BLOCKS

# Output serializers are the OpenAPI schema: `allow_null` marks what can be null, choices are
# the enums, validators on output fields only document the shape (patterns).

KEY_PREFIX_PATTERN = r"^hdk_live_[0-9A-Za-z]{3}$"
KEY_PATTERN = r"^hdk_live_[0-9A-Za-z]{40}$"
SECRET_PATTERN = r"^whsec_[0-9A-Za-z+/]{43}=$"
# https (any case), an ASCII host name or IPv4 address, an optional port (urlsplit's rules: digits,
# at most 65535, may be empty); the host must also resolve to public addresses only.
URL_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]://[A-Za-z0-9.\-]+"
    r"(:0*(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})?)?"
    r"([/?#][^\u0000]*)?$"
)
SUBSCRIBABLE_CHOICES = [event.value for event in SUBSCRIBABLE_EVENTS]


class CredentialOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    key_prefix = serializers.CharField(validators=[RegexValidator(KEY_PREFIX_PATTERN)])
    ativa = serializers.BooleanField(source="is_active")
    ultimo_uso_em = serializers.DateTimeField(source="last_used_at", allow_null=True)
    revogado_em = serializers.DateTimeField(source="revoked_at", allow_null=True)
    # Null for a key made by an operator command, or when its creator was deleted.
    criado_por = serializers.UUIDField(source="created_by_id", allow_null=True)
    criado_em = serializers.DateTimeField(source="created_at")
    escopos = serializers.ListField(
        source="scopes",
        child=serializers.ChoiceField(choices=Scope.values),
        allow_null=True,
        help_text="O que a chave pode fazer; null: tudo o que um parceiro pode, inclusive o que vier depois.",
    )
    expira_em = serializers.DateTimeField(
        source="expires_at", allow_null=True, help_text="Depois deste instante a chave é recusada como revogada."
    )
    redes_permitidas = serializers.ListField(
        source="allowed_networks",
        child=serializers.CharField(),
        allow_null=True,
        help_text="Redes (CIDR) de onde a chave pode ser usada; null: qualquer origem.",
    )


class CredentialCreatedOut(CredentialOut):
    chave = serializers.CharField(source="full_key", validators=[RegexValidator(KEY_PATTERN)])


@extend_schema_field({"type": "string", "enum": Scope.values})
class ScopeField(TextField):
    """A scope's name; an unknown one is refused by the service, which names it (integrations.scopes)."""

    def __init__(self, **kwargs):
        super().__init__(max_length=50, **kwargs)


class CredentialCreateIn(serializers.Serializer):
    nome = TextField(source="name", max_length=100)
    escopos = serializers.ListField(
        source="scopes",
        child=ScopeField(),
        required=False,
        allow_empty=False,
        min_length=1,
        max_length=len(Scope.values),
        help_text=f"Escopos da chave, entre {', '.join(Scope.values)}; omitido: todos.",
    )
    expira_em = InstantField(
        source="expires_at", required=False, help_text="ISO 8601 com fuso, no futuro; omitido: não expira."
    )
    redes_permitidas = serializers.ListField(
        source="allowed_networks",
        child=TextField(max_length=64),
        required=False,
        allow_empty=False,
        min_length=1,
        max_length=MAX_NETWORKS,
        help_text="Redes de origem permitidas, em CIDR (203.0.113.0/24, 2001:db8::/48); omitido: qualquer origem.",
    )


class WebhookOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    url = serializers.CharField()
    eventos = serializers.ListField(source="events", child=serializers.ChoiceField(choices=SUBSCRIBABLE_CHOICES))
    incluir = serializers.ListField(
        source="blocks",
        child=serializers.ChoiceField(choices=list(TICKET_BLOCKS)),
        help_text="Blocos que as entregas acrescentam ao `data.ticket` (como `incluir` em GET /api/v1/tickets).",
    )
    ativo = serializers.BooleanField(source="is_active")
    criado_em = serializers.DateTimeField(source="created_at")
    atualizado_em = serializers.DateTimeField(source="updated_at")
    desativado_em = serializers.DateTimeField(
        source="deactivated_at", allow_null=True, help_text="Quando foi desativado; null quando ativo."
    )
    motivo_desativacao = serializers.SerializerMethodField(help_text="Por que foi desativado; null quando ativo.")

    @extend_schema_field({"type": "string", "nullable": True})
    def get_motivo_desativacao(self, webhook) -> str | None:
        return webhook.deactivation_reason or None


class WebhookWithSecretOut(WebhookOut):
    segredo = serializers.CharField(
        source="secret",
        validators=[RegexValidator(SECRET_PATTERN)],
        help_text="Segredo HMAC das entregas; exibido só nesta resposta.",
    )


class WebhookUpdatedOut(WebhookOut):
    # The schema of PATCH /api/webhooks/{id}, which renders WebhookOut or, after a regeneration, WebhookWithSecretOut.
    segredo = serializers.CharField(
        source="secret",
        required=False,
        validators=[RegexValidator(SECRET_PATTERN)],
        help_text="Presente só quando `regenerar_segredo` foi true: o novo segredo, exibido só nesta resposta.",
    )


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": 2048,
        "pattern": URL_PATTERN,
        "description": (
            "URL https, sem usuário e senha, de um host que resolva só para endereços públicos (verificado ao "
            "salvar e antes de cada entrega). Espaços nas pontas são removidos."
        ),
    }
)
class WebhookUrlField(TextField):
    pass


@extend_schema_field({"type": "string", "enum": SUBSCRIBABLE_CHOICES})
class EventNameField(TextField):
    pass


def _event_list(**kwargs) -> serializers.ListField:
    # min_length=1 only documents minItems: allow_empty=False refuses [] first, with its own message.
    return serializers.ListField(
        source="events",
        child=EventNameField(max_length=100),
        allow_empty=False,
        min_length=1,
        max_length=20,
        help_text="Eventos assinados (repetidos contam uma vez).",
        **kwargs,
    )


@extend_schema_field({"type": "string", "enum": list(TICKET_BLOCKS)})
class BlockNameField(TextField):
    pass


def _block_list(**kwargs) -> serializers.ListField:
    return serializers.ListField(
        source="blocks",
        child=BlockNameField(max_length=100),
        required=False,
        max_length=20,
        help_text=(
            f"Blocos que as entregas deste webhook acrescentam ao `data.ticket`, entre {', '.join(TICKET_BLOCKS)} "
            "(como `incluir` em GET /api/v1/tickets; repetidos contam uma vez); [] para nenhum. Os blocos são "
            "lidos quando o evento é registrado: toda tentativa de uma entrega leva os mesmos bytes."
        ),
        **kwargs,
    )


class WebhookCreateIn(serializers.Serializer):
    # Fields map to webhook_create's arguments (source=).
    nome = TextField(source="name", max_length=100)
    url = WebhookUrlField(max_length=2048)
    eventos = _event_list()
    incluir = _block_list()


class WebhookUpdateIn(serializers.Serializer):
    # Fields map to webhook_update's arguments (source=); absent fields stay as they are.
    nome = TextField(source="name", max_length=100, required=False)
    url = WebhookUrlField(max_length=2048, required=False)
    eventos = _event_list(required=False)
    ativo = StrictBooleanField(source="is_active", required=False)
    incluir = _block_list()
    regenerar_segredo = StrictBooleanField(
        source="regenerate_secret",
        required=False,
        default=False,
        help_text="true gera um novo segredo, devolvido uma única vez em `segredo`; o anterior assina junto por 24 h.",
    )


class DeliveryListQuery(PageQuery):
    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)


class DeliveryAttemptOut(serializers.Serializer):
    tentativa = serializers.IntegerField(source="number", min_value=1)
    enviada_em = serializers.DateTimeField(source="attempted_at")
    status_code = serializers.IntegerField(allow_null=True, help_text="null quando não houve resposta HTTP.")
    duracao_ms = serializers.IntegerField(source="duration_ms", min_value=0)
    erro = serializers.CharField(
        source="error",
        allow_blank=True,
        help_text="Vazio no sucesso; senão a classe da falha: `http_<código>` (resposta fora de 2xx, "
        "redirecionamentos incluídos), `timeout`, `conexao_recusada`, `dns`, `tls`, `conexao`, "
        "`endereco_bloqueado` ou `erro_interno`. Nunca o texto do erro.",
    )
    resposta = serializers.CharField(source="response_excerpt", allow_blank=True)
    sucesso = serializers.BooleanField(source="succeeded")


class DeliveryOut(serializers.Serializer):
    id = serializers.UUIDField()
    evento = serializers.ChoiceField(source="event.kind", choices=EventKind.choices)
    evento_id = serializers.UUIDField(source="event_id")
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    tentativas = serializers.IntegerField(source="attempt_count", min_value=0)
    proxima_tentativa_em = serializers.SerializerMethodField()
    ultima_tentativa_em = serializers.DateTimeField(source="last_attempt_at", allow_null=True)
    criado_em = serializers.DateTimeField(source="created_at")
    historico = DeliveryAttemptOut(source="attempts", many=True)

    @extend_schema_field({"type": "string", "format": "date-time", "nullable": True})
    def get_proxima_tentativa_em(self, delivery) -> str | None:
        # Only a scheduled retry is news; the requeue guard of a fresh delivery is not.
        if delivery.status != DeliveryStatus.PENDING or delivery.attempt_count == 0 or delivery.next_attempt_at is None:
            return None
        return serializers.DateTimeField().to_representation(delivery.next_attempt_at)
