"""OpenAPI documentation of helpdesk.api.auth_views: the panel's login, refresh and logout."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors
from helpdesk.api.auth_serializers import LoginIn, RefreshIn, TokensOut

TAGS = ["Painel: autenticação"]

login_docs = extend_schema_view(
    post=extend_schema(
        operation_id="auth_login",
        tags=TAGS,
        description=(
            "Emite o token do painel (access_token de 15 minutos, refresh_token de 7 dias). Limitado por "
            "endereço do cliente e, nas tentativas erradas, por conta em cada endereço: a senha certa vinda de "
            "outro endereço continua entrando."
        ),
        auth=[],
        request=LoginIn,
        responses={
            200: envelope("LoginRealizado", TokensOut),
            **errors(
                401,
                descriptions={
                    401: "Credenciais inválidas (campo `credenciais`), a mesma resposta exista o e-mail ou não."
                },
            ),
        },
    ),
)

refresh_docs = extend_schema_view(
    post=extend_schema(
        operation_id="auth_refresh",
        tags=TAGS,
        description="Troca o refresh_token por um par novo; o usado deixa de valer.",
        auth=[],
        request=RefreshIn,
        responses={
            200: envelope("TokenRenovado", TokensOut),
            **errors(401, descriptions={401: "Token de renovação inválido, expirado ou já usado (campo `token`)."}),
        },
    ),
)

logout_docs = extend_schema_view(
    post=extend_schema(
        operation_id="auth_logout",
        tags=TAGS,
        description=(
            "Encerra a sessão: o refresh_token enviado (a credencial desta rota) deixa de valer; repetir com o "
            "mesmo token não é erro. Limitado por endereço do cliente."
        ),
        auth=[],
        request=RefreshIn,
        responses={
            200: envelope("LogoutRealizado", None),
            **errors(401, descriptions={401: "Token de renovação inválido ou expirado (campo `token`)."}),
        },
    ),
)
