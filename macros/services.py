"""Every write on macros, and applying one to a ticket (docs/decisions.md, "Macros (issue 24)").

Managing a macro is an admin-managed setting like a status: checked, written and audited in one transaction.
Applying one changes nothing by hand: it calls the ticket services (tickets.services.ticket_update and
reply_create_by_agent) inside one transaction, so each action is announced, audited and emitted exactly as the
same action taken alone, and a refusal anywhere leaves nothing written.
"""

from dataclasses import dataclass

from django.db import transaction

from foundation.exceptions import ValidationFailed
from helpdesk.actors import Actor
from helpdesk.audit import audit_record, change
from helpdesk.models import Agent
from macros.exceptions import MacroNotFound
from macros.models import Assignment, Macro
from macros.placeholders import placeholders_check, placeholders_fill, placeholders_values
from tickets.models import Priority, Reply, Ticket, TicketStatus
from tickets.services import TagsChange, reply_create_by_agent, ticket_update
from tickets.tags import MAX_TAGS

NAME_MAX = 100
BODY_MAX = 65535
TAGS_FIELDS = ("tags.adicionar", "tags.remover")


@dataclass(frozen=True)
class MacroValues:
    """What a macro holds, as its services take it; `assignee` only with Assignment.AGENT."""

    name: str
    body: str = ""
    internal: bool = False
    status: TicketStatus | None = None
    priority: str = ""
    assignment: str = Assignment.KEEP
    assignee: Agent | None = None
    tags_add: tuple[str, ...] | list[str] = ()
    tags_remove: tuple[str, ...] | list[str] = ()


# A macro's fields as the audit trail names them (the panel API's names).
MACRO_AUDITED = {
    "name": "nome",
    "internal": "interna",
    "status_id": "status_id",
    "priority": "prioridade",
    "assignment": "atendente",
    "assignee_id": "atendente_id",
    "tags_add": "tags_adicionar",
    "tags_remove": "tags_remover",
}


def macro_check(*, organization_id, values: MacroValues, macro: Macro | None = None) -> MacroValues:
    """The macro's rules, for forms that show a field error before anything is saved (the admin); the values
    as they are stored (name trimmed, tags normalised). Errors on the panel API's field names."""
    errors: dict[str, list[str]] = {}
    name = (values.name or "").strip()
    errors.update(_name_errors(organization_id, name, macro))
    errors.update(_body_errors(values.body or ""))
    errors.update(_action_errors(organization_id, values))
    tags = TagsChange()
    try:
        tags = TagsChange.of(list(values.tags_add), list(values.tags_remove), fields=TAGS_FIELDS)
    except ValidationFailed as error:
        errors.update(error.errors)
    for field, listed in zip(TAGS_FIELDS, (tags.add, tags.remove), strict=True):
        if len(listed) > MAX_TAGS:
            errors[field] = [f"No máximo {MAX_TAGS} tags."]
    if errors:
        raise ValidationFailed(errors)
    return MacroValues(
        name=name,
        body=values.body or "",
        internal=bool(values.internal),
        status=values.status,
        priority=values.priority or "",
        assignment=values.assignment,
        assignee=values.assignee if values.assignment == Assignment.AGENT else None,
        tags_add=list(tags.add),
        tags_remove=list(tags.remove),
    )


def _name_errors(organization_id, name: str, macro: Macro | None) -> dict:
    if not name:
        return {"nome": ["Este campo não pode estar em branco."]}
    if len(name) > NAME_MAX:
        return {"nome": [f"Use no máximo {NAME_MAX} caracteres."]}
    duplicates = Macro.objects.filter(organization_id=organization_id, name__iexact=name)
    if macro is not None:
        duplicates = duplicates.exclude(pk=macro.pk)
    if duplicates.exists():
        return {"nome": ["Já existe uma macro com este nome."]}
    return {}


def _body_errors(body: str) -> dict:
    if len(body) > BODY_MAX:
        return {"mensagem": [f"Use no máximo {BODY_MAX} caracteres."]}
    try:
        placeholders_check(body)
    except ValidationFailed as error:
        return error.errors
    return {}


def _action_errors(organization_id, values: MacroValues) -> dict:
    errors = {}
    if values.status is not None and values.status.organization_id != organization_id:
        errors["status_id"] = ["Status inexistente nesta organização."]
    if values.priority and values.priority not in Priority.values:
        errors["prioridade"] = ["Prioridade inválida."]
    if values.assignment not in Assignment.values:
        errors["atendente"] = ["Escolha manter, eu, atendente ou nenhum."]
    if values.assignment == Assignment.AGENT:
        assignee = values.assignee
        if assignee is None or assignee.organization_id != organization_id:
            errors["atendente_id"] = ["Escolha um atendente desta organização."]
        elif not assignee.is_active:
            errors["atendente_id"] = ["Atendente inativo não pode receber tickets."]
    return errors


