"""OpenAPI (drf-spectacular) pieces: the envelope around every payload, the error
shapes, the answers every door gives (401, 403, 429, 400/413/415/422 for bodies),
their headers, text-field rules, and the application-key security scheme.

The schema describes what the service answers, status codes included: the
contract fuzzing (tests/fuzz) checks every response against it.
"""

import copy

from drf_spectacular.drainage import set_override
from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_basic_type, build_parameter_type, force_instance, is_serializer
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema_field, inline_serializer
from rest_framework import serializers

from api_framework.fields import EmailTextField

# What str.strip() removes (str.isspace), spelled out so the pattern means the same in every regex dialect.
WHITESPACE = r"\t\n\u000b\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NO_NUL = r"^[^\u0000]*$"
NOT_BLANK_NO_NUL = rf"^[^\u0000]*[^\u0000{WHITESPACE}][^\u0000]*$"

# Django's EmailValidator (api_framework.fields.EmailTextField) without look-arounds or flags: a
# dot-atom or quoted local part; a host name whose last label is 2+ letters (or an xn-- label),
# `localhost`, or an IPv4 literal. (It also takes IPv6 literals, which the pattern leaves out.)
# Its case-insensitive [a-z] also matches İ, ı, ſ and the Kelvin sign: _CASELESS.
_CASELESS = r"0-9A-Za-z\u0130\u0131\u017f\u212a"
_ATOM = rf"[-!#$%&'*+/=?^_`{{}}|~{_CASELESS}]+"
_QUOTED = r'"([\u0001-\u0008\u000b\u000c\u000e-\u001f!#-\[\]-\u007f]|\\[\u0001-\u0009\u000b\u000c\u000e-\u007f])*"'
_LABEL = r"[0-9A-Za-z\u00a1-\uffff]([-0-9A-Za-z\u00a1-\uffff]{0,61}[0-9A-Za-z\u00a1-\uffff])?"
_TLD = rf"([A-Za-z\u00a1-\uffff][-A-Za-z\u00a1-\uffff]{{0,61}}[A-Za-z\u00a1-\uffff]|[Xx][Nn]--[{_CASELESS}]{{1,59}})"
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
EMAIL_PATTERN = (
    rf"^({_ATOM}(\.{_ATOM})*|{_QUOTED})@({_LABEL}(\.{_LABEL})*\.{_TLD}|localhost|\[{_OCTET}(\.{_OCTET}){{3}}\])$"
)

TRIMMED_TEXT = (
    "Espaços nas pontas são removidos antes da validação (os limites de tamanho valem para o texto sem eles); "
    "texto com o caractere NUL (U+0000) ou com surrogates UTF-16 isolados é recusado (422)."
)
RAW_TEXT = "Usado como enviado; texto com o caractere NUL (U+0000) ou com surrogates UTF-16 isolados é recusado (422)."


