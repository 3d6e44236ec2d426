"""Organizations, panel users and agents."""

import uuid

from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Lower


class Organization(models.Model):
    """A customer of the service; every other row belongs to exactly one."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField("nome", max_length=150)
    # Suspended (superusers only): every door refuses it, keys, panel tokens and the admin.
    is_active = models.BooleanField("ativa", default=True)
    created_at = models.DateTimeField("criado em", auto_now_add=True)

    class Meta:
        verbose_name = "organização"
        verbose_name_plural = "organizações"
        ordering = ["name"]
        # Shown to API clients as "api_publica:gerenciar" (helpdesk.permissions).
        permissions = [("gerenciar_api_publica", "Pode gerenciar a API pública (credenciais e webhooks)")]

    def __str__(self) -> str:
        return self.name


def login_email(email: str) -> str:
    """A login as it is stored and looked up: lower-cased by Python. Looking a typed address up in this form
    (then case-insensitively, for rows of any spelling) matters on PostgreSQL, whose UPPER() keeps İ as it
    is while the stored form, lower-cased, has an i and a combining dot."""
    return email.strip().lower()


def login_email_too_long(stored: str) -> str | None:
    """The refusal of a login too long once lower-cased (lower() turns İ into two characters), or None."""
    limit = User._meta.get_field("email").max_length
    if len(stored) > limit:
        return f"Certifique-se de que este campo não tenha mais de {limit} caracteres."
    return None


class UserManager(BaseUserManager):
    use_in_migrations = True

    def create_user(self, email, password=None, **extra_fields):
        if not email:
            raise ValueError("email is required")
        email = login_email(self.normalize_email(email))
        # createsuperuser checked the address as typed, not as stored.
        if too_long := login_email_too_long(email):
            raise ValidationError(too_long)
        user = self.model(email=email, **extra_fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email, password=None, **extra_fields):
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra_fields)

    def get_by_natural_key(self, email):
        return self.get(email__iexact=login_email(email))


class User(AbstractBaseUser, PermissionsMixin):
    """A panel user: logs in with e-mail and password; superusers have no organization."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    email = models.EmailField("e-mail", unique=True)
    name = models.CharField("nome", max_length=150, blank=True)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.PROTECT, null=True, blank=True, related_name="users"
    )
    is_staff = models.BooleanField("acesso ao admin", default=False)
    is_active = models.BooleanField("ativo", default=True)
    date_joined = models.DateTimeField("criado em", auto_now_add=True)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    class Meta:
        verbose_name = "usuário"
        verbose_name_plural = "usuários"
        constraints = [models.UniqueConstraint(Lower("email"), name="user_email_ci_unique")]

    def __str__(self) -> str:
        return self.email


def avatar_upload_to(agent: "Agent", filename: str) -> str:
    # A random name: the signed URL is the only way in, so names must not be guessable.
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else "bin"
    return f"avatars/{agent.organization_id}/{uuid.uuid4().hex}.{suffix[:8]}"


class Agent(models.Model):
    """The agent (atendente) profile of a user: who answers tickets."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.PROTECT, related_name="agents"
    )
    user = models.OneToOneField(User, verbose_name="usuário", on_delete=models.CASCADE, related_name="agent")
    name = models.CharField("nome", max_length=150)
    avatar = models.ImageField("avatar", upload_to=avatar_upload_to, blank=True)
    is_active = models.BooleanField("ativo", default=True)
    created_at = models.DateTimeField("criado em", auto_now_add=True)

    class Meta:
        verbose_name = "atendente"
        verbose_name_plural = "atendentes"
        indexes = [models.Index(fields=["organization", "is_active", "name"], name="agent_org_active_name")]

    def __str__(self) -> str:
        return self.name


class AuditRecord(models.Model):
    """Who did what, from where, through any door: written in the transaction of the write it records
    (helpdesk.audit). Never holds a secret: keys, tokens, passwords and webhook secrets are left out."""

    ACTOR_USER = "usuario"
    ACTOR_CREDENTIAL = "credencial"
    ACTOR_SYSTEM = "sistema"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # None: a platform-level record (a login attempt for an unknown e-mail, a superuser's own action).
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, null=True, related_name="+"
    )
    created_at = models.DateTimeField("criado em", db_index=True)
    action = models.CharField("ação", max_length=64)
    actor_type = models.CharField("tipo do ator", max_length=16)
    actor_id = models.CharField("id do ator", max_length=64, blank=True)
    actor_name = models.CharField("nome do ator", max_length=255, blank=True)
    ip = models.CharField("IP", max_length=64, blank=True)
    user_agent = models.CharField("user agent", max_length=255, blank=True)
    resource_type = models.CharField("tipo do recurso", max_length=32)
    resource_id = models.CharField("id do recurso", max_length=64, blank=True)
    changes = models.JSONField("alterações", default=dict, blank=True)

    class Meta:
        verbose_name = "registro de auditoria"
        verbose_name_plural = "auditoria"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-created_at", "-id"], name="audit_org_newest"),
            models.Index(fields=["organization", "actor_id", "-created_at"], name="audit_org_actor"),
            models.Index(
                fields=["organization", "resource_type", "resource_id", "-created_at"], name="audit_org_resource"
            ),
            models.Index(fields=["organization", "action", "-created_at"], name="audit_org_action"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.resource_type} {self.resource_id}"
