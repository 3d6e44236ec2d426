"""OpenAPI documentation of integrations.api.event_feed: the partner's event feed."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors
from integrations.api.event_feed_serializers import EventFeedOut, EventFeedQuery

event_feed_docs = extend_schema_view(
    list=extend_schema(
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
    ),
)