class EnvelopeAutoSchema(AutoSchema):
    """Path ids are plain strings (a malformed id is a 404 of the resource, never a route 404);
    every operation also documents the answers its door gives whatever the resource."""

    # Private drf-spectacular API: test_path_ids_are_plain_strings
    def _resolve_path_parameters(self, variables):
        string = build_basic_type(OpenApiTypes.STR)
        return [build_parameter_type(name=name, schema=string, location=OpenApiParameter.PATH) for name in variables]

    def get_description(self):
        # Docstrings of views are for developers; descriptions come from the views' docs modules.
        return None

    # Private drf-spectacular API: test_every_patch_body_is_required_and_an_empty_one_is_a_documented_400
    def _get_request_for_media_type(self, serializer, direction="request"):
        # The input serializers are never partial, PATCH included: their optional fields say so
        # themselves (a reply edit requires `mensagem`). A body is always a JSON object: an empty
        # body is a 400, so the request body is required even when every field is optional.
        serializer = force_instance(serializer)
        if is_serializer(serializer):
            component = self.resolve_serializer(serializer, direction)
            return (component.ref, True) if component else (None, False)
        if isinstance(serializer, dict):  # a raw schema (a body of dynamic keys: a ticket's custom fields)
            return serializer, True
        return super()._get_request_for_media_type(serializer, direction)

    # Private drf-spectacular API: test_optional_query_parameters_allow_an_empty_value
    def _get_parameters(self):
        parameters = super()._get_parameters()
        for parameter in parameters:
            # An empty query value (?prioridade=) counts as absent.
            if parameter["in"] == "query" and not parameter.get("required"):
                parameter["allowEmptyValue"] = True
        return parameters

    # Private drf-spectacular API: test_every_answer_has_a_description
    def _get_response_bodies(self, direction="response"):
        # Not get_response_serializers: @extend_schema(responses=...) replaces that method.
        responses = super()._get_response_bodies(direction)
        for code, answer in self._door_errors().items():
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(answer, str(code), direction=direction)
        for response in responses.values():
            response["description"] = response.get("description") or "Sucesso."
        return dict(sorted(responses.items()))

    # Private drf-spectacular API: test_a_text_that_may_be_blank_has_one_pattern_not_a_one_of
    def _insert_field_validators(self, field, schema):
        super()._insert_field_validators(field, schema)
        # An e-mail's rule is EMAIL_PATTERN (Django's EmailValidator). drf-spectacular also writes
        # `format: email`, which validators check by rules of their own: schemathesis refuses a quoted
        # local part with a control character that Django accepts, and took the 200 for a bug.
        for branch in (schema, *schema.get("oneOf", ())):
            if branch.get("pattern") == EMAIL_PATTERN and branch.get("format") == "email":
                branch.pop("format")
        # drf-spectacular offers "" beside any patterned text that may be blank; NO_NUL admits ""
        # already, and `oneOf` would then refuse "" for matching both.
        branches = schema.get("oneOf")
        if branches and branches[0].get("pattern") == NO_NUL and "format" not in branches[0]:
            schema.pop("oneOf")
            schema.update(branches[0])

    def _door(self) -> str | None:
        field = getattr(self.view, "auth_error_field", None)
        if field == "api_key":
            return "partner"
        if field == "token":
            return "panel"
        from api_framework.base import EnvelopeViewMixin

        if type(self.view).rate_limit is not EnvelopeViewMixin.rate_limit:
            return "login"  # public, limited per client address: login, refresh, logout
        return None

    def _takes_body(self) -> bool:
        return self.method in ("POST", "PATCH", "PUT") and self.get_request_serializer() is not None

    def _door_errors(self) -> dict:
        door = self._door()
        # Any operation: a request line past the web server's limit, and a database that is down.
        codes = errors(414, 503)
        if self._takes_body():
            codes.update(errors(400, 413, 415, 422))
        # Private drf-spectacular API: test_a_422_is_documented_where_a_query_string_or_a_body_is_read
        if any(parameter["in"] == "query" for parameter in super()._get_parameters()):
            codes.update(errors(422))
        if "{" in self.path:
            codes.update(errors(404))
        if door == "partner":
            codes.update(errors(401, 429, descriptions={401: PARTNER_401}))
        elif door == "panel":
            codes.update(errors(401, 403, 429, descriptions={401: PANEL_401, 403: _panel_403(self.view)}))
        elif door == "login":
            codes.update(errors(429))
        return codes

    # Private drf-spectacular API: test_every_429_and_503_promises_the_retry_after_the_service_sends
    def _get_response_headers_for_code(self, status_code, direction="response"):
        headers = super()._get_response_headers_for_code(status_code, direction)
        door = self._door()
        names = []
        if status_code == "401" and door is not None:
            names.append("WWW-Authenticate" if door == "partner" else "WWW-Authenticate-Painel")
        if status_code in ("429", "503"):
            names.append("Retry-After")
        if door == "partner" and status_code != "401":
            # Present on every answer to a request with a valid key, unless the rate-limit cache is
            # down (the limiter fails open): documented, not required.
            names += [
                "X-RateLimit-Limit",
                "X-RateLimit-Remaining",
                "X-RateLimit-Reset",
                "RateLimit-Policy",
                "RateLimit",
            ]
            idempotent = self.method == "POST" or self.view.action in getattr(self.view, "idempotent_patches", ())
            if idempotent and status_code != "429":
                names.append("Idempotent-Replayed")
        for name in names:
            headers[name.removesuffix("-Painel")] = {"$ref": f"#/components/headers/{name}"}
        return headers


