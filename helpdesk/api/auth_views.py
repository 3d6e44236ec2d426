"""POST /api/auth/login and /api/auth/refresh."""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework_simplejwt.settings import api_settings as jwt_settings

from helpdesk.api.base import EnvelopeAPIView
from helpdesk.api.fields import TextField
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors
from helpdesk.auth import (
    PanelJWTAuthentication,
    panel_login,
    panel_logout,
    panel_permissions,
    panel_refresh,
)
from helpdesk.login_limits import login_address_count
from helpdesk.ratelimit import client_address, count_request


class LoginIn(serializers.Serializer):
    email = TextField(max_length=254)
    senha = TextField(source="password", max_length=4096, trim_whitespace=False)


class RefreshIn(serializers.Serializer):
    refresh_token = TextField(source="raw_refresh_token", max_length=4096)


class PanelUserOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    email = serializers.EmailField()
    permissoes = serializers.SerializerMethodField()

    def get_permissoes(self, user) -> list[str]:
        return panel_permissions(user)


class TokensOut(serializers.Serializer):
    access_token = serializers.CharField()
    refresh_token = serializers.CharField()
    token_type = serializers.CharField()
    expires_in = serializers.IntegerField()
    usuario = PanelUserOut()


def _tokens(user, refresh) -> dict:
    return TokensOut(
        {
            "access_token": str(refresh.access_token),
            "refresh_token": str(refresh),
            "token_type": "Bearer",
            "expires_in": int(jwt_settings.ACCESS_TOKEN_LIFETIME.total_seconds()),
            "usuario": user,
        }
    ).data


class _PublicAuthView(EnvelopeAPIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get_authenticate_header(self, request):
        return PanelJWTAuthentication().authenticate_header(request)


class LoginView(_PublicAuthView):
    def rate_limit(self, request) -> None:
        login_address_count(request)

    @extend_schema(
        operation_id="auth_login",
        tags=["Painel: autenticação"],
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
    )
    def post(self, request):
        payload = LoginIn(data=request.data)
        payload.is_valid(raise_exception=True)
        user, refresh = panel_login(**payload.validated_data, request=request)
        return EnvelopeResponse(_tokens(user, refresh), message="Login realizado.")


class _RefreshTokenView(_PublicAuthView):
    """Refresh and logout take a refresh token: one budget per client address, shared by both."""

    def rate_limit(self, request) -> None:
        count_request(
            request,
            group="panel-refresh",
            rate=settings.LOGIN_RATE_LIMIT,
            key=client_address,
            policy="login",
            fail_open=settings.LOGIN_RATELIMIT_FAIL_OPEN,
        )


class RefreshView(_RefreshTokenView):
    @extend_schema(
        operation_id="auth_refresh",
        tags=["Painel: autenticação"],
        description="Troca o refresh_token por um par novo; o usado deixa de valer.",
        auth=[],
        request=RefreshIn,
        responses={
            200: envelope("TokenRenovado", TokensOut),
            **errors(401, descriptions={401: "Token de renovação inválido, expirado ou já usado (campo `token`)."}),
        },
    )
    def post(self, request):
        payload = RefreshIn(data=request.data)
        payload.is_valid(raise_exception=True)
        user, refresh = panel_refresh(**payload.validated_data)
        return EnvelopeResponse(_tokens(user, refresh), message="Token renovado.")


class LogoutView(_RefreshTokenView):
    @extend_schema(
        operation_id="auth_logout",
        tags=["Painel: autenticação"],
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
    )
    def post(self, request):
        payload = RefreshIn(data=request.data)
        payload.is_valid(raise_exception=True)
        panel_logout(**payload.validated_data)
        return EnvelopeResponse(None, message="Logout realizado.")
