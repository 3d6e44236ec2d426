"""OpenAPI documentation of tickets.api.attachment_views: attachments' upload, lists and download."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view

from api_framework.schema import envelope, errors, page_of
from tickets.api.attachment_serializers import (
    AttachmentListQuery,
    AttachmentOut,
    AttachmentUploadIn,
    PanelAttachmentOut,
)
from tickets.api.views_docs import TICKET_NOT_FOUND

UPLOAD_DESCRIPTION = (
    "Envia um arquivo ao ticket (`multipart/form-data`, campo `arquivo`), sozinho ou com uma resposta que a "
    "organização enviou pela API (`resposta_id`). O tipo é reconhecido pelo conteúdo, nunca pelo nome ou pelo "
    "Content-Type enviado: imagens (PNG, JPEG, GIF, WebP), PDF, texto, CSV, documentos de escritório e ZIP; "
    "outro tipo é 415 no campo `arquivo`. Cada arquivo tem no máximo ANEXO_MAX_BYTES (10 MiB por padrão; acima, "
    "413 no campo `arquivo`) e um ticket guarda até ANEXOS_POR_TICKET (50 por padrão; depois, 409). Nenhum "
    "webhook é disparado."
)

ticket_attachment_docs = extend_schema_view(
    list=extend_schema(
        operation_id="v1_tickets_attachments_list",
        tags=["Parceiros v1"],
        description=(
            "Os anexos públicos do ticket (do cliente e dos atendentes; os de notas internas nunca), do mais "
            "antigo ao mais novo, cada um com um link de download válido por 30 minutos."
        ),
        parameters=[AttachmentListQuery],
        responses={
            200: envelope("AnexosListados", page_of("PaginaAnexo", AttachmentOut)),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    ),
    create=extend_schema(
        operation_id="v1_tickets_attachments_create",
        tags=["Parceiros v1"],
        description=UPLOAD_DESCRIPTION,
        request={"multipart/form-data": AttachmentUploadIn},
        responses={
            201: envelope("AnexoEnviado", AttachmentOut),
            **errors(
                400,
                403,
                404,
                409,
                413,
                415,
                422,
                descriptions={
                    400: "Multipart inválido (campo `body`): o corpo multipart/form-data não pôde ser lido, ou tem "
                    "campos ou arquivos demais.",
                    422: "Erro de validação: `arquivo` ausente, vazio, repetido ou enviado fora de multipart/form-data "
                    "(um corpo JSON, por exemplo); `resposta_id` repetido ou que não é UUID.",
                    403: "`resposta_id` é uma resposta de atendente, não enviada pela API (campo `resposta_id`).",
                    404: (
                        "Ticket não encontrado (campo `id`), ou `resposta_id` não é uma resposta deste ticket "
                        "(campo `resposta_id`)."
                    ),
                    409: (
                        "O ticket já tem ANEXOS_POR_TICKET anexos (campo `arquivo`), está fechado (campo `status`), "
                        "ou uma requisição com o mesmo Idempotency-Key está em andamento."
                    ),
                    413: "Arquivo acima de ANEXO_MAX_BYTES (campo `arquivo`), ou campos de texto acima de 1 MiB.",
                    415: "Tipo de arquivo não aceito (campo `arquivo`).",
                },
            ),
        },
    ),
)

panel_ticket_attachment_docs = extend_schema_view(
    list=extend_schema(
        operation_id="panel_tickets_attachments_list",
        tags=["Painel: tickets"],
        description=(
            "Todos os anexos do ticket, os de notas internas incluídos (`interna`), do mais antigo ao mais novo, "
            "cada um com um link de download para atendentes, válido por 30 minutos."
        ),
        parameters=[AttachmentListQuery],
        responses={
            200: envelope("AnexosDoPainelListados", page_of("PaginaAnexoDoPainel", PanelAttachmentOut)),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    ),
)

attachment_download_docs = extend_schema_view(
    retrieve=extend_schema(
        operation_id="v1_attachments_download",
        tags=["Parceiros v1"],
        description=(
            "O arquivo de um anexo, pelo `url` assinado de uma lista ou de um envio: a assinatura é a credencial. "
            "Servido como download (`Content-Disposition: attachment`), com o tipo reconhecido no envio. Com "
            "armazenamento de objetos (S3), 302 para uma URL pré-assinada de poucos minutos."
        ),
        auth=[],
        responses={
            (200, "*/*"): OpenApiResponse(
                OpenApiTypes.BINARY, description="O arquivo, com o tipo reconhecido pelo conteúdo no envio."
            ),
            302: OpenApiResponse(description="Armazenamento de objetos: o arquivo está na URL de `Location`."),
            **errors(
                403,
                404,
                descriptions={
                    403: "Link expirado ou com assinatura inválida (campo `assinatura`).",
                    404: "O anexo não existe mais (campo `anexo`).",
                },
            ),
        },
    ),
)