HEADERS = {
    "WWW-Authenticate": {"schema": {"type": "string", "enum": ['Bearer realm="api"']}, "required": True},
    "WWW-Authenticate-Painel": {"schema": {"type": "string", "enum": ['Bearer realm="painel"']}, "required": True},
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 1},
        "required": True,
        "description": "Segundos a esperar antes de tentar de novo: até a janela do limite recomeçar (429), "
        "ou o banco de dados voltar a responder (503).",
    },
    "X-RateLimit-Limit": {
        "schema": {"type": "integer", "minimum": 0},
        "description": "Requisições permitidas por janela para esta chave.",
    },
    "X-RateLimit-Remaining": {
        "schema": {"type": "integer", "minimum": 0},
        "description": "Requisições que restam na janela atual.",
    },
    "X-RateLimit-Reset": {
        "schema": {"type": "integer", "minimum": 0},
        "description": "Instante (Unix, em segundos) em que a janela atual termina.",
    },
    "RateLimit-Policy": {
        "schema": {"type": "string"},
        "description": 'Política do limite (draft IETF), por exemplo `"parceiro";q=120;w=60`.',
    },
    "RateLimit": {
        "schema": {"type": "string"},
        "description": 'Estado do limite (draft IETF), por exemplo `"parceiro";r=119;t=42`.',
    },
    "Idempotent-Replayed": {
        "schema": {"type": "string", "enum": ["true"]},
        "description": "Presente quando a resposta é a guardada para o Idempotency-Key, repetida.",
    },
}

PARTNER_401 = "Não autenticado: chave ausente, inválida ou revogada (campo `api_key`)."
PANEL_401 = "Não autenticado: token ausente, inválido ou expirado (campo `token`)."


def _panel_403(view) -> str:
    from helpdesk.api.panel import CanManagePublicApi

    if CanManagePublicApi in view.permission_classes:
        return "Acesso negado: o usuário não tem a permissão `api_publica:gerenciar` (campo `permissao`)."
    return "Acesso negado: o usuário não é um atendente ativo da organização (campo `permissao`)."


# --- the envelope -----------------------------------------------------------

NULL_ONLY = "x-null-only"


def postprocess(result, generator, request, public):
    """After drf-spectacular's enum hook: null-only values (`data` of an error) as `enum: [null]`,
    and the response headers the operations refer to."""
    for component in result.get("components", {}).get("schemas", {}).values():
        for prop in component.get("properties", {}).values():
            if prop.pop(NULL_ONLY, False):
                prop["enum"] = [None]
    result.setdefault("components", {})["headers"] = copy.deepcopy(HEADERS)
    return result


@extend_schema_field({"type": "boolean", "enum": [True]})
class _SuccessTrue(serializers.BooleanField):
    pass


@extend_schema_field({"type": "boolean", "enum": [False]})
class _SuccessFalse(serializers.BooleanField):
    pass


@extend_schema_field({"type": "array", "items": {"type": "string"}, "maxItems": 0, "description": "Sempre vazio."})
class _NoErrors(serializers.ListField):
    pass


# `enum: [null]` is written by `postprocess` below: the enum hook would strip null out of it.
@extend_schema_field({"nullable": True, NULL_ONLY: True})
class _NullData(serializers.JSONField):
    pass


@extend_schema_field({"type": "string", "enum": ["Erro de validação"]})
class _ValidationMessage(serializers.CharField):
    pass