def macro_create(*, organization_id, values: MacroValues) -> Macro:
    """A new macro of the organization, audited (`macro.criada`)."""
    checked = macro_check(organization_id=organization_id, values=values)
    with transaction.atomic(savepoint=False):
        macro = Macro.objects.create(organization_id=organization_id, **_columns(checked))
        _macro_audit("macro.criada", macro, _audited_changes(None, _audited(macro)))
    return macro


def macro_update(*, macro: Macro, values: MacroValues) -> Macro:
    """A macro changed; only what changed is written and audited (`macro.atualizada`)."""
    checked = macro_check(organization_id=macro.organization_id, values=values, macro=macro)
    with transaction.atomic(savepoint=False):
        macro = Macro.objects.select_for_update().get(pk=macro.pk)
        before = _audited(macro)
        columns = _columns(checked)
        changed = [field for field, value in columns.items() if getattr(macro, field) != value]
        for field in changed:
            setattr(macro, field, columns[field])
        if changed:
            macro.save(update_fields=[*changed, "updated_at"])
            _macro_audit("macro.atualizada", macro, _audited_changes(before, _audited(macro)))
    return macro


def macro_delete(*, macro: Macro) -> None:
    """A macro removed (`macro.excluida`); tickets keep what it did to them."""
    with transaction.atomic(savepoint=False):
        _macro_audit("macro.excluida", macro, {"nome": change(macro.name, None)})
        macro.delete()


def macro_apply(
    *, ticket: Ticket, macro: Macro, agent: Agent, body: str | None = None, internal: bool | None = None
) -> tuple[Ticket, Reply | None]:
    """Apply `macro` to `ticket` as `agent`, in ONE transaction: its status, priority, assignee and tags through
    ticket_update (the same checks, announcements and events as each change alone), then its message, filled,
    or `body` (the agent's edited text, taken as typed) as a public reply or an internal note (`internal`
    overrides the macro's choice, as the admin's box does). An empty message posts nothing.

    Another organization's macro is the 404 of a missing one; an agent the macro assigns who is no longer
    active is a 422 before anything is written; a refusal of the reply rolls the actions back."""
    if macro.organization_id != ticket.organization_id:
        raise MacroNotFound()
    if agent.organization_id != ticket.organization_id:
        raise ValidationFailed({"atendente": ["Atendente de outra organização."]})
    assignee = _assignee_of(macro, agent)
    status = macro.status
    if status is not None and status.organization_id != ticket.organization_id:
        raise ValidationFailed({"macro": ["O status desta macro não existe mais nesta organização."]})
    if body is None:
        body = placeholders_fill(macro.body, placeholders_values(ticket=ticket, agent=agent))
    reply = None
    with transaction.atomic():
        ticket = ticket_update(
            ticket=ticket,
            status=status,
            assignee=assignee,
            unassign=macro.assignment == Assignment.NONE,
            priority=macro.priority or None,
            tags_add=macro.tags_add,
            tags_remove=macro.tags_remove,
            actor=Actor.of_agent(agent),
        )
        if body.strip():
            reply = reply_create_by_agent(
                ticket=ticket, agent=agent, body=body, internal=macro.internal if internal is None else internal
            )
            ticket = reply.ticket  # as the reply left it (a public one moved atualizado_em)
    return ticket, reply


def _assignee_of(macro: Macro, agent: Agent) -> Agent | None:
    if macro.assignment == Assignment.ME:
        return agent
    if macro.assignment != Assignment.AGENT:
        return None
    assignee = macro.assignee
    if assignee is None or assignee.organization_id != macro.organization_id or not assignee.is_active:
        # The agent left (or the macro lost them): refuse rather than apply the rest of it half.
        raise ValidationFailed({"macro": ["O atendente desta macro está inativo ou não existe mais."]})
    return assignee


def _columns(values: MacroValues) -> dict:
    return {
        "name": values.name,
        "body": values.body,
        "internal": values.internal,
        "status": values.status,
        "priority": values.priority,
        "assignment": values.assignment,
        "assignee": values.assignee,
        "tags_add": list(values.tags_add),
        "tags_remove": list(values.tags_remove),
    }


def _audited(macro: Macro) -> dict:
    """The audited fields' values; the message's text is never recorded (the trail holds no message content),
    only whether it changed."""
    values = {MACRO_AUDITED[field]: getattr(macro, field) for field in MACRO_AUDITED}
    for key in ("status_id", "atendente_id"):
        values[key] = str(values[key]) if values[key] else None
    return {**values, "mensagem": macro.body}


def _audited_changes(before: dict | None, after: dict) -> dict:
    changes = {}
    for key, value in after.items():
        previous = None if before is None else before[key]
        if before is not None and previous == value:
            continue
        if key == "mensagem":
            if value != (previous or ""):
                changes["mensagem_alterada"] = True
        else:
            changes[key] = change(previous, value)
    return changes


def _macro_audit(action: str, macro: Macro, changes: dict) -> None:
    audit_record(
        action, organization_id=macro.organization_id, resource_type="macro", resource_id=macro.pk, changes=changes
    )
