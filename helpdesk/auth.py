"""Panel login with JWTs (simplejwt): login, refresh with rotation, authentication.

Tokens carry a digest of the password hash (simplejwt's revoke claim), so a
password change invalidates every token at once; the user, their organization
and their permissions are read from the database on every request.
"""

from types import SimpleNamespace

from django.db import transaction
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import AuthenticationFailed, InvalidToken, TokenError
from rest_framework_simplejwt.settings import api_settings as jwt_settings
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken
from rest_framework_simplejwt.tokens import RefreshToken, UntypedToken
from rest_framework_simplejwt.utils import get_md5_hash_password

from foundation.exceptions import AccessDenied, NotAuthenticated
from helpdesk.audit import AuditActor, audit_record
from helpdesk.login_limits import login_authenticate
from helpdesk.models import User
from helpdesk.permissions import MANAGE_PUBLIC_API, MANAGE_PUBLIC_API_PERM


class InvalidCredentials(NotAuthenticated):
    message = "Credenciais inválidas."
    field = "credenciais"
    detail = "E-mail ou senha incorretos."


class InvalidPanelToken(NotAuthenticated):
    field = "token"
    detail = "Token ausente, inválido ou expirado."


class PanelJWTAuthentication(JWTAuthentication):
    """Any token problem is the contract's 401 with field `token`."""

    www_authenticate_realm = "painel"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # simplejwt loads the user with `self.user_model.objects.get(...)`: the organization and
        # the agent profile come in that same query, not in two more.
        users = User.objects.select_related("organization", "agent")
        self.user_model = SimpleNamespace(objects=users, DoesNotExist=User.DoesNotExist)

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except (InvalidToken, AuthenticationFailed, TokenError):
            raise InvalidPanelToken()

    def get_user(self, validated_token):
        try:
            user = super().get_user(validated_token)
        except (InvalidToken, AuthenticationFailed, User.DoesNotExist, ValueError):
            raise InvalidPanelToken()
        if not organization_is_active(user):
            raise OrganizationSuspended()
        return user


class OrganizationSuspended(AccessDenied):
    field = "organizacao"
    detail = "A organização está suspensa."


def organization_is_active(user: User) -> bool:
    """Superusers have no organization; everyone else works only while theirs is active."""
    return user.organization_id is None or user.organization.is_active


def panel_permissions(user: User) -> list[str]:
    return [MANAGE_PUBLIC_API] if user.organization_id and user.has_perm(MANAGE_PUBLIC_API_PERM) else []


def panel_login(*, email: str, password: str, request=None) -> tuple[User, RefreshToken]:
    """Same answer whether the e-mail exists or not (Django's backend hashes either way)."""
    # A suspended organization's password gets the same answer: it is not confirmed.
    user = login_authenticate(request, email=email, password=password, allowed=organization_is_active)
    if user is None:
        raise InvalidCredentials()
    return user, RefreshToken.for_user(user)


def panel_refresh(*, raw_refresh_token: str) -> tuple[User, RefreshToken]:
    """Rotate: the used refresh token is blacklisted, even when two refreshes race."""
    try:
        old = RefreshToken(raw_refresh_token)
    except TokenError:
        raise InvalidPanelToken()
    user = User.objects.select_related("organization").filter(pk=old.get(jwt_settings.USER_ID_CLAIM)).first()
    if (
        user is None
        or not user.is_active
        or not organization_is_active(user)
        or old.get(jwt_settings.REVOKE_TOKEN_CLAIM) != get_md5_hash_password(user.password)
    ):
        raise InvalidPanelToken()
    with transaction.atomic():
        outstanding = OutstandingToken.objects.select_for_update().filter(jti=old[jwt_settings.JTI_CLAIM]).first()
        if outstanding is None or BlacklistedToken.objects.filter(token=outstanding).exists():
            raise InvalidPanelToken()
        BlacklistedToken.objects.create(token=outstanding)
    return user, RefreshToken.for_user(user)


def panel_logout(*, raw_refresh_token: str) -> None:
    """The refresh token can no longer be used; logging out twice is fine. Access tokens expire
    within 15 minutes (deactivating the user or changing the password revokes those at once)."""
    try:
        token = UntypedToken(raw_refresh_token)  # signature and expiry, whether blacklisted or not
    except TokenError:
        raise InvalidPanelToken()
    outstanding = OutstandingToken.objects.select_related("user").filter(jti=token.get(jwt_settings.JTI_CLAIM)).first()
    if token.get(jwt_settings.TOKEN_TYPE_CLAIM) != "refresh" or outstanding is None:
        raise InvalidPanelToken()
    with transaction.atomic():
        _, blacklisted = BlacklistedToken.objects.get_or_create(token=outstanding)
        if blacklisted and outstanding.user is not None:
            user = outstanding.user
            audit_record(
                "logout",
                organization_id=user.organization_id,
                resource_type="usuario",
                resource_id=user.pk,
                actor=AuditActor.user(user),
            )
