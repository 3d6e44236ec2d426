"""The audit trail: who did what, from where, through every door (docs/decisions.md, "Audit trail").

Services record what they did with `audit_record`, in the transaction of the write, as they announce
their side effects: the record commits or rolls back with the change. Who and from where come from the
request being served (bound by `AuditContextMiddleware`): the partner's key, the panel's or the admin's
user, with the client's address and user agent; outside a request (operator commands, beat's tasks) the
actor is the system, named by `audit_as_system`. A record never holds a secret: keys, tokens, passwords
and webhook secrets are dropped from what it stores, whatever a caller passes.
"""

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.utils import timezone
from django.utils.functional import SimpleLazyObject, empty

from foundation.ratelimit import client_ip
from helpdesk.models import AuditRecord

_request: ContextVar = ContextVar("audit_request", default=None)
_system_name: ContextVar[str] = ContextVar("audit_system_name", default="sistema")

# Never stored, at any depth of `changes`.
SECRET_KEYS = frozenset(
    {"segredo", "secret", "chave", "key", "key_digest", "senha", "password", "token", "access_token", "refresh_token"}
)
USER_AGENT_MAX = 255


@dataclass(frozen=True)
class AuditActor:
    type: str
    id: str = ""
    name: str = ""

    @classmethod
    def user(cls, user) -> "AuditActor":
        return cls(AuditRecord.ACTOR_USER, str(user.pk), user.name or user.email)

    @classmethod
    def credential(cls, credential) -> "AuditActor":
        return cls(AuditRecord.ACTOR_CREDENTIAL, str(credential.pk), f"{credential.name} ({credential.key_prefix}…)")


class AuditContextMiddleware:
    """Binds the request being served, so a record made anywhere below knows its caller and origin."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextmanager
def audit_as_system(name: str) -> Iterator[None]:
    """What runs outside a request, named: `manage.py create_api_key`, a beat task."""
    token = _system_name.set(name)
    try:
        yield
    finally:
        _system_name.reset(token)


_task_tokens: dict = {}


def task_started(task_id=None, task=None, **kwargs) -> None:
    """celery task_prerun: what a task writes is audited as the system, named by the task."""
    _task_tokens[task_id] = _system_name.set(f"tarefa {task.name}")


def task_finished(task_id=None, **kwargs) -> None:
    token = _task_tokens.pop(task_id, None)
    if token is not None:
        # Set in another context (a task run eagerly inside another): nothing to undo here.
        with contextlib.suppress(ValueError):
            _system_name.reset(token)


# The stable names a record may carry, alphabetically (docs/decisions.md lists them); `GET /api/auditoria`
# filters by them and refuses any other, and recording an action missing here is a programming error.
AUDIT_ACTIONS = (
    "anexo.adicionado",
    "atendente.ativado",
    "atendente.atualizado",
    "atendente.criado",
    "atendente.desativado",
    "campo.atualizado",
    "campo.criado",
    "campo.excluido",
    "contato.anonimizado",
    "contato.atualizado",
    "contato.excluido",
    "contato.exportado",
    "credencial.criada",
    "credencial.revogada",
    "entrega.reenviada",
    "horario_atendimento.alterado",
    "login.falhou",
    "login.sucesso",
    "logout",
    "macro.atualizada",
    "macro.criada",
    "macro.excluida",
    "nota.adicionada",
    "nota.editada",
    "organizacao.atualizada",
    "organizacao.criada",
    "organizacao.reativada",
    "organizacao.suspensa",
    "resposta.editada",
    "resposta.publicada",
    "sla.politicas_alteradas",
    "status.atualizado",
    "status.criado",
    "status.excluido",
    "ticket.atribuido",
    "ticket.campos_alterados",
    "ticket.criado",
    "ticket.excluido",
    "ticket.mesclado",
    "ticket.prioridade_alterada",
    "ticket.status_alterado",
    "ticket.tags_alteradas",
    "usuario.atualizado",
    "usuario.criado",
    "usuario.excluido",
    "webhook.atualizado",
    "webhook.criado",
    "webhook.desativado",
    "webhook.removido",
    "webhook.segredo_regenerado",
    "webhook.teste_enviado",
)
AUDIT_RESOURCE_TYPES = (
    "ticket",
    "resposta",
    "anexo",
    "contato",
    "credencial",
    "webhook",
    "entrega",
    "atendente",
    "organizacao",
    "status",
    "usuario",
    "campo",
    "horario_atendimento",
    "sla",
    "macro",
)


def audit_record(
    action: str,
    *,
    organization_id,
    resource_type: str,
    resource_id="",
    changes: dict | None = None,
    actor: AuditActor | None = None,
) -> AuditRecord:
    """One record; `actor` only when the request's caller is not the one acting (a login names its user)."""
    if action not in AUDIT_ACTIONS or resource_type not in AUDIT_RESOURCE_TYPES:
        raise ValueError(f"audit: {action!r} on {resource_type!r} is not in the catalogue (AUDIT_ACTIONS)")
    request = _request.get()
    actor = actor or _actor_of(request)
    return AuditRecord.objects.create(
        organization_id=organization_id,
        created_at=timezone.now(),
        action=action,
        actor_type=actor.type,
        actor_id=actor.id,
        actor_name=actor.name[:255],
        ip=client_ip(request) if request is not None else "",
        user_agent=request.headers.get("User-Agent", "")[:USER_AGENT_MAX] if request is not None else "",
        resource_type=resource_type,
        resource_id=str(resource_id or ""),
        changes=_without_secrets(changes or {}),
    )


def change(before, after) -> dict:
    """One field's entry of `changes`."""
    return {"antes": before, "depois": after}


def _actor_of(request) -> AuditActor:
    """The caller as authentication already loaded it (no query): a partner key, a panel or admin user."""
    if request is None:
        return AuditActor(AuditRecord.ACTOR_SYSTEM, "", _system_name.get())
    user = request.__dict__.get("user")
    if isinstance(user, SimpleLazyObject):
        # Private Django API: test_an_admin_write_is_recorded_with_the_staff_user
        user = None if user._wrapped is empty else user._wrapped
    credential = getattr(user, "credential", None)
    if credential is not None:
        return AuditActor.credential(credential)
    if getattr(user, "is_authenticated", False):
        return AuditActor.user(user)
    return AuditActor(AuditRecord.ACTOR_SYSTEM, "", _system_name.get())


def _without_secrets(value):
    if isinstance(value, dict):
        return {key: _without_secrets(item) for key, item in value.items() if str(key).lower() not in SECRET_KEYS}
    if isinstance(value, list | tuple):
        return [_without_secrets(item) for item in value]
    return value
