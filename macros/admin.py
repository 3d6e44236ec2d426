"""Macros in the admin: MacroAdmin for staff with the model permissions, and the ticket page's "Macro" select
(MacroTicketAdminMixin, mixed into tickets.admin.TicketAdmin), which any agent of the organization uses.

Every write goes through macros.services: the macro's checks and audit, and macro_apply's one transaction.
"""

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.urls import path, reverse

from foundation.exceptions import ValidationFailed
from foundation.ids import parse_uuid
from helpdesk.admin_tenancy import OrganizationScopedAdmin, request_agent, user_organization_id
from macros.models import Macro
from macros.preview import macro_preview
from macros.selectors import macro_list
from macros.services import MacroValues, macro_apply, macro_check, macro_create, macro_delete, macro_update
from tickets.models import Ticket
from tickets.tags import MAX_TAGS

TAGS_HELP = f"Separadas por vírgula, no máximo {MAX_TAGS}; normalizadas como as tags do ticket."


def _tags_of(text: str) -> list[str]:
    return [part for part in (text or "").split(",") if part.strip()]


class MacroAdminForm(forms.ModelForm):
    tags_add_text = forms.CharField(label="Acrescentar tags", required=False, max_length=4000, help_text=TAGS_HELP)
    tags_remove_text = forms.CharField(label="Retirar tags", required=False, max_length=4000, help_text=TAGS_HELP)

    organization_id = None
    # macro_check's error keys (the panel API's field names) on this form's fields.
    SERVICE_FIELDS = {
        "nome": "name",
        "mensagem": "body",
        "status_id": "status",
        "prioridade": "priority",
        "atendente": "assignment",
        "atendente_id": "assignee",
        "tags.adicionar": "tags_add_text",
        "tags.remover": "tags_remove_text",
    }

    class Meta:
        model = Macro
        fields = ["name", "body", "internal", "status", "priority", "assignment", "assignee"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tags_add_text"].initial = ", ".join(self.instance.tags_add or [])
        self.fields["tags_remove_text"].initial = ", ".join(self.instance.tags_remove or [])
        if "assignee" in self.fields:
            self.fields["assignee"].queryset = self.fields["assignee"].queryset.filter(is_active=True)
        for name in ("status", "assignee"):
            if name in self.fields:
                widget = self.fields[name].widget
                widget.can_add_related = widget.can_change_related = widget.can_delete_related = False
                widget.can_view_related = False

    def values(self) -> MacroValues:
        data = self.cleaned_data
        return MacroValues(
            name=data.get("name") or "",
            body=data.get("body") or "",
            internal=data.get("internal", False),
            status=data.get("status"),
            priority=data.get("priority") or "",
            assignment=data.get("assignment") or "",
            assignee=data.get("assignee"),
            tags_add=_tags_of(data.get("tags_add_text")),
            tags_remove=_tags_of(data.get("tags_remove_text")),
        )

    def clean(self):
        cleaned = super().clean()
        organization_id = self.instance.organization_id or self.organization_id
        if cleaned.get("organization") is not None:  # a superuser's new macro names its organization
            organization_id = cleaned["organization"].pk
        try:
            macro_check(
                organization_id=organization_id,
                values=self.values(),
                macro=self.instance if self.instance.pk else None,
            )
        except ValidationFailed as error:
            for key, messages_ in error.errors.items():
                field = self.SERVICE_FIELDS.get(key)
                self.add_error(field if field in self.fields else None, messages_)
        return cleaned


@admin.register(Macro)
class MacroAdmin(OrganizationScopedAdmin):
    """Managed by staff holding macros' add/change/delete permissions; agents apply them from the ticket page."""

    form = MacroAdminForm
    list_display = ["name", "internal", "status", "priority", "assignment"]
    search_fields = ["name"]
    ordering = ["name"]
    list_select_related = ["status"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type("MacroFormForRequest", (form,), {"organization_id": user_organization_id(request)})

    def get_fields(self, request, obj=None):
        fields = [
            "name",
            "body",
            "internal",
            "status",
            "priority",
            "assignment",
            "assignee",
            "tags_add_text",
            "tags_remove_text",
        ]
        return ["organization", *fields] if request.user.is_superuser and obj is None else fields

    def save_model(self, request, obj, form, change):
        values = form.values()
        if change:
            macro_update(macro=Macro.objects.get(pk=obj.pk), values=values)
            return
        organization_id = form.cleaned_data["organization"].pk if request.user.is_superuser else None
        obj.pk = macro_create(organization_id=organization_id or request.user.organization_id, values=values).pk

    def delete_model(self, request, obj):
        macro_delete(macro=obj)

    def delete_queryset(self, request, queryset):
        for macro in queryset:
            macro_delete(macro=macro)


# --- the ticket page -------------------------------------------------------------------------------------------


class MacroPickerFormMixin:
    """The ticket form's "Macro" select: the organization's macros; the page's script fills the reply from
    the preview URL (`data-preview-url` + the macro's id)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["macro"]
        field.queryset = macro_list(organization_id=self.instance.organization_id)
        field.widget.attrs["data-preview-url"] = reverse(
            "admin:tickets_ticket_macro_preview_base", args=[self.instance.pk]
        )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("macro") is None:
            return cleaned
        if request_agent(self.request) is None:
            self.add_error("macro", "Somente atendentes ativos da organização podem aplicar macros.")
        if cleaned.get("attachments"):
            self.add_error("attachments", "Envie anexos numa resposta sem macro.")
        return cleaned

    class Media:
        js = ["macros/macro_picker.js"]


def with_macro_picker(form_class: type) -> type:
    macro = forms.ModelChoiceField(
        label="Macro",
        queryset=Macro.objects.none(),
        required=False,
        help_text=(
            "Preenche a mensagem (você pode editá-la) e a nota interna; ao salvar, aplica as ações da macro e "
            "envia a mensagem."
        ),
    )
    return type(f"{form_class.__name__}WithMacro", (MacroPickerFormMixin, form_class), {"macro": macro})


class MacroTicketAdminMixin:
    """Mixed into TicketAdmin: the "Macro" field (its "Responder" fieldset names it), the preview URL, and the save
    that applies the chosen macro through macro_apply instead of the plain reply."""

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None and "form" in kwargs:
            kwargs["form"] = with_macro_picker(kwargs["form"])
        return super().get_form(request, obj, change=change, **kwargs)

    def get_urls(self):
        view = self.admin_site.admin_view(self.macro_preview_view)
        return [
            path("<path:object_id>/macro/<str:macro_id>/", view, name="tickets_ticket_macro_preview"),
            path("<path:object_id>/macro/", view, name="tickets_ticket_macro_preview_base"),
            *super().get_urls(),
        ]

    def macro_preview_view(self, request, object_id, macro_id=None):
        """JSON for the page's script: another organization's ticket or macro is the 404 of a missing one."""
        ticket = self.get_object(request, object_id)
        if ticket is None or macro_id is None:
            raise Http404
        if not self.has_change_permission(request, ticket):
            raise PermissionDenied
        agent = request_agent(request)
        if agent is None or agent.organization_id != ticket.organization_id:
            raise PermissionDenied
        pk = parse_uuid(macro_id)
        macro = macro_list(organization_id=ticket.organization_id).select_related("status", "assignee")
        macro = macro.filter(pk=pk).first() if pk else None
        if macro is None:
            raise Http404
        return JsonResponse(macro_preview(ticket=ticket, macro=macro, agent=agent))

    def save_related(self, request, form, formsets, change):
        macro = form.cleaned_data.get("macro") if change else None
        if macro is None:
            return super().save_related(request, form, formsets, change)
        # The message goes with the macro, not through TicketAdmin's plain reply path, which finds it empty.
        body = form.cleaned_data.get("new_reply", "").strip()
        form.cleaned_data["new_reply"] = ""
        super().save_related(request, form, formsets, change)
        macro_apply(
            ticket=Ticket.objects.select_related("requester").get(pk=form.instance.pk),
            macro=macro,
            agent=request_agent(request),
            body=body,
            internal=form.cleaned_data.get("internal", False),
        )
        return None
