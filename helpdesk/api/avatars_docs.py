"""OpenAPI documentation of helpdesk.api.avatars: an agent's photo behind a signed URL."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view

from api_framework.schema import errors

avatar_docs = extend_schema_view(
    retrieve=extend_schema(
        operation_id="v1_agents_avatar",
        tags=["Parceiros v1"],
        description="A foto de um atendente, pela URL assinada de `avatar_url`: a assinatura é a credencial.",
        auth=[],
        responses={
            (200, "image/*"): OpenApiResponse(OpenApiTypes.BINARY, description="A imagem do avatar."),
            **errors(
                403,
                404,
                descriptions={
                    403: "URL de avatar expirada ou com assinatura inválida (campo `assinatura`).",
                    404: (
                        "O atendente não tem mais esta foto, foi desativado ou a organização está suspensa "
                        "(campo `avatar`)."
                    ),
                },
            ),
        },
    ),
)
