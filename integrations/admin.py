"""Admin for API credentials, webhooks and the delivery log.

Guarded by api_publica:gerenciar like the management API, and written through
the same services: the key and the secret are shown once, never stored readable
(the key) or shown again (the secret).
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from foundation.exceptions import ValidationFailed
from helpdesk.actors import Actor
from helpdesk.admin_tenancy import OrganizationScopedAdmin, request_agent, user_organization_id
from helpdesk.permissions import MANAGE_PUBLIC_API_PERM
from integrations.api.privacy_serializers import ExportedDeliveryOut
from integrations.events import delivery_resend
from integrations.exceptions import OrganizationSuspended, WebhookInactive
from integrations.models import (
    SUBSCRIBABLE_EVENTS,
    ApiCredential,
    EventKind,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)
from integrations.privacy import contact_export
from integrations.scopes import Scope
from integrations.services import (
    credential_create,
    credential_limit_check,
    credential_restrictions_clean,
    credential_revoke,
    webhook_create,
    webhook_limit_check,
    webhook_update,
    webhook_validate,
)
from tickets.admin import ContactAdmin
from tickets.models import Contact
from tickets.payloads import TICKET_BLOCKS
from tickets.services import contact_anonymize

_FIELD_NAMES = {"nome": "name", "url": "url", "eventos": "events", "webhook": None}


class PublicApiAdmin(OrganizationScopedAdmin):
    """Staff of an organization need api_publica:gerenciar here, as in the API (not Django's model permissions)."""

    refused = ("delete",)
    model_permissions = False

    def _may_manage(self, request) -> bool:
        return request.user.is_superuser or request.user.has_perm(MANAGE_PUBLIC_API_PERM)

    def may_use(self, request) -> bool:
        return self._may_manage(request) and self._staff_of_an_organization(request)

    def has_add_permission(self, request):
        # What is added belongs to the adding user's organization: superusers, who have none, add nothing.
        return super().has_add_permission(request) and user_organization_id(request) is not None


class CredentialAdminForm(forms.ModelForm):
    """Creation: the name and what the key may do, validated by the service (credential_restrictions_clean)."""

    scope_choices = forms.MultipleChoiceField(
        label="escopos",
        choices=Scope.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Nenhum marcado: todos, inclusive os que vierem depois.",
    )
    expires_at = forms.DateTimeField(label="expira em", required=False, help_text="Vazio: não expira.")
    networks = forms.CharField(
        label="redes permitidas",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Uma rede CIDR por linha (203.0.113.0/24); vazio: qualquer origem.",
    )

    class Meta:
        model = ApiCredential
        fields = ["name"]

    def clean(self):
        cleaned = super().clean()
        try:
            self.restrictions = credential_restrictions_clean(
                scopes=cleaned.get("scope_choices") or None,
                expires_at=cleaned.get("expires_at"),
                allowed_networks=[line for line in (cleaned.get("networks") or "").split() if line] or None,
            )
        except ValidationFailed as error:
            fields = {"escopos": "scope_choices", "expira_em": "expires_at", "redes_permitidas": "networks"}
            for field, messages_ in error.errors.items():
                self.add_error(fields[field], messages_)
        return cleaned

    def _post_clean(self):
        pass  # the service validates and saves; nothing is written by the form


@admin.register(ApiCredential)
class ApiCredentialAdmin(PublicApiAdmin):
    list_display = [
        "name",
        "key_prefix",
        "is_active",
        "scope_list",
        "expires_at",
        "last_used_at",
        "revoked_at",
        "created_by",
        "created_at",
    ]
    list_filter = ["is_active"]
    search_fields = ["name", "key_prefix"]
    list_select_related = ["created_by"]
    actions = ["revoke"]
    ordering = ["-created_at"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None:
            return super().get_form(request, obj, change=change, **kwargs)

        class LimitedForm(CredentialAdminForm):
            def clean(self):
                cleaned = super().clean()
                try:
                    credential_limit_check(organization=request.user.organization)
                except ValidationFailed as error:
                    self.add_error(None, error.errors["credencial"])
                return cleaned

        return LimitedForm

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["name", "scope_choices", "expires_at", "networks"]
        return [
            "name",
            "key_prefix",
            "is_active",
            "scope_list",
            "expires_at",
            "network_list",
            "last_used_at",
            "revoked_at",
            "created_by",
            "created_at",
        ]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.get_fields(request, obj)

    @admin.display(description="escopos")
    def scope_list(self, credential) -> str:
        return "todos" if credential.scopes is None else ", ".join(credential.scopes)

    @admin.display(description="redes permitidas")
    def network_list(self, credential) -> str:
        return "qualquer origem" if credential.allowed_networks is None else ", ".join(credential.allowed_networks)

    def save_model(self, request, obj, form, change):
        if change:
            return
        credential, key = credential_create(
            organization=request.user.organization,
            name=form.cleaned_data["name"],
            created_by=request.user,
            **form.restrictions,
        )
        obj.pk = credential.pk
        # Messages are shown once, on the next page, and kept nowhere else.
        self.message_user(
            request, f"Credencial criada. Guarde a chave: ela não será exibida novamente: {key}", messages.WARNING
        )

    @admin.action(description="Revogar as credenciais selecionadas", permissions=["change"])
    def revoke(self, request, queryset):
        for credential in queryset:
            credential_revoke(credential=credential)
        self.message_user(request, "Credenciais revogadas.", messages.SUCCESS)


class WebhookAdminForm(forms.ModelForm):
    url = forms.URLField(label="URL", max_length=2048, assume_scheme="https")
    events = forms.MultipleChoiceField(
        label="eventos",
        choices=[(kind, EventKind(kind).label) for kind in SUBSCRIBABLE_EVENTS],
        widget=forms.CheckboxSelectMultiple,
    )
    blocks = forms.MultipleChoiceField(
        label="incluir",
        choices=[(name, name) for name in TICKET_BLOCKS],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="Blocos que as entregas acrescentam ao ticket (como `incluir` na API de parceiros).",
    )
    regenerate_secret = forms.BooleanField(label="Regenerar o segredo", required=False)

    class Meta:
        model = Webhook
        fields = ["name", "url", "events", "blocks", "is_active"]

    def _post_clean(self):
        pass  # the services validate and save; nothing is written by the form


@admin.register(Webhook)
class WebhookAdmin(PublicApiAdmin):
    form = WebhookAdminForm
    list_display = ["name", "url", "event_list", "is_active", "deactivated_at", "deactivation_reason", "updated_at"]
    list_filter = ["is_active"]
    search_fields = ["name", "url"]
    actions = ["regenerate_secrets", "activate"]
    readonly_fields = ["deactivated_at", "deactivation_reason", "failing_since", "slow_since"]

    def get_fields(self, request, obj=None):
        fields = ["name", "url", "events", "blocks", "is_active"]
        if obj is None:
            return fields
        return [*fields, "regenerate_secret", "deactivated_at", "deactivation_reason", "failing_since", "slow_since"]

    def has_delete_permission(self, request, obj=None):
        return self.has_change_permission(request, obj)

    @admin.display(description="eventos")
    def event_list(self, webhook: Webhook) -> str:
        return ", ".join(webhook.events)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            webhook = webhook_update(
                webhook=Webhook.objects.get(pk=obj.pk),
                name=data["name"],
                url=data["url"],
                events=data["events"],
                blocks=data["blocks"],
                is_active=data["is_active"],
                regenerate_secret=data.get("regenerate_secret", False),
            )
            if data.get("regenerate_secret"):
                self._show_secret(request, webhook)
            return
        webhook = webhook_create(
            organization=request.user.organization,
            name=data["name"],
            url=data["url"],
            events=data["events"],
            blocks=data["blocks"],
            is_active=data["is_active"],
        )
        obj.pk = webhook.pk
        self._show_secret(request, webhook)

    def _show_secret(self, request, webhook: Webhook) -> None:
        self.message_user(
            request,
            f"Segredo do webhook {webhook.name}. Guarde o segredo: ele não será exibido novamente: {webhook.secret}",
            messages.WARNING,
        )

    def get_form(self, request, obj=None, change=False, **kwargs):
        form_class = super().get_form(request, obj, change=change, **kwargs)

        class ValidatingForm(form_class):
            def clean(self):
                cleaned = super().clean()
                if self.errors:
                    return cleaned
                try:
                    _validate_with_service(obj, cleaned)
                    if obj is None:
                        webhook_limit_check(organization=request.user.organization)
                except ValidationFailed as error:
                    for field, field_errors in error.errors.items():
                        self.add_error(_FIELD_NAMES.get(field), field_errors)
                return cleaned

        return ValidatingForm

    @admin.action(description="Regenerar o segredo dos webhooks selecionados", permissions=["change"])
    def regenerate_secrets(self, request, queryset):
        for webhook in queryset:
            self._show_secret(request, webhook_update(webhook=webhook, regenerate_secret=True))

    @admin.action(description="Ativar os webhooks selecionados", permissions=["change"])
    def activate(self, request, queryset):
        for webhook in queryset.filter(is_active=False):
            webhook_update(webhook=webhook, is_active=True)


def _validate_with_service(webhook, cleaned) -> None:
    """The API's validation, without writing: the same rules through every door."""
    webhook_validate(name=cleaned.get("name"), url=cleaned.get("url"), events=cleaned.get("events"))


class DeliveryAttemptInline(admin.TabularInline):
    model = WebhookDeliveryAttempt
    fields = ["number", "attempted_at", "status_code", "duration_ms", "succeeded", "error", "response_excerpt"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_view_permission(self, request, obj=None):
        # Attempts are part of the delivery log: whoever may see the delivery sees them.
        return request.user.is_superuser or request.user.has_perm(MANAGE_PUBLIC_API_PERM)

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(PublicApiAdmin):
    organization_path = "webhook__organization"
    inlines = [DeliveryAttemptInline]
    list_display = ["id", "webhook", "event_kind", "status", "attempt_count", "last_attempt_at", "created_at"]
    list_filter = ["status", "event__kind"]
    list_select_related = ["webhook", "event"]
    search_fields = ["id", "webhook__name"]
    fields = [
        "id",
        "webhook",
        "event_kind",
        "status",
        "attempt_count",
        "next_attempt_at",
        "last_attempt_at",
        "created_at",
    ]
    readonly_fields = fields
    actions = ["send_again"]
    ordering = ["-created_at"]
    refused = ("add", "change", "delete")

    def has_resend_permission(self, request):
        """The log is read-only; sending again is managing the public API, as in the management API."""
        return self.may_use(request)

    @admin.display(description="evento", ordering="event__kind")
    def event_kind(self, delivery: WebhookDelivery) -> str:
        return delivery.event.kind

    @admin.action(description="Enviar novamente", permissions=["resend"])
    def send_again(self, request, queryset):
        count = 0
        for delivery in queryset.select_related("webhook", "event"):
            try:
                delivery_resend(delivery=delivery)
            except (WebhookInactive, OrganizationSuspended):
                continue
            count += 1
        self.message_user(request, f"{count} entrega(s) enviada(s) novamente.", messages.SUCCESS)


class ContactPrivacyAdmin(ContactAdmin):
    """The contact page with the data-subject requests: "Anonimizar" (after a confirmation page, as Django's
    delete) and "Exportar" (the JSON document), through the API's services and its permission."""

    actions = ["anonymize_selected"]
    readonly_fields = [*ContactAdmin.readonly_fields, "anonymized_at", "export_link"]
    fields = [*ContactAdmin.fields, "anonymized_at", "export_link"]

    def has_privacy_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser or request.user.has_perm(MANAGE_PUBLIC_API_PERM)

    def get_urls(self):
        export = path(
            "<path:object_id>/exportar/", self.admin_site.admin_view(self.export_view), name="tickets_contact_export"
        )
        return [export, *super().get_urls()]

    @admin.display(description="dados do titular")
    def export_link(self, contact: Contact) -> str:
        if not contact.pk:
            return "-"
        return format_html(
            '<a href="{}">Exportar (JSON)</a>', reverse("admin:tickets_contact_export", args=[contact.pk])
        )

    def export_view(self, request, object_id):
        contact = self.get_object(request, object_id)  # another organization's: the 404 of a missing one
        if contact is None:
            raise Http404
        if not self.has_privacy_permission(request):
            raise PermissionDenied
        document = contact_export(contact=contact, request=request)
        document["entregas"] = ExportedDeliveryOut(document["entregas"], many=True).data
        response = JsonResponse(document, json_dumps_params={"ensure_ascii": False, "indent": 2})
        response["Content-Disposition"] = f'attachment; filename="contato-{contact.pk}.json"'
        return response

    @admin.action(description="Anonimizar os contatos selecionados", permissions=["privacy"])
    def anonymize_selected(self, request, queryset):
        if request.POST.get("post") != "yes":
            context = {
                **self.admin_site.each_context(request),
                "title": "Anonimizar contatos?",
                "opts": self.model._meta,
                "contacts": list(queryset),
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, "admin/tickets/contact/anonymize_confirmation.html", context)
        actor = Actor.of_agent(request_agent(request))
        for contact in queryset:
            contact_anonymize(contact=contact, actor=actor)
        self.message_user(request, f"{len(queryset)} contato(s) anonimizado(s).", messages.SUCCESS)
        return None


admin.site.unregister(Contact)
admin.site.register(Contact, ContactPrivacyAdmin)
