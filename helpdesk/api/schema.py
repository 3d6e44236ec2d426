"""OpenAPI (drf-spectacular) pieces: the envelope around every payload, the error
shapes, and the application-key security scheme."""

from drf_spectacular.drainage import set_override
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_basic_type, build_parameter_type
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers


class EnvelopeAutoSchema(AutoSchema):
    """Path ids are plain strings: a malformed id is a 404 of the resource, never a route 404."""

    def _resolve_path_parameters(self, variables):
        string = build_basic_type(OpenApiTypes.STR)
        return [build_parameter_type(name=name, schema=string, location=OpenApiParameter.PATH) for name in variables]


def envelope(name: str, data, *, many: bool = False):
    """`{success, message, data, errors}` around `data` (a serializer class, instance or None)."""
    if data is None:
        data_field = serializers.JSONField(allow_null=True, default=None)
    elif isinstance(data, serializers.BaseSerializer):
        data_field = data
    else:
        data_field = data(many=many)
    wrapper = inline_serializer(
        name=name,
        fields={
            "success": serializers.BooleanField(default=True),
            "message": serializers.CharField(),
            "data": data_field,
            "errors": serializers.ListField(child=serializers.CharField(), max_length=0),
        },
    )
    # A list action answers one envelope (with a page or an array in `data`), never an array of envelopes.
    return set_override(wrapper, "many", False)


def page_of(name: str, item_serializer):
    return inline_serializer(
        name=name,
        fields={
            "data": item_serializer(many=True),
            "total": serializers.IntegerField(),
            "por_pagina": serializers.IntegerField(),
            "pagina_atual": serializers.IntegerField(),
            "ultima_pagina": serializers.IntegerField(),
        },
    )


ErrorEnvelope = inline_serializer(
    name="Erro",
    fields={
        "success": serializers.BooleanField(default=False),
        "message": serializers.CharField(),
        "status": serializers.IntegerField(),
        "data": serializers.JSONField(allow_null=True, default=None),
        "errors": inline_serializer(
            name="ErroDetalhe", fields={"field": serializers.CharField(), "message": serializers.CharField()}
        ),
    },
)

ValidationEnvelope = inline_serializer(
    name="ErroDeValidacao",
    fields={
        "success": serializers.BooleanField(default=False),
        "message": serializers.CharField(default="Erro de validação"),
        "errors": serializers.DictField(child=serializers.ListField(child=serializers.CharField())),
    },
)


def errors(*codes: int) -> dict:
    descriptions = {
        400: "JSON inválido (campo body).",
        401: "Não autenticado.",
        403: "Acesso negado.",
        404: "Não encontrado.",
        409: "Conflito com o estado do recurso.",
        413: "Corpo da requisição acima de 1 MiB.",
        422: "Erro de validação.",
        429: "Limite de requisições excedido.",
    }
    return {
        code: OpenApiResponse(ValidationEnvelope if code == 422 else ErrorEnvelope, description=descriptions[code])
        for code in codes
    }


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "integrations.authentication.ApiKeyAuthentication"
    name = "chaveDeAplicacao"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "Chave de aplicação `hdk_live_...` como `Bearer`, ou como usuário do Basic com senha vazia.",
        }


class PanelJWTScheme(OpenApiAuthenticationExtension):
    target_class = "helpdesk.auth.PanelJWTAuthentication"
    name = "tokenDoPainel"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "access_token de POST /api/auth/login (15 minutos).",
        }
