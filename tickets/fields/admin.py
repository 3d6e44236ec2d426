"""The admin's custom fields: the definitions' page (through tickets.fields.services, for whoever holds
api_publica:gerenciar, as the panel's /api/campos), a ticket's values on its change page, and the ticket list's
filter by a value (`?campo.<chave>=`, the partner list's parameters)."""

from django import forms
from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters

from foundation.exceptions import ApplicationError, ValidationFailed
from helpdesk.admin_tenancy import OrganizationScopedAdmin, user_organization_id
from helpdesk.permissions import MANAGE_PUBLIC_API_PERM
from tickets.fields.selectors import FieldFilter, field_definitions, field_filter_condition
from tickets.fields.services import (
    custom_field_check,
    custom_field_create,
    custom_field_delete,
    custom_field_options_check,
    custom_field_update,
)
from tickets.fields.values import TEXT_MAX_LENGTH, BadValue, FieldDefinition, query_value
from tickets.models import CustomField, CustomFieldType

FIELD_PREFIX = "campo_"  # a ticket form's field of a custom field: campo_<chave>
PARAMETER = "campo."


class CustomFieldAdminForm(forms.ModelForm):
    options_text = forms.CharField(
        label="Opções",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 40}),
        help_text="Uma por linha; só para os tipos lista e multilista.",
    )
    organization_id = None
    # custom_field_check's error keys (the API's field names) on this form's fields.
    SERVICE_FIELDS = {"chave": "key", "nome": "name", "tipo": "type", "opcoes": "options_text", "campo": None}

    class Meta:
        model = CustomField
        fields = ["key", "name", "type", "visible_to_partner", "editable_by_partner", "is_active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.instance._state.adding:
            self.initial["options_text"] = "\n".join(self.instance.options)

    def options(self) -> list[str]:
        text = self.cleaned_data.get("options_text", "")
        return [line.strip() for line in text.splitlines() if line.strip()]

    def clean(self):
        cleaned = super().clean()
        existing = None if self.instance._state.adding else self.instance
        try:
            custom_field_check(
                organization_id=self.instance.organization_id or self.organization_id,
                key=cleaned.get("key", "") if existing is None else existing.key,
                name=cleaned.get("name", ""),
                field_type=cleaned.get("type", "") if existing is None else existing.type,
                options=self.options(),
                field=existing,
            )
            if existing is not None:
                custom_field_options_check(field=existing, options=self.options())
        except ValidationFailed as error:
            for key, messages in error.errors.items():
                self.add_error(self.SERVICE_FIELDS.get(key), messages)
        except ApplicationError as error:  # an option tickets use
            self.add_error("options_text", error.detail)
        return cleaned


@admin.register(CustomField)
class CustomFieldAdmin(OrganizationScopedAdmin):
    """The organization's custom fields; `chave` and `tipo` are set once."""

    form = CustomFieldAdminForm
    model_permissions = False
    list_display = ["name", "key", "type", "visible_to_partner", "editable_by_partner", "is_active"]
    list_filter = ["type", "is_active"]
    ordering = ["created_at", "key"]

    def may_use(self, request) -> bool:
        return self._staff_of_an_organization(request) and (
            request.user.is_superuser or request.user.has_perm(MANAGE_PUBLIC_API_PERM)
        )

    def has_add_permission(self, request):
        # A field belongs to the adding user's organization: superusers, who have none, add nothing.
        return super().has_add_permission(request) and user_organization_id(request) is not None

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type("CustomFieldFormForRequest", (form,), {"organization_id": user_organization_id(request)})

    def get_fields(self, request, obj=None):
        return ["key", "name", "type", "options_text", "visible_to_partner", "editable_by_partner", "is_active"]

    def get_readonly_fields(self, request, obj=None):
        return ["key", "type"] if obj is not None else []

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        values = {
            "name": data["name"],
            "options": form.options(),
            "visible_to_partner": data["visible_to_partner"],
            "editable_by_partner": data["editable_by_partner"],
            "is_active": data["is_active"],
        }
        if change:
            custom_field_update(field=CustomField.objects.get(pk=obj.pk), **values)
            return
        field = custom_field_create(
            organization=request.user.organization, key=data["key"], field_type=data["type"], **values
        )
        obj.pk = field.pk

    def delete_model(self, request, obj):
        custom_field_delete(field=obj)

    def delete_queryset(self, request, queryset):
        for field in queryset:
            custom_field_delete(field=field)


# --- a ticket's values on its change page ----------------------------------------------------------


def value_form_field(definition: FieldDefinition) -> forms.Field:
    """The form field of a custom field; its cleaned value is what the services take (None clears)."""
    label = definition.name if definition.visible_to_partner else f"{definition.name} (oculto ao parceiro)"
    common = {"label": label, "required": False}
    kind = definition.type
    if kind == CustomFieldType.NUMBER:
        return forms.DecimalField(max_digits=24, decimal_places=6, **common)
    if kind == CustomFieldType.DATE:
        return forms.DateField(widget=forms.DateInput(attrs={"type": "date"}), **common)
    if kind == CustomFieldType.BOOLEAN:
        return forms.NullBooleanField(widget=forms.NullBooleanSelect, **common)
    if kind == CustomFieldType.CHOICE:
        return forms.ChoiceField(choices=[("", "—"), *((option, option) for option in definition.options)], **common)
    if kind == CustomFieldType.MULTIPLE_CHOICE:
        choices = [(option, option) for option in definition.options]
        return forms.MultipleChoiceField(choices=choices, widget=forms.CheckboxSelectMultiple, **common)
    return forms.CharField(max_length=TEXT_MAX_LENGTH, **common)


def value_form_fields(organization_id) -> dict[str, forms.Field]:
    """A ticket form's fields of the organization's active custom fields, by form field name."""
    return {f"{FIELD_PREFIX}{d.key}": value_form_field(d) for d in field_definitions(organization_id) if d.is_active}


def value_initial(ticket) -> dict:
    values = ticket.custom_fields or {}
    return {f"{FIELD_PREFIX}{key}": value for key, value in values.items()}


def changed_values(form) -> dict:
    """The values an agent changed on the form, as ticket_fields_set takes them."""
    values = {}
    for name in form.changed_data:
        if not name.startswith(FIELD_PREFIX):
            continue
        value = form.cleaned_data.get(name)
        if value in ("", [], None):
            value = None
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        elif not isinstance(value, bool | list | str):
            value = str(value)  # a Decimal: the services keep its one spelling
        values[name[len(FIELD_PREFIX) :]] = value
    return values


# --- the ticket list's filter ----------------------------------------------------------------------


class CustomFieldListFilter(admin.ListFilter):
    """`?campo.<chave>=<valor>` (and `__de`, `__ate`), as the partner list reads them, for every field of the
    organization; the sidebar links the options of list and yes/no fields."""

    title = "campos personalizados"
    template = "admin/filter.html"

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        self.organization_id = user_organization_id(request)
        self.used = {}
        for name in [name for name in params if name.startswith(PARAMETER)]:
            value = params.pop(name)
            self.used[name] = value[-1] if isinstance(value, list) else value

    def _definitions(self) -> tuple[FieldDefinition, ...]:
        return field_definitions(self.organization_id) if self.organization_id else ()

    def has_output(self) -> bool:
        return any(d.type in (CustomFieldType.CHOICE, CustomFieldType.BOOLEAN) for d in self._definitions())

    def expected_parameters(self):
        return list(self.used)

    def choices(self, changelist):
        yield {
            "selected": not self.used,
            "query_string": changelist.get_query_string(remove=list(self.used)),
            "display": "Todos",
        }
        for definition in self._definitions():
            if definition.type == CustomFieldType.BOOLEAN:
                options = [("true", "Sim"), ("false", "Não")]
            elif definition.type == CustomFieldType.CHOICE:
                options = [(option, option) for option in definition.options]
            else:
                continue
            name = f"{PARAMETER}{definition.key}"
            for value, label in options:
                yield {
                    "selected": self.used.get(name) == value,
                    "query_string": changelist.get_query_string({name: value}),
                    "display": f"{definition.name}: {label}",
                }

    def queryset(self, request, queryset):
        known = {d.key: d for d in self._definitions()}
        for name, text in self.used.items():
            if text == "":
                continue
            key, bound = name[len(PARAMETER) :], "value"
            for suffix, which in (("__de", "low"), ("__ate", "high")):
                if key.endswith(suffix):
                    key, bound = key[: -len(suffix)], which
            definition = known.get(key)
            if definition is None:
                raise IncorrectLookupParameters(f"campo desconhecido: {key!r}")
            try:
                queryset = queryset.filter(
                    field_filter_condition(FieldFilter(definition=definition, **{bound: query_value(definition, text)}))
                )
            except BadValue as error:
                raise IncorrectLookupParameters(str(error)) from None
        return queryset
