"""Writes on organizations, users and agents."""

from django.conf import settings
from django.contrib.auth.models import Permission
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files import File
from django.db import IntegrityError, transaction
from django.db.models import Q
from PIL import Image, UnidentifiedImageError
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken

from foundation.exceptions import AccessDenied, ValidationFailed
from helpdesk.actors import SYSTEM, Actor
from helpdesk.audit import audit_record, change
from helpdesk.models import Agent, Organization, User, login_email, login_email_too_long
from helpdesk.permissions import MANAGE_PUBLIC_API_CODENAME, support_group_ensure
from helpdesk.signals import agent_renamed, organization_restored


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
        audit_record(
            "organizacao.criada",
            organization_id=organization.pk,
            resource_type="organizacao",
            resource_id=organization.pk,
            changes={"nome": change(None, name), "admin": change(None, user.email)},
        )
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
            audit_record(
                "atendente.criado",
                organization_id=organization.pk,
                resource_type="atendente",
                resource_id=agent.pk,
                changes={"nome": change(None, name), "email": change(None, email), "ativo": change(None, is_active)},
            )
    except IntegrityError:  # the same e-mail taken meanwhile, by a concurrent add
        raise ValidationFailed({"email": [EMAIL_UNAVAILABLE]})
    return agent


# E-mails are unique across organizations (they are the login): saying an address "already exists" would
# tell one organization's staff who has an account elsewhere. The same words whoever holds it.
EMAIL_UNAVAILABLE = "Este e-mail não pode ser usado. Informe outro."


def agent_email_check(*, email: str) -> str:
    """The e-mail a new agent would log in with, normalized; refused, in words that do not say why, when any
    user (of this organization, of another, or none) already has it. Every door that adds agents calls it."""
    email = login_email(email)
    if too_long := login_email_too_long(email):
        raise ValidationFailed({"email": [too_long]})
    if User.objects.filter(email__iexact=email).exists():
        raise ValidationFailed({"email": [EMAIL_UNAVAILABLE]})
    return email


def agent_update(
    *,
    agent: Agent,
    name: str | None = None,
    is_active: bool | None = None,
    avatar=None,
    actor: Actor = SYSTEM,
    by: User | None = None,
) -> Agent:
    """An edit of the agent's page. `avatar=False` removes the photo; deactivating is offboarding, by
    `by` (agent_set_active). A new name is announced (agent_renamed): it is the author of the agent's
    public replies."""
    old_avatar, previous_name = agent.avatar.name, agent.name
    with transaction.atomic():
        if is_active is not None and is_active != agent.is_active:
            # First: a refusal comes before any file is stored.
            agent_set_active(agent=agent, is_active=is_active, by=by)
        if name is not None:
            agent.name = name
        if avatar is False:
            agent.avatar = ""
        elif avatar is not None:
            agent.avatar.save(f"avatar.{avatar_check(avatar)}", avatar, save=False)
        agent.save(update_fields=["name", "avatar"])
        if old_avatar and old_avatar != agent.avatar.name:
            storage = agent.avatar.storage
            transaction.on_commit(lambda: storage.delete(old_avatar))
        audited = {}
        if agent.name != previous_name:
            agent_renamed.send(sender=Agent, agent=agent, previous_name=previous_name, actor=actor)
            audited["nome"] = change(previous_name, agent.name)
        if old_avatar != agent.avatar.name:
            audited["avatar"] = change(bool(old_avatar), bool(agent.avatar.name))  # whether there is one, not the file
        if audited:
            _agent_audit("atendente.atualizado", agent, audited)
    return agent


def _agent_audit(action: str, agent: Agent, changes: dict) -> None:
    audit_record(
        action, organization_id=agent.organization_id, resource_type="atendente", resource_id=agent.pk, changes=changes
    )


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


def agent_set_active(*, agent: Agent, is_active: bool, by: User | None = None) -> Agent:
    """Offboarding: a deactivated agent's user can no longer log in, and every panel token it holds
    stops working at once (access tokens check the user on each request, refresh tokens are
    blacklisted). Reactivating lets the user log in again.

    `by` is who asks (None: the operator's commands): nobody (de)activates a user who holds more than
    they do (user_rank_check). The user's own flag is written only when the agent's flips, so
    "activate" on an active agent does not undo a superuser's deactivation of the user."""
    if by is not None:
        user_rank_check(actor=by, target=agent.user)
    with transaction.atomic():
        # Conditional: of two requests flipping the same agent, only one writes (and revokes).
        flipped = Agent.objects.filter(pk=agent.pk).exclude(is_active=is_active).update(is_active=is_active)
        agent.is_active = is_active
        if flipped:
            User.objects.filter(pk=agent.user_id).update(is_active=is_active)
            if not is_active:
                user_tokens_revoke(user_id=agent.user_id)
            action = "atendente.ativado" if is_active else "atendente.desativado"
            _agent_audit(action, agent, {"ativo": change(not is_active, is_active)})
    return agent


