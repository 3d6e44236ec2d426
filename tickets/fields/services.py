"""Every write of custom field definitions (the panel's `/api/campos`, the admin). The values tickets carry are
written by tickets.services (ticket_create, ticket_fields_set), with the rules of tickets.fields.rules."""

from django.db import IntegrityError, transaction
from django.db.models import Func, Value

from foundation.exceptions import ValidationFailed
from helpdesk.audit import audit_record, change
from helpdesk.models import Organization
from tickets.exceptions import CustomFieldOptionInUse
from tickets.fields.selectors import field_definitions_forget
from tickets.fields.values import KEY_RE, LIST_TYPES
from tickets.models import CustomField, CustomFieldType, Ticket, TicketFieldValue
from tickets.services import UNCHANGED, tickets_touch

MAX_FIELDS_PER_ORGANIZATION = 50
MAX_OPTIONS = 100
OPTION_MAX_LENGTH = 100
NAME_MAX_LENGTH = 100

# A definition's fields as the audit trail names them: as the API does, but `chave` is recorded as `campo` (the
# trail drops entries named like secrets, `chave` among them).
AUDITED = {
    "key": "campo",
    "name": "nome",
    "type": "tipo",
    "options": "opcoes",
    "visible_to_partner": "visivel_parceiro",
    "editable_by_partner": "editavel_parceiro",
    "is_active": "ativo",
}
SHOWN = ("visible_to_partner", "is_active")  # what decides whether partners see a field's values


# --- definitions --------------------------------------------------------------------------------


def custom_field_check(
    *, organization_id, key=UNCHANGED, name=UNCHANGED, field_type=UNCHANGED, options=UNCHANGED, field=None
) -> None:
    """A definition's rules, for forms that show a field error before anything is saved (the admin). `field`:
    the definition being changed (its key and type do not change)."""
    if field is None:
        errors = _new_key_and_type_problems(organization_id, key, field_type)
    else:
        errors = _immutable_problems(field, key, field_type)
        field_type = field.type
    if name is not UNCHANGED and not (name or "").strip():
        errors["nome"] = ["Este campo não pode estar em branco."]
    elif name is not UNCHANGED and len(name.strip()) > NAME_MAX_LENGTH:
        errors["nome"] = [f"Certifique-se de que este campo não tenha mais de {NAME_MAX_LENGTH} caracteres."]
    if "tipo" not in errors:
        problem = _options_problem(field_type, [] if options is UNCHANGED and field is None else options)
        if problem:
            errors["opcoes"] = [problem]
    if errors:
        raise ValidationFailed(errors)


def _new_key_and_type_problems(organization_id, key, field_type) -> dict:
    errors = {}
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        errors["chave"] = ["Use de 1 a 40 letras minúsculas sem acento, dígitos ou _ (por exemplo, numero_pedido)."]
    elif CustomField.objects.filter(organization_id=organization_id, key=key).exists():
        errors["chave"] = ["Já existe um campo com esta chave."]
    if field_type not in CustomFieldType.values:
        errors["tipo"] = [f"Informe um dos tipos: {', '.join(CustomFieldType.values)}."]
    return errors


def _immutable_problems(field: CustomField, key, field_type) -> dict:
    errors = {}
    if key is not UNCHANGED and key != field.key:
        errors["chave"] = ["A chave de um campo não muda: crie outro campo."]
    if field_type is not UNCHANGED and field_type != field.type:
        errors["tipo"] = ["O tipo de um campo não muda: crie outro campo."]
    return errors


def _options_problem(field_type: str, options) -> str | None:
    if options is UNCHANGED:
        return None
    if field_type not in LIST_TYPES:
        return "Só campos do tipo lista ou multilista têm opções." if options else None
    if not options:
        return "Informe ao menos uma opção."
    if len(options) > MAX_OPTIONS:
        return f"Informe no máximo {MAX_OPTIONS} opções."
    if any(not option.strip() or len(option) > OPTION_MAX_LENGTH for option in options):
        return f"Cada opção é um texto de 1 a {OPTION_MAX_LENGTH} caracteres."
    if len(set(options)) != len(options):
        return "As opções não podem se repetir."
    return None


def custom_field_create(
    *,
    organization: Organization,
    key: str,
    name: str,
    field_type: str,
    options: list[str] | None = None,
    visible_to_partner: bool = True,
    editable_by_partner: bool = True,
    is_active: bool = True,
) -> CustomField:
    """A new field of the organization's tickets, at most MAX_FIELDS_PER_ORGANIZATION (counted under the
    organization's row lock, so two creates cannot both take the last place). No ticket has a value yet."""
    options = list(options or [])
    custom_field_check(organization_id=organization.pk, key=key, name=name, field_type=field_type, options=options)
    with transaction.atomic(savepoint=False):
        Organization.objects.select_for_update().filter(pk=organization.pk).first()
        if CustomField.objects.filter(organization=organization).count() >= MAX_FIELDS_PER_ORGANIZATION:
            raise ValidationFailed(
                {"campo": [f"Limite de {MAX_FIELDS_PER_ORGANIZATION} campos por organização atingido."]}
            )
        try:
            with transaction.atomic():  # a savepoint: a key taken meanwhile leaves the request usable
                field = CustomField.objects.create(
                    organization=organization,
                    key=key,
                    name=name.strip(),
                    type=field_type,
                    options=options,
                    visible_to_partner=visible_to_partner,
                    editable_by_partner=editable_by_partner,
                    is_active=is_active,
                )
        except IntegrityError:
            raise ValidationFailed({"chave": ["Já existe um campo com esta chave."]}) from None
        _audit("campo.criado", field, {AUDITED[name]: change(None, getattr(field, name)) for name in AUDITED})
        field_definitions_forget(organization.pk)
    return field


