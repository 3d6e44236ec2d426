"""OpenAPI documentation of api_framework.views: the health check."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers

from api_framework.schema import ErrorEnvelope, envelope

health_docs = extend_schema_view(
    get=extend_schema(
        operation_id="health",
        tags=["Operação"],
        description="Banco de dados e broker respondem: 200; um deles fora do ar: 503 com ele em `errors.field`.",
        auth=[],
        responses={
            200: envelope(
                "Saude",
                inline_serializer(
                    name="SaudeDados",
                    fields={
                        "database": serializers.ChoiceField(choices=["ok"]),
                        "broker": serializers.ChoiceField(choices=["ok"]),
                    },
                ),
            ),
            503: OpenApiResponse(ErrorEnvelope, description="Serviço indisponível (campo `database` ou `broker`)."),
        },
    ),
)