OUTRANKED = "Você não pode ativar nem desativar um usuário com mais permissões do que as suas."


def user_rank_check(*, actor: User, target: User) -> None:
    """AccessDenied when `target` holds anything `actor` does not: superuser, staff status, or a
    permission (their own or their groups'). Read from the rows, not has_perm(), which finds no
    permission on an inactive user and would let anyone reactivate a deactivated admin."""
    if actor.is_superuser:
        return
    outranked = (
        target.is_superuser
        or (target.is_staff and not actor.is_staff)
        or bool(_held_permissions(target) - _held_permissions(actor))
    )
    if outranked:
        raise AccessDenied(detail=OUTRANKED)


def _held_permissions(user: User) -> set[int]:
    return set(Permission.objects.filter(Q(user=user) | Q(group__user=user)).values_list("pk", flat=True).distinct())


def user_tokens_revoke(*, user_id) -> int:
    """Blacklist every refresh token of the user that is not already (logout everywhere)."""
    outstanding = OutstandingToken.objects.filter(user_id=user_id, blacklistedtoken__isnull=True)
    revoked = BlacklistedToken.objects.bulk_create([BlacklistedToken(token=token) for token in outstanding])
    return len(revoked)


def organization_rename(*, organization: Organization, name: str) -> Organization:
    """A superuser's edit of the name, recorded like every other write."""
    with transaction.atomic():
        previous = Organization.objects.select_for_update().values_list("name", flat=True).get(pk=organization.pk)
        organization.name = name
        if previous != name:
            Organization.objects.filter(pk=organization.pk).update(name=name)
            _organization_audit("organizacao.atualizada", organization, {"nome": change(previous, name)})
    return organization


def organization_added(*, organization: Organization) -> None:
    """An organization a superuser made in the admin (Django's form wrote the row), without an admin yet."""
    _organization_audit("organizacao.criada", organization, {"nome": change(None, organization.name)})


def _organization_audit(action: str, organization: Organization, changes: dict) -> None:
    audit_record(
        action,
        organization_id=organization.pk,
        resource_type="organizacao",
        resource_id=organization.pk,
        changes=changes,
    )


def user_snapshot(user: User) -> dict:
    """What the audit trail says of an account: who it is and what it may do, never its password."""
    return {
        "email": user.email,
        "nome": user.name,
        "organizacao_id": str(user.organization_id) if user.organization_id else None,
        "ativo": user.is_active,
        "equipe": user.is_staff,
        "superusuario": user.is_superuser,
        "grupos": sorted(user.groups.values_list("name", flat=True)),
        "permissoes": sorted(user.user_permissions.values_list("codename", flat=True)),
    }


def user_changes_record(*, user: User, before: dict | None, after: dict | None) -> None:
    """A superuser's write of an account in the admin (Django's forms save it): created (`before` None),
    changed (what differs) or deleted (`after` None). A new password is recorded as changed, never as itself."""
    action = "usuario.criado" if before is None else "usuario.excluido" if after is None else "usuario.atualizado"
    before, after = before or {}, after or {}
    changes = {
        field: change(before.get(field), after.get(field))
        for field in {**before, **after}
        if before.get(field) != after.get(field)
    }
    if changes:
        audit_record(
            action, organization_id=user.organization_id, resource_type="usuario", resource_id=user.pk, changes=changes
        )


def user_password_changed_record(*, user: User) -> None:
    audit_record(
        "usuario.atualizado",
        organization_id=user.organization_id,
        resource_type="usuario",
        resource_id=user.pk,
        changes={"senha_alterada": change(None, True)},
    )


def organization_set_active(*, organization: Organization, is_active: bool) -> Organization:
    """Suspend or restore an organization: its keys, panel tokens, admin access, signed links and
    webhook deliveries follow at once, because each of them reads the organization every time.
    A restore is announced (organization_restored): what was held for it goes out again."""
    with transaction.atomic():
        changing = Organization.objects.filter(pk=organization.pk).exclude(is_active=is_active)
        flipped = changing.update(is_active=is_active)
        organization.is_active = is_active
        if flipped:
            _organization_audit(
                "organizacao.reativada" if is_active else "organizacao.suspensa",
                organization,
                {"ativa": change(not is_active, is_active)},
            )
        if flipped and is_active:
            organization_restored.send(sender=Organization, organization=organization)
    return organization
