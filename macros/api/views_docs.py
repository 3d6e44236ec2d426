"""OpenAPI documentation of macros.api.views: the agent panel's macros."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors
from macros.api.serializers import MacroApplyIn, MacroOut
from tickets.api.panel_serializers import PanelTicketOut

TAGS = ["Painel: macros"]

macro_docs = extend_schema_view(
    list=extend_schema(
        operation_id="panel_macros_list",
        tags=TAGS,
        description=(
            "As macros (respostas prontas) da organização, por nome: a mensagem com as variáveis como escritas e as "
            "ações que aplicam. Qualquer atendente ativo as usa; quem as cria e altera é o admin."
        ),
        responses={200: envelope("MacrosListadas", MacroOut, many=True)},
    ),
)

ticket_macro_docs = extend_schema_view(
    apply=extend_schema(
        operation_id="panel_macros_apply",
        tags=TAGS,
        description=(
            "Aplica a macro ao ticket numa só transação: status, prioridade, atendente e tags como PATCH "
            "/api/tickets/{id} (os mesmos eventos, um por mudança), depois a mensagem, com as variáveis preenchidas "
            "(ou `mensagem`, o texto editado), como resposta pública (`ticket.resposta_publica`) ou nota interna. "
            "Mensagem vazia: nenhuma resposta. Responde o ticket como PATCH /api/tickets/{id}."
        ),
        request=MacroApplyIn,
        responses={
            200: envelope("MacroAplicada", PanelTicketOut),
            **errors(
                404,
                422,
                descriptions={
                    404: "Ticket não encontrado (campo `id`) ou macro não encontrada (campo `macro`).",
                    422: (
                        "`mensagem` inválida, ou a macro não pode ser aplicada (campo `macro`: o atendente que ela "
                        "atribui está inativo), ou o ticket passaria de 20 tags (campo `tags`)."
                    ),
                },
            ),
        },
    ),
)
