"""The event feed's query and page (integrations.api.event_feed)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api_framework.fields import TextField
from foundation.ids import parse_uuid
from integrations.api.event_schemas import FeedEventOut
from integrations.models import FEED_EVENTS
from tickets.api.serializers import FEED_LIMIT, BlocksField
from tickets.payloads import TICKET_BLOCKS

FEED_CHOICES = [kind.value for kind in FEED_EVENTS]


@extend_schema_field(OpenApiTypes.UUID)
class EventIdField(TextField):
    """An event id in any UUID spelling: what is not a UUID is a 422 (DESIGN.md: malformed query values
    are validation errors); a well-formed id that is not one of the feed's events is a 404 (or a 410)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if parse_uuid(value) is None:
            raise serializers.ValidationError("Informe o `proximo` de uma resposta anterior: o id (UUID) de um evento.")
        return value


@extend_schema_field({"type": "string", "enum": FEED_CHOICES})
class FeedKindField(TextField):
    pass


class FeedKindsField(serializers.ListField):
    """Repeatable `tipo`; an unknown kind is an error on `tipo` itself, an empty one counts as absent."""

    def __init__(self, **kwargs):
        super().__init__(child=FeedKindField(), **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, list):
            data = [kind for kind in data if kind != ""]
        kinds = super().to_internal_value(data)
        unknown = [kind for kind in kinds if kind not in FEED_CHOICES]
        if unknown:
            raise serializers.ValidationError(
                [f"Tipo de evento desconhecido: {kind}. Use um de: {', '.join(FEED_CHOICES)}." for kind in unknown]
            )
        return kinds


class EventFeedQuery(serializers.Serializer):
    depois_de = EventIdField(
        required=False,
        help_text="O `proximo` da resposta anterior (o id do último evento recebido); sem ele, desde o primeiro.",
    )
    tipo = FeedKindsField(required=False, help_text="Só estes tipos de evento (repita o parâmetro para vários).")
    limite = serializers.IntegerField(required=False, default=FEED_LIMIT, min_value=1, max_value=FEED_LIMIT)
    incluir = BlocksField(
        help_text=(
            "Blocos a acrescentar ao `data.ticket` de cada evento, separados por vírgula, sem espaços: "
            f"{', '.join(TICKET_BLOCKS)}, como um webhook com a mesma configuração `incluir` os recebe. Os blocos "
            "são os do ticket quando o evento foi registrado; eventos sem `data.ticket` completo "
            "(`ticket.excluido`, `contato.anonimizado`) não mudam. Um nome desconhecido é um 422 em `incluir`."
        )
    )


class EventFeedOut(serializers.Serializer):
    itens = serializers.ListField(
        child=FeedEventOut, help_text="Os eventos, em ordem; cada um é o corpo de uma entrega de webhook."
    )
    proximo = serializers.UUIDField(
        allow_null=True,
        help_text="O `depois_de` da próxima chamada: o último evento desta página, ou o `depois_de` recebido "
        "quando a página está vazia (null sem eventos e sem `depois_de`).",
    )
    tem_mais = serializers.BooleanField(help_text="true quando já há mais eventos além desta página.")
