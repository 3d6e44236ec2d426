"""OpenAPI documentation of tickets.api.merge_views: merging duplicate tickets in the agent panel."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors
from tickets.api.merge_serializers import PanelMergeIn
from tickets.api.panel_serializers import PanelTicketOut

panel_merge_docs = extend_schema_view(
    create=extend_schema(
        operation_id="panel_tickets_merge",
        tags=["Painel: tickets"],
        description=(
            "Mescla tickets duplicados neste (o destino): as respostas públicas, notas internas e anexos de cada "
            "origem vêm para ele, na ordem do tempo e marcados com o número da origem; a descrição de cada origem "
            "entra como mensagem do cliente no instante em que ela foi aberta. Cada origem vai para o primeiro status "
            '`fechado` da organização, ganha a nota interna "Mesclado em #N" e dispara `ticket.status_alterado` e '
            "`ticket.mesclado` (`data.destino`); o destino ganha uma nota com os números mesclados. Tudo numa "
            "transação: ou tudo, ou nada. De 2 a 20 tickets no total, todos da organização."
        ),
        request=PanelMergeIn,
        responses={
            200: envelope("TicketsMesclados", PanelTicketOut),
            **errors(
                404,
                409,
                descriptions={
                    404: "Ticket não encontrado: o destino (campo `id`) ou uma origem (campo `origens`); um ticket de "
                    "outra organização responde igual a um inexistente.",
                    409: "Um dos tickets já foi mesclado em outro (`Ticket mesclado.`, campo `id` para o destino, "
                    "`origens` para uma origem), ou a organização não tem status `fechado` (campo `status`).",
                },
            ),
        },
    ),
)
