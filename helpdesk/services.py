"""Writes on organizations, users and agents."""

from django.conf import settings
from django.contrib.auth.models import Permission
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files import File
from django.db import IntegrityError, transaction
from PIL import Image, UnidentifiedImageError
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken

from helpdesk.actors import SYSTEM, Actor
from helpdesk.exceptions import ValidationFailed
from helpdesk.models import Agent, Organization, User
from helpdesk.permissions import MANAGE_PUBLIC_API_CODENAME, support_group_ensure
from helpdesk.signals import agent_renamed


def organization_create(*, name: str, admin_email: str, admin_password: str) -> tuple[Organization, User]:
    """An organization ready to work: an admin who manages the public API, works in the
    admin (staff) and answers tickets (agent). Its ticket statuses come with it (tickets.lifecycle)."""
    with transaction.atomic():
        organization = Organization.objects.create(name=name)
        agent = agent_create(
            organization=organization, name=f"Administrador {name}"[:150], email=admin_email, password=admin_password
        )
        user = agent.user
        user.is_staff = True
        user.save(update_fields=["is_staff"])
        user.user_permissions.add(Permission.objects.get(codename=MANAGE_PUBLIC_API_CODENAME))
        user.groups.add(support_group_ensure())
    return organization, user


def agent_create(
    *,
    organization: Organization,
    name: str,
    email: str,
    password: str | None = None,
    is_active: bool = True,
    avatar: File | None = None,
) -> Agent:
    """A user of the organization with an agent profile; without a password the user cannot log in."""
    email = agent_email_check(email=email)
    if password is not None:
        password_check(password=password, email=email, name=name)
    try:
        with transaction.atomic():
            user = User.objects.create_user(email=email, password=password, name=name, organization=organization)
            agent = Agent(organization=organization, user=user, name=name, is_active=is_active)
            if avatar is not None:
                agent.avatar.save(f"avatar.{avatar_check(avatar)}", avatar, save=False)
            agent.save()
    except IntegrityError:  # the same e-mail taken meanwhile, by a concurrent add
        raise ValidationFailed({"email": [EMAIL_UNAVAILABLE]})
    return agent


# E-mails are unique across organizations (they are the login): saying an address "already exists" would
# tell one organization's staff who has an account elsewhere. The same words whoever holds it.
EMAIL_UNAVAILABLE = "Este e-mail não pode ser usado. Informe outro."


def agent_email_check(*, email: str) -> str:
    """The e-mail a new agent would log in with, normalized; refused, in words that do not say why, when any
    user (of this organization, of another, or none) already has it. Every door that adds agents calls it."""
    email = email.strip().lower()
    if User.objects.filter(email__iexact=email).exists():
        raise ValidationFailed({"email": [EMAIL_UNAVAILABLE]})
    return email


def agent_update(
    *, agent: Agent, name: str | None = None, is_active: bool | None = None, avatar=None, actor: Actor = SYSTEM
) -> Agent:
    """An edit of the agent's page. `avatar=False` removes the photo; deactivating is offboarding.
    A new name is announced (agent_renamed): it is the author of the agent's public replies."""
    old_avatar, previous_name = agent.avatar.name, agent.name
    with transaction.atomic():
        if name is not None:
            agent.name = name
        if avatar is False:
            agent.avatar = ""
        elif avatar is not None:
            agent.avatar.save(f"avatar.{avatar_check(avatar)}", avatar, save=False)
        agent.save(update_fields=["name", "avatar"])
        if is_active is not None and is_active != agent.is_active:
            agent_set_active(agent=agent, is_active=is_active)
        if old_avatar and old_avatar != agent.avatar.name:
            storage = agent.avatar.storage
            transaction.on_commit(lambda: storage.delete(old_avatar))
        if agent.name != previous_name:
            agent_renamed.send(sender=Agent, agent=agent, previous_name=previous_name, actor=actor)
    return agent


def password_check(*, password: str, email: str = "", name: str = "") -> None:
    """Django's password validators (settings.AUTH_PASSWORD_VALIDATORS), for every door that sets a password."""
    try:
        validate_password(password, user=User(email=email, name=name))
    except DjangoValidationError as error:
        raise ValidationFailed({"senha": list(error.messages)})


AVATAR_FORMATS = {"PNG": "png", "JPEG": "jpg", "GIF": "gif", "WEBP": "webp"}


def avatar_check(avatar: File) -> str:
    """The extension to store an avatar under: its real image format, whatever the file was called.
    Avatars are served to partners, so nothing but images, and nothing over AVATAR_MAX_BYTES."""
    if avatar.size > settings.AVATAR_MAX_BYTES:
        raise ValidationFailed({"avatar": [f"A imagem deve ter no máximo {_byte_size(settings.AVATAR_MAX_BYTES)}."]})
    try:
        avatar.seek(0)
        with Image.open(avatar) as image:
            image_format = image.format
            image.verify()
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        image_format = None
    finally:
        avatar.seek(0)
    if image_format not in AVATAR_FORMATS:
        raise ValidationFailed({"avatar": ["Envie uma imagem PNG, JPEG, GIF ou WebP."]})
    return AVATAR_FORMATS[image_format]


def _byte_size(size: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def agent_set_active(*, agent: Agent, is_active: bool) -> Agent:
    """Offboarding: a deactivated agent's user can no longer log in, and every panel token it holds
    stops working at once (access tokens check the user on each request, refresh tokens are
    blacklisted). Reactivating lets the user log in again."""
    with transaction.atomic():
        agent.is_active = is_active
        agent.save(update_fields=["is_active"])
        User.objects.filter(pk=agent.user_id).update(is_active=is_active)
        if not is_active:
            user_tokens_revoke(user_id=agent.user_id)
    return agent


def user_tokens_revoke(*, user_id) -> int:
    """Blacklist every refresh token of the user that is not already (logout everywhere)."""
    outstanding = OutstandingToken.objects.filter(user_id=user_id, blacklistedtoken__isnull=True)
    revoked = BlacklistedToken.objects.bulk_create([BlacklistedToken(token=token) for token in outstanding])
    return len(revoked)


def organization_set_active(*, organization: Organization, is_active: bool) -> Organization:
    """Suspend or restore an organization: its keys, panel tokens and admin access follow at once,
    because every door reads the organization on every request."""
    organization.is_active = is_active
    organization.save(update_fields=["is_active"])
    return organization
