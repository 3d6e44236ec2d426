"""POST /api/auth/login and /api/auth/refresh."""

from django.conf import settings
from rest_framework.permissions import AllowAny
from rest_framework_simplejwt.settings import api_settings as jwt_settings

from api_framework.base import EnvelopeAPIView
from api_framework.responses import EnvelopeResponse
from foundation.ratelimit import client_address, count_request
from helpdesk.api.auth_serializers import LoginIn, RefreshIn, TokensOut
from helpdesk.api.auth_views_docs import login_docs, logout_docs, refresh_docs
from helpdesk.auth import PanelJWTAuthentication, panel_login, panel_logout, panel_refresh
from helpdesk.login_limits import login_address_count


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


@login_docs
class LoginView(_PublicAuthView):
    def rate_limit(self, request) -> None:
        login_address_count(request)

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


@refresh_docs
class RefreshView(_RefreshTokenView):
    def post(self, request):
        payload = RefreshIn(data=request.data)
        payload.is_valid(raise_exception=True)
        user, refresh = panel_refresh(**payload.validated_data)
        return EnvelopeResponse(_tokens(user, refresh), message="Token renovado.")


@logout_docs
class LogoutView(_RefreshTokenView):
    def post(self, request):
        payload = RefreshIn(data=request.data)
        payload.is_valid(raise_exception=True)
        panel_logout(**payload.validated_data)
        return EnvelopeResponse(None, message="Logout realizado.")
