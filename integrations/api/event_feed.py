"""Partner API v1: GET /api/v1/eventos, the organization's events in order, each the body a webhook
delivery carries, whether or not a webhook subscribes."""

import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers

from helpdesk.api.fields import TextField
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors
from helpdesk.ids import parse_uuid
from integrations.api.base import PartnerViewSet
from integrations.api.event_schemas import FeedEventOut
from integrations.models import FEED_EVENTS
from integrations.scopes import Scope
from integrations.selectors import event_feed
from tickets.api.serializers import FEED_LIMIT

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


class EventFeedViewSet(PartnerViewSet):
    scopes = {"list": Scope.EVENTS_READ}

    @extend_schema(
        operation_id="v1_events_list",
        tags=["Parceiros v1"],
        description=(
            "Os eventos da organização em ordem, cada um exatamente o corpo que uma entrega de webhook leva "
            "(`id`, `evento`, `criado_em`, `data`), assine a organização um webhook ou não; o evento de teste de "
            "webhook não entra. Seguindo `proximo` até `tem_mais` ser false, nenhum evento fica de fora, mesmo com "
            "escritas simultâneas; depois, continue mais tarde com o mesmo `proximo`."
        ),
        parameters=[EventFeedQuery],
        responses={
            200: envelope("EventosListados", EventFeedOut),
            **errors(
                404,
                410,
                descriptions={
                    404: "`depois_de` (um UUID) não é um evento do feed desta organização (campo `depois_de`).",
                    410: "`depois_de` é de um evento anterior à retenção (`EVENT_RETENTION_DAYS`, 30 dias), ou "
                    "desconhecido depois que eventos da organização foram removidos (campo `depois_de`): "
                    "ressincronize pela lista de alterações e recomece o feed sem `depois_de`.",
                },
            ),
        },
    )
    def list(self, request):
        query = EventFeedQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        after = query.validated_data.get("depois_de")
        page = event_feed(
            organization=self.organization,
            after_event_id=after,
            kinds=query.validated_data.get("tipo"),
            limit=query.validated_data["limite"],
        )
        payload = {
            "itens": [json.loads(body) for _id, body, *_position in page.rows],
            "proximo": str(page.rows[-1][0]) if page.rows else (str(parse_uuid(after)) if after else None),
            "tem_mais": page.has_more,
        }
        return EnvelopeResponse(payload, message="Eventos listados.")
