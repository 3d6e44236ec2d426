"""OpenAPI documentation of tickets.api.contact_views: the partner API's contacts."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors, page_of
from tickets.api.contact_serializers import ContactListQuery, ContactUpdateIn, PartnerContactOut
from tickets.api.serializers import LIST_CURSOR_OUT, TicketListQuery, TicketPublicWithBlocksOut
from tickets.api.views_docs import TAGS

CONTACT_NOT_FOUND = "Contato não encontrado (campo `id`); um id que não é UUID ou de outra organização responde igual."

contact_docs = extend_schema_view(
    list=extend_schema(
        operation_id="v1_contacts_list",
        tags=TAGS,
        description=(
            "Contatos (solicitantes) da organização, do mais novo ao mais antigo; os filtros se combinam (E). "
            "Um contato anonimizado a pedido da pessoa aparece com os valores neutros (nome `Contato anonimizado`, "
            "e-mail, telefone e external_id null)."
        ),
        parameters=[ContactListQuery],
        responses={200: envelope("ContatosListados", page_of("PaginaContato", PartnerContactOut))},
    ),
    retrieve=extend_schema(
        operation_id="v1_contacts_retrieve",
        tags=TAGS,
        description="Um contato da organização.",
        responses={
            200: envelope("ContatoEncontrado", PartnerContactOut),
            **errors(404, descriptions={404: CONTACT_NOT_FOUND}),
        },
    ),
    partial_update=extend_schema(
        operation_id="v1_contacts_update",
        tags=TAGS,
        description=(
            "Corrige os dados do contato: só os campos enviados mudam; null apaga e-mail, telefone ou external_id. "
            "Os tickets do contato passam a mostrar o novo `solicitante` e entram de novo em "
            "GET /api/v1/tickets/alteracoes; nenhum webhook é disparado. Um `external_id` que outro contato da "
            "organização já tem é um 409 no campo `external_id`; um contato anonimizado não volta a ter dados "
            "(409 no campo `id`)."
        ),
        request=ContactUpdateIn,
        responses={
            200: envelope("ContatoAtualizado", PartnerContactOut),
            **errors(
                404,
                409,
                descriptions={
                    404: CONTACT_NOT_FOUND,
                    409: (
                        "Já existe um contato com este external_id (campo `external_id`), ou o contato foi "
                        "anonimizado (campo `id`)."
                    ),
                },
            ),
        },
    ),
    tickets=extend_schema(
        operation_id="v1_contacts_tickets_list",
        tags=TAGS,
        description=(
            "Os tickets que o contato pediu, paginados e filtrados exatamente como em GET /api/v1/tickets "
            "(mesmos parâmetros, mesma ordem, modo cursor incluído)."
        ),
        parameters=[TicketListQuery],
        responses={
            200: envelope(
                "TicketsDoContatoListados",
                page_of("PaginaTicketDoContato", TicketPublicWithBlocksOut, **LIST_CURSOR_OUT),
            ),
            **errors(404, descriptions={404: CONTACT_NOT_FOUND}),
        },
    ),
)