@extend_schema_field(
    {
        "type": "object",
        "description": "Cada campo inválido (aninhados com ponto, como `solicitante.nome`) e suas mensagens.",
        "minProperties": 1,
        "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    }
)
class _FieldErrors(serializers.DictField):
    pass


def envelope(name: str, data, *, many: bool = False):
    """`{success, message, data, errors}` around `data` (a serializer class, instance or None)."""
    if data is None:
        data_field = _NullData()
    elif isinstance(data, serializers.BaseSerializer):
        data_field = data
    else:
        data_field = data(many=many)
    wrapper = inline_serializer(
        name=name,
        fields={
            "success": _SuccessTrue(),
            "message": serializers.CharField(),
            "data": data_field,
            "errors": _NoErrors(),
        },
    )
    # A list action answers one envelope (with a page or an array in `data`), never an array of envelopes.
    return set_override(wrapper, "many", False)


def page_of(name: str, item_serializer, **more_fields):
    """The paginated shape; `more_fields` are optional members some calls add (the list's cursor mode)."""
    return inline_serializer(
        name=name,
        fields={
            "data": item_serializer(many=True),
            "total": serializers.IntegerField(min_value=0),
            "por_pagina": serializers.IntegerField(min_value=1),
            "pagina_atual": serializers.IntegerField(min_value=1),
            "ultima_pagina": serializers.IntegerField(min_value=1),
            **more_fields,
        },
    )


ErrorEnvelope = inline_serializer(
    name="Erro",
    fields={
        "success": _SuccessFalse(),
        "message": serializers.CharField(),
        "status": serializers.IntegerField(min_value=400, max_value=599, help_text="O código HTTP da resposta."),
        "data": _NullData(),
        "errors": inline_serializer(
            name="ErroDetalhe",
            fields={
                "field": serializers.CharField(help_text="O campo, parâmetro ou cabeçalho em causa."),
                "message": serializers.CharField(),
            },
        ),
    },
)

ValidationEnvelope = inline_serializer(
    name="ErroDeValidacao",
    fields={
        "success": _SuccessFalse(),
        "message": _ValidationMessage(),
        "errors": _FieldErrors(),
    },
)

ERROR_DESCRIPTIONS = {
    400: "JSON inválido: corpo vazio, malformado, fora de UTF-8 ou que não é um objeto (campo `body`).",
    401: "Não autenticado.",
    403: "Acesso negado.",
    404: "Não encontrado (um id de outra organização responde como um id inexistente).",
    409: "Conflito com o estado do recurso.",
    410: "Recurso removido.",
    413: "Corpo da requisição acima de 1 MiB (campo `body`).",
    415: "Content-Type diferente de application/json (campo `Content-Type`).",
    422: "Erro de validação: cada campo inválido com suas mensagens.",
    429: "Limite de requisições excedido (campo `rate_limit`); veja Retry-After.",
    414: "Linha da requisição (endereço e query string) acima do limite do servidor (campo `path`).",
    503: "Serviço indisponível: o banco de dados não responde (campo `database`); veja Retry-After.",
}


def errors(*codes: int, descriptions: dict[int, str] | None = None) -> dict:
    """Error answers for `codes`, in the error envelope (422: the validation envelope)."""
    descriptions = {**ERROR_DESCRIPTIONS, **(descriptions or {})}
    return {
        code: OpenApiResponse(ValidationEnvelope if code == 422 else ErrorEnvelope, description=descriptions[code])
        for code in codes
    }


# --- compositions -----------------------------------------------------------


class AllOfBases(serializers.Serializer):
    """A serializer made of other serializers (its bases after this one): it renders their fields
    together, and the schema describes it as `allOf` their components, each part documented once (a
    resource and the optional blocks a client may ask for)."""


class AllOfBasesExtension(OpenApiSerializerExtension):
    target_class = "api_framework.schema.AllOfBases"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        composed = self.target if isinstance(self.target, type) else type(self.target)
        parts = [base for base in composed.__bases__ if base is not AllOfBases]
        schema = {"allOf": [auto_schema.resolve_serializer(part, direction).ref for part in parts]}
        if composed.__doc__:
            schema["description"] = composed.__doc__.strip()
        return schema


# --- text fields ------------------------------------------------------------


class TextFieldExtension(OpenApiSerializerFieldExtension):
    """TextField's rules, as far as OpenAPI can say them: trimmed, no NUL, not blank unless allowed."""

    target_class = "api_framework.fields.TextField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        # Private drf-spectacular API: test_text_with_nul_is_refused_by_the_schema_and_by_the_service
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        field = self.target
        blank_refused = not field.allow_blank and field.trim_whitespace
        schema["pattern"] = NOT_BLANK_NO_NUL if blank_refused else NO_NUL
        if isinstance(field, EmailTextField):
            schema["pattern"] = EMAIL_PATTERN  # checked on the trimmed text; "" is its own branch when allowed
        schema.setdefault("description", TRIMMED_TEXT if field.trim_whitespace else RAW_TEXT)
        return schema


# --- security schemes -------------------------------------------------------


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
