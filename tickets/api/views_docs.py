"""OpenAPI documentation of tickets.api.views: the partner API's tickets, replies and agents."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view

from api_framework.pagination import PageQuery
from api_framework.schema import envelope, errors, page_of
from tickets.api.field_serializers import VALUES_DESCRIPTION, VALUES_SCHEMA, CustomFieldValuesOut
from tickets.api.serializers import (
    FIELD_FILTERS_HELP,
    LIST_CURSOR_OUT,
    AgentOut,
    BlocksQuery,
    RatingIn,
    RatingOut,
    ReplyIn,
    ReplyPublicOut,
    TicketChangesOut,
    TicketChangesQuery,
    TicketCreateIn,
    TicketListQuery,
    TicketPublicWithBlocksOut,
    TicketTagsIn,
    TicketTagsOut,
)

TAGS = ["Parceiros v1"]

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 255},
    OpenApiParameter.HEADER,
    description=(
        "Torna a repetição segura: por 24 h, a mesma chave (por credencial) com o mesmo corpo devolve a primeira "
        "resposta guardada (com `Idempotent-Replayed: true`); com outro corpo, 422 no campo `Idempotency-Key`; "
        "enquanto a primeira ainda corre, 409."
    ),
)
# Shared by the partner's and the panel's ticket routes (panel_views_docs, attachment_views_docs).
TICKET_NOT_FOUND = "Ticket não encontrado (campo `id`); um id que não é UUID responde igual."
CUSTOMER_MOVE_CONFLICT = (
    "Ticket fechado (campo `status`); a organização sem status da categoria de destino (`Status indisponível.`, "
    "campo `status`); ou requisição com o mesmo Idempotency-Key em andamento."
)
CUSTOMER_MOVE_INVALID = (
    "Bloco desconhecido em `incluir` (campo `incluir`), ou `Idempotency-Key` vazio ou com mais de 255 caracteres "
    "(campo `Idempotency-Key`)."
)
REPLY_NOT_FOUND = "Ticket não encontrado (campo `id`) ou resposta não encontrada neste ticket (campo `resposta`)."

ticket_docs = extend_schema_view(
    list=extend_schema(
        operation_id="v1_tickets_list",
        tags=TAGS,
        description=(
            "Tickets da organização, do mais novo ao mais antigo (ou na `ordenacao` pedida). Os filtros se "
            "combinam: um ticket aparece só se atende a todos. `busca` procura, sem diferenciar maiúsculas, "
            "em assunto, descrição, nome e e-mail do solicitante, e no número quando é um número inteiro; "
            "`external_id`, `solicitante_external_id` e `solicitante_email` são buscas exatas pelos seus ids."
            + FIELD_FILTERS_HELP
        ),
        parameters=[TicketListQuery],
        responses={
            200: envelope(
                "TicketsListados", page_of("PaginaTicketPublico", TicketPublicWithBlocksOut, **LIST_CURSOR_OUT)
            )
        },
    ),
    create=extend_schema(
        operation_id="v1_tickets_create",
        tags=TAGS,
        description=(
            "Cria um ticket em nome do solicitante, que vira um contato da organização (reaproveitado pelo "
            "`external_id` do solicitante ou, sem ele, pelo e-mail)."
        ),
        parameters=[IDEMPOTENCY_KEY, BlocksQuery],
        request=TicketCreateIn,
        responses={
            201: OpenApiResponse(envelope("TicketCriado", TicketPublicWithBlocksOut), description="Ticket criado."),
            200: OpenApiResponse(
                envelope("TicketExistente", TicketPublicWithBlocksOut),
                description=(
                    "A organização já tem um ticket com este `external_id`: ele é devolvido, nada é criado. Se ele "
                    "foi mesclado em outro, é devolvido o ticket em que foi mesclado (a idempotência sobrevive à "
                    "mesclagem)."
                ),
            ),
            **errors(409, descriptions={409: "Requisição com o mesmo Idempotency-Key ainda em andamento."}),
        },
    ),
    changes=extend_schema(
        operation_id="v1_tickets_changes",
        tags=TAGS,
        description=(
            "Os tickets da organização alterados depois de `desde`, da alteração mais antiga à mais nova, cada um "
            "exatamente como em GET /api/v1/tickets/{id}, e os excluídos (`excluidos`). Conta como alteração o que "
            "o parceiro vê: criação, status, prioridade, resolução, uma resposta pública ou a sua edição (uma nota "
            "interna não). Seguindo `proximo_cursor` até `tem_mais` ser false, nenhum ticket alterado ou excluído "
            "fica de fora, mesmo com escritas simultâneas; um ticket pode vir mais de uma vez (fica valendo a última "
            "versão recebida). Depois, continue mais tarde com o mesmo `proximo_cursor`. Um cursor alterado ou de "
            "outra organização é um 422 no campo `desde`; um cursor mais antigo que a retenção "
            "(`EVENT_RETENTION_DAYS`, 30 dias) é um 410 no campo `desde`: ressincronize sem `desde`."
        ),
        parameters=[TicketChangesQuery],
        responses={
            200: envelope("AlteracoesListadas", TicketChangesOut),
            **errors(410, descriptions={410: "Cursor mais antigo que a retenção (campo `desde`): ressincronize."}),
        },
    ),
    retrieve=extend_schema(
        operation_id="v1_tickets_retrieve",
        tags=TAGS,
        description="Um ticket com as suas respostas públicas (notas internas nunca aparecem).",
        parameters=[BlocksQuery],
        responses={
            200: envelope("TicketEncontrado", TicketPublicWithBlocksOut),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    ),
    replies=extend_schema(
        operation_id="v1_tickets_replies_create",
        tags=TAGS,
        description=(
            "Responde como o cliente (o contato do ticket). Um ticket aguardando o cliente ou resolvido volta a "
            "aberto; num ticket fechado, 409. Num ticket mesclado em outro, 409 `Ticket mesclado.` no campo `id`, "
            "com o número e o id do ticket que recebeu a conversa na mensagem: responda nele. Nenhum webhook é "
            "disparado."
        ),
        parameters=[IDEMPOTENCY_KEY],
        request=ReplyIn,
        responses={
            201: envelope("RespostaEnviada", ReplyPublicOut),
            **errors(
                404,
                409,
                descriptions={
                    404: TICKET_NOT_FOUND,
                    409: "Ticket fechado (campo `status`), ticket mesclado em outro (`Ticket mesclado.`, campo "
                    "`id`), ou requisição com o mesmo Idempotency-Key em andamento.",
                },
            ),
        },
    ),
    resolve=extend_schema(
        operation_id="v1_tickets_resolve",
        tags=TAGS,
        description=(
            "O cliente diz que o problema foi resolvido: o ticket vai para o status padrão `resolvido` da "
            "organização e ganha `resolvido_em`. Já resolvido, nada muda (200). Não leva corpo. Nenhum evento é "
            "registrado nem webhook disparado; os atendentes veem a mudança no ticket, feita pelo cliente via API."
        ),
        parameters=[IDEMPOTENCY_KEY, BlocksQuery],
        request=None,
        responses={
            200: envelope("TicketResolvido", TicketPublicWithBlocksOut),
            **errors(
                404,
                409,
                422,
                descriptions={404: TICKET_NOT_FOUND, 409: CUSTOMER_MOVE_CONFLICT, 422: CUSTOMER_MOVE_INVALID},
            ),
        },
    ),
    reopen=extend_schema(
        operation_id="v1_tickets_reopen",
        tags=TAGS,
        description=(
            "O cliente diz que o problema voltou: um ticket `aguardando` ou `resolvido` volta ao status padrão "
            "`aberto` da organização e `resolvido_em` fica nulo. Já `aberto` ou `em_andamento`, nada muda (200). "
            "Não leva corpo. Nenhum evento é registrado nem webhook disparado."
        ),
        parameters=[IDEMPOTENCY_KEY, BlocksQuery],
        request=None,
        responses={
            200: envelope("TicketReaberto", TicketPublicWithBlocksOut),
            **errors(
                404,
                409,
                422,
                descriptions={404: TICKET_NOT_FOUND, 409: CUSTOMER_MOVE_CONFLICT, 422: CUSTOMER_MOVE_INVALID},
            ),
        },
    ),
    rating=extend_schema(
        operation_id="v1_tickets_rating_create",
        tags=TAGS,
        description=(
            "A avaliação do cliente (CSAT), colhida pelo parceiro no seu canal: `nota` de 1 a 5 e um `comentario` "
            "opcional (até 2.000 caracteres), da última resolução do ticket e do atendente que o resolveu. Aceita "
            "depois da primeira resolução (antes, 409 `Ticket ainda não resolvido.` no campo `status`). Uma por "
            "ciclo de resolução: a primeira responde 201; outra no mesmo ciclo, até 7 dias depois da primeira, a "
            "substitui (200); depois, 409 `Avaliação encerrada.` no campo `nota`. Reaberto e resolvido de novo, "
            "o ticket aceita uma nova avaliação. `incluir=avaliacao` a mostra no ticket; o serviço não envia nada "
            "ao cliente. Move `atualizado_em`; nenhum evento é registrado (sem eco)."
        ),
        parameters=[IDEMPOTENCY_KEY],
        request=RatingIn,
        responses={
            200: envelope("AvaliacaoAtualizada", RatingOut),
            201: envelope("AvaliacaoRegistrada", RatingOut),
            **errors(
                404,
                409,
                422,
                descriptions={
                    404: TICKET_NOT_FOUND,
                    409: "Ticket ainda não resolvido (campo `status`), avaliação encerrada (campo `nota`), ou "
                    "requisição com o mesmo Idempotency-Key em andamento.",
                },
            ),
        },
    ),
    fields=extend_schema(
        operation_id="v1_tickets_fields_update",
        tags=TAGS,
        description=(
            "Define ou apaga (null) campos personalizados do ticket: só as chaves enviadas mudam; `{}` não muda "
            "nada. " + VALUES_DESCRIPTION + " Um campo oculto ao parceiro responde como uma chave desconhecida. "
            "Uma mudança de campo visível move `atualizado_em` e o ticket na lista de alterações; nenhum evento é "
            "registrado (sem eco). Sem `Idempotency-Key`: repetir o PATCH chega ao mesmo estado."
        ),
        request={"application/json": {**VALUES_SCHEMA, "description": "`{chave: valor | null}`."}},
        responses={
            200: envelope("CamposAtualizados", CustomFieldValuesOut),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    ),
    tags=extend_schema(
        operation_id="v1_tickets_tags_update",
        tags=TAGS,
        description=(
            "Acrescenta e retira tags do ticket numa só operação, sob o bloqueio do ticket: dois parceiros que "
            "acrescentam tags diferentes ao mesmo tempo ficam os dois com as suas (nada de substituir a lista "
            "inteira). `adicionar` e `remover` são opcionais, mas ao menos um deve vir (senão 422 no campo "
            "`body`); uma tag nas duas listas é um 422 em `remover`. Retirar uma tag que o ticket não tem não é "
            "erro. O ticket fica com no máximo 20 tags (422 no campo `tags`). A resposta traz só as tags do ticket "
            "agora, em ordem alfabética. Uma alteração que muda as tags move `atualizado_em` e o ticket na lista "
            "de alterações; uma que não muda nada não grava nada. Nenhum evento é registrado nem webhook disparado "
            "(o parceiro já sabe o que fez)."
        ),
        parameters=[IDEMPOTENCY_KEY],
        request=TicketTagsIn,
        responses={
            200: envelope("TagsAtualizadas", TicketTagsOut),
            **errors(
                404,
                409,
                descriptions={
                    404: TICKET_NOT_FOUND,
                    409: "Requisição com o mesmo Idempotency-Key ainda em andamento.",
                },
            ),
        },
    ),
    reply=extend_schema(
        operation_id="v1_tickets_replies_update",
        tags=TAGS,
        description="Edita uma resposta enviada pela API (por qualquer chave da organização); `editado` passa a true.",
        request=ReplyIn,
        responses={
            200: envelope("RespostaAtualizada", ReplyPublicOut),
            **errors(
                403,
                404,
                descriptions={
                    403: "A resposta é de um atendente, não foi enviada pela API (campo `resposta`).",
                    404: REPLY_NOT_FOUND,
                },
            ),
        },
    ),
)

agent_docs = extend_schema_view(
    list=extend_schema(
        operation_id="v1_agents_list",
        tags=TAGS,
        description="Atendentes ativos da organização, por nome, 10 por página.",
        parameters=[PageQuery],
        responses={200: envelope("AtendentesListados", page_of("PaginaAtendente", AgentOut))},
    ),
)
