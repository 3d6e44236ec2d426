"""OpenAPI documentation of tickets.api.panel_views: the agent panel's tickets, replies and statuses."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors, page_of
from tickets.api.attachment_serializers import PanelReplyUploadIn
from tickets.api.panel_serializers import (
    PanelReplyEditIn,
    PanelReplyIn,
    PanelReplyOut,
    PanelReplyWithAttachmentsOut,
    PanelStatusOut,
    PanelTagOut,
    PanelTicketBulkIn,
    PanelTicketBulkOut,
    PanelTicketCreateIn,
    PanelTicketListQuery,
    PanelTicketOut,
    PanelTicketUpdateIn,
)
from tickets.api.serializers import LIST_CURSOR_OUT
from tickets.api.views_docs import REPLY_NOT_FOUND, TICKET_NOT_FOUND

TAGS = ["Painel: tickets"]
CANNOT_DELETE = "O usuário não tem a permissão de excluir tickets (campo `permissao`)."

panel_ticket_docs = extend_schema_view(
    list=extend_schema(
        operation_id="panel_tickets_list",
        tags=TAGS,
        description="Tickets da organização, com notas internas (`interna`), do mais novo ao mais antigo.",
        parameters=[PanelTicketListQuery],
        responses={
            200: envelope("TicketsDoPainelListados", page_of("PaginaTicketDoPainel", PanelTicketOut, **LIST_CURSOR_OUT))
        },
    ),
    create=extend_schema(
        operation_id="panel_tickets_create",
        tags=TAGS,
        description=(
            "Abre um ticket em nome de um solicitante (reaproveitado pelo `external_id` ou, sem ele, pelo e-mail, como "
            "na API de parceiros), com `canal_origem` `painel`. Dispara `ticket.criado` e, com `atendente_id`, "
            "`ticket.atribuido`."
        ),
        request=PanelTicketCreateIn,
        responses={
            201: envelope("TicketDoPainelCriado", PanelTicketOut),
            **errors(404, descriptions={404: "Atendente não encontrado (campo `atendente_id`)."}),
        },
    ),
    retrieve=extend_schema(
        operation_id="panel_tickets_retrieve",
        tags=TAGS,
        description="Um ticket com toda a conversa, notas internas incluídas.",
        responses={
            200: envelope("TicketDoPainel", PanelTicketOut),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    ),
    bulk=extend_schema(
        operation_id="panel_tickets_bulk_update",
        tags=TAGS,
        description=(
            "Muda de uma vez status, prioridade, atendente e tags de até 500 tickets, cada um pelo mesmo caminho de "
            "PATCH /api/tickets/{id} e com os mesmos eventos, um ticket por vez: um recusado não desfaz os outros. "
            "Um id inexistente ou de outra organização vai para `ignorados` com `motivo` `Ticket não encontrado.`; "
            "um ticket fechado também fica de fora (abra-o pela sua página), e um que passaria do limite de tags. "
            "Um status ou atendente fora da organização recusa o pedido inteiro (404 no campo). Aceita "
            "`Idempotency-Key`."
        ),
        request=PanelTicketBulkIn,
        responses={
            200: envelope("TicketsAtualizadosEmLote", PanelTicketBulkOut),
            **errors(
                404,
                descriptions={
                    404: "Status não encontrado (campo `status_id`) ou atendente não encontrado (`atendente_id`)."
                },
            ),
        },
    ),
    partial_update=extend_schema(
        operation_id="panel_tickets_update",
        tags=TAGS,
        description=(
            "Muda status, atendente, prioridade e tags; campos ausentes ficam como estão e `atendente_id: null` tira "
            "o atendente. Entrar num status resolvido dispara `ticket.resolvido`. `tags` acrescenta e retira tags "
            "como PATCH /api/v1/tickets/{id}/tags (ao menos uma das listas; no máximo 20 tags por ticket, 422 no "
            "campo `tags`) e dispara `ticket.tags_alteradas` quando elas mudam."
        ),
        request=PanelTicketUpdateIn,
        responses={
            200: envelope("TicketAtualizado", PanelTicketOut),
            **errors(
                404,
                descriptions={
                    404: (
                        "Ticket não encontrado (campo `id`), status não encontrado (campo `status_id`) ou "
                        "atendente não encontrado (campo `atendente_id`)."
                    )
                },
            ),
        },
    ),
    destroy=extend_schema(
        operation_id="panel_tickets_destroy",
        tags=TAGS,
        description=(
            "Exclui o ticket, com as suas respostas, notas e anexos. Exige a permissão de excluir tickets "
            "(`tickets.delete_ticket`, do grupo Suporte, a mesma do admin); sem ela, 403 no campo `permissao`. "
            "Dispara `ticket.excluido`, e o ticket passa a vir em `excluidos` da lista de alterações."
        ),
        request=None,
        responses={
            200: envelope("TicketExcluido", None),
            **errors(403, 404, descriptions={403: CANNOT_DELETE, 404: TICKET_NOT_FOUND}),
        },
    ),
    replies=extend_schema(
        operation_id="panel_replies_create",
        tags=TAGS,
        description=(
            "Resposta pública (dispara `ticket.resposta_publica`) ou nota interna (`interna: true`). Em "
            "`multipart/form-data`, com arquivos no campo `arquivo` (repetível, até 10): a resposta e os arquivos "
            "ficam juntos ou nenhum fica, e a resposta devolvida traz `anexos`. Cada arquivo de uma resposta "
            "pública dispara `ticket.anexo_adicionado`; os de uma nota interna nunca saem para o parceiro."
        ),
        request={"application/json": PanelReplyIn, "multipart/form-data": PanelReplyUploadIn},
        responses={
            201: envelope("RespostaDoAtendenteEnviada", PanelReplyWithAttachmentsOut),
            **errors(
                404,
                409,
                413,
                415,
                descriptions={
                    404: TICKET_NOT_FOUND,
                    409: "Os arquivos passariam de ANEXOS_POR_TICKET anexos no ticket (campo `arquivo`).",
                    413: "Um arquivo acima de ANEXO_MAX_BYTES (campo `arquivo`), ou um corpo JSON acima de 1 MiB.",
                    415: "Corpo que não é JSON nem multipart/form-data (campo `Content-Type`), ou tipo de arquivo não "
                    "aceito (campo `arquivo`).",
                },
            ),
        },
    ),
    reply=extend_schema(
        operation_id="panel_replies_update",
        tags=TAGS,
        description=(
            "Edita uma resposta ou nota do próprio atendente; um texto diferente dispara `ticket.resposta_editada`."
        ),
        request=PanelReplyEditIn,
        responses={
            200: envelope("RespostaDoAtendenteAtualizada", PanelReplyOut),
            **errors(
                403,
                404,
                descriptions={
                    403: "A resposta não é do atendente (campo `resposta`).",
                    404: REPLY_NOT_FOUND,
                },
            ),
        },
    ),
)

panel_tag_docs = extend_schema_view(
    list=extend_schema(
        operation_id="panel_tags_list",
        tags=TAGS,
        description=(
            "As tags dos tickets da organização, cada uma com quantos tickets a têm, em ordem alfabética (por ponto "
            "de código). Só as tags de algum ticket aparecem."
        ),
        responses={200: envelope("TagsListadas", PanelTagOut, many=True)},
    ),
)

panel_status_docs = extend_schema_view(
    list=extend_schema(
        operation_id="panel_statuses_list",
        tags=TAGS,
        description="Os status de ticket da organização.",
        responses={200: envelope("StatusListados", PanelStatusOut, many=True)},
    ),
)
