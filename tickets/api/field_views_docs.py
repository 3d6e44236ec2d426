"""OpenAPI documentation of tickets.api.field_views: the organization's custom fields (panel)."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors
from tickets.api.field_serializers import CustomFieldCreateIn, CustomFieldOut, CustomFieldUpdateIn

TAGS = ["Painel: campos personalizados"]
NOT_FOUND = "Campo não encontrado nesta organização (campo `id`); um id que não é UUID responde igual."

custom_field_docs = extend_schema_view(
    list=extend_schema(
        operation_id="custom_fields_list",
        tags=TAGS,
        description="Os campos personalizados dos tickets da organização (no máximo 50), na ordem de criação.",
        responses={200: envelope("CamposListados", CustomFieldOut, many=True)},
    ),
    create=extend_schema(
        operation_id="custom_fields_create",
        tags=TAGS,
        description=(
            "Cria um campo. `chave` é única na organização e nunca muda; `opcoes` só para `lista` e `multilista`. "
            "Uma organização tem no máximo 50 campos: o 51º é um 422 no campo `campo`."
        ),
        request=CustomFieldCreateIn,
        responses={201: envelope("CampoCriado", CustomFieldOut)},
    ),
    partial_update=extend_schema(
        operation_id="custom_fields_update",
        tags=TAGS,
        description=(
            "Muda `nome`, `opcoes`, `visivel_parceiro`, `editavel_parceiro` ou `ativo`. `chave` e `tipo` não mudam "
            "(outro valor é um 422 nele). Remover uma opção que algum ticket usa é um 409 no campo `opcoes`, que diz "
            "quantos tickets a usam. Quando o campo passa a ser visto pelo parceiro ou deixa de ser (visível e ativo), "
            "os tickets com valor dele mudam na lista de alterações."
        ),
        request=CustomFieldUpdateIn,
        responses={
            200: envelope("CampoAtualizado", CustomFieldOut),
            **errors(
                404,
                409,
                descriptions={404: NOT_FOUND, 409: "Opção em uso por tickets (campo `opcoes`)."},
            ),
        },
    ),
    destroy=extend_schema(
        operation_id="custom_fields_delete",
        tags=TAGS,
        description="Exclui o campo e os valores dele em todos os tickets.",
        responses={200: envelope("CampoExcluido", None), **errors(404, descriptions={404: NOT_FOUND})},
    ),
)