def custom_field_update(
    *,
    field: CustomField,
    key=UNCHANGED,
    name=UNCHANGED,
    field_type=UNCHANGED,
    options=UNCHANGED,
    visible_to_partner=UNCHANGED,
    editable_by_partner=UNCHANGED,
    is_active=UNCHANGED,
) -> CustomField:
    """A definition changed. Its key and type never change (a 422: tickets' values and partners' code depend on
    them). An option tickets hold is not removed (409, naming how many). When partners start or stop seeing the
    field (visivel_parceiro, ativo), the tickets with a value of it move in the change list: their `campos`
    changed."""
    custom_field_check(
        organization_id=field.organization_id,
        key=key,
        name=name,
        field_type=field_type,
        options=options,
        field=field,
    )
    values = {
        "name": name.strip() if name is not UNCHANGED else UNCHANGED,
        "options": list(options) if options is not UNCHANGED else UNCHANGED,
        "visible_to_partner": visible_to_partner,
        "editable_by_partner": editable_by_partner,
        "is_active": is_active,
    }
    with transaction.atomic(savepoint=False):
        field = CustomField.objects.select_for_update().get(pk=field.pk)
        changed = [name for name, value in values.items() if value is not UNCHANGED and getattr(field, name) != value]
        if "options" in changed:
            _options_removable(field, [option for option in field.options if option not in values["options"]])
        shown_before = field.visible_to_partner and field.is_active
        audited = {AUDITED[name]: change(getattr(field, name), values[name]) for name in changed}
        for name in changed:
            setattr(field, name, values[name])
        if changed:
            field.save(update_fields=[*changed, "updated_at"])
            _audit("campo.atualizado", field, audited)
            field_definitions_forget(field.organization_id)
        if shown_before != (field.visible_to_partner and field.is_active):
            tickets_touch(tickets=Ticket.objects.filter(pk__in=_tickets_with_value(field)))
    return field


def custom_field_options_check(*, field: CustomField, options: list[str]) -> None:
    """The 409 of custom_field_update for `options`, for forms that show it before saving (the admin)."""
    _options_removable(field, [option for option in field.options if option not in options])


def _options_removable(field: CustomField, removed: list[str]) -> None:
    if not removed:
        return
    holders = TicketFieldValue.objects.filter(field=field, text__in=removed).values("ticket_id").distinct().count()
    if holders:
        raise CustomFieldOptionInUse(options=removed, tickets=holders)


def _tickets_with_value(field: CustomField):
    return TicketFieldValue.objects.filter(field=field).values("ticket_id")


class _WithoutKey(Func):
    """The JSON object without one key: PostgreSQL's `jsonb - key`, SQLite's json_remove (keys are slugs)."""

    def __init__(self, expression, key: str):
        super().__init__(expression, Value(key))

    def as_sql(self, compiler, connection, **extra_context):
        column, column_params = compiler.compile(self.source_expressions[0])
        return f"({column} - %s)", (*column_params, self.source_expressions[1].value)

    def as_sqlite(self, compiler, connection, **extra_context):
        column, column_params = compiler.compile(self.source_expressions[0])
        return f"json_remove({column}, %s)", (*column_params, f"$.{self.source_expressions[1].value}")


def custom_field_delete(*, field: CustomField) -> None:
    """A field and every ticket's value of it go. Tickets that showed the value to partners move in the change
    list (their `campos` lost a key); no event is emitted (as when a status is renamed)."""
    with transaction.atomic(savepoint=False):
        field = CustomField.objects.select_for_update().get(pk=field.pk)
        holders = Ticket.objects.filter(pk__in=_tickets_with_value(field))
        if field.visible_to_partner and field.is_active:
            tickets_touch(tickets=holders)
        holders.update(custom_fields=_WithoutKey("custom_fields", field.key))
        _audit("campo.excluido", field, {AUDITED["key"]: change(field.key, None)})
        organization_id = field.organization_id
        field.delete()  # its value rows by cascade
        field_definitions_forget(organization_id)


def _audit(action: str, field: CustomField, changes: dict) -> None:
    audit_record(
        action, organization_id=field.organization_id, resource_type="campo", resource_id=field.pk, changes=changes
    )
