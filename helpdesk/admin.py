"""Admin for organizations, users and agents (the site itself: helpdesk.admin_site)."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.utils.html import format_html
from rest_framework_simplejwt.token_blacklist import admin as token_admin
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken

from foundation.exceptions import AccessDenied, ValidationFailed
from helpdesk.actors import Actor
from helpdesk.admin_tenancy import (
    OrganizationScopedAdmin,
    PermissionGate,
    ReadOnlyOrganizationAdmin,
    request_agent,
    user_organization_id,
)
from helpdesk.models import Agent, AuditRecord, Organization, User
from helpdesk.permissions import MANAGE_PUBLIC_API_PERM
from helpdesk.services import (
    agent_create,
    agent_email_check,
    agent_set_active,
    agent_update,
    avatar_check,
    organization_added,
    organization_rename,
    organization_set_active,
    password_check,
    user_changes_record,
    user_password_changed_record,
    user_rank_check,
    user_snapshot,
)


class SuperuserOnlyAdmin(PermissionGate, admin.ModelAdmin):
    """Cross-organization records: only superusers manage them."""

    model_permissions = False

    def may_use(self, request) -> bool:
        return request.user.is_superuser


@admin.register(Organization)
class OrganizationAdmin(SuperuserOnlyAdmin):
    list_display = ["name", "is_active", "created_at"]
    list_filter = ["is_active"]
    search_fields = ["name"]
    actions = ["suspend", "restore"]

    def save_model(self, request, obj, form, change):
        # Renaming, suspending or restoring from the page are the services' (recorded; a restore releases
        # what was held).
        if not change:
            super().save_model(request, obj, form, change)
            organization_added(organization=obj)
            return
        organization_rename(organization=obj, name=obj.name)
        organization_set_active(organization=obj, is_active=obj.is_active)

    @admin.action(description="Suspender as organizações selecionadas", permissions=["change"])
    def suspend(self, request, queryset):
        for organization in queryset:
            organization_set_active(organization=organization, is_active=False)

    @admin.action(description="Reativar as organizações selecionadas", permissions=["change"])
    def restore(self, request, queryset):
        for organization in queryset:
            organization_set_active(organization=organization, is_active=True)


@admin.register(User)
class UserAdmin(SuperuserOnlyAdmin, DjangoUserAdmin):
    ordering = ["email"]
    list_display = ["email", "name", "organization", "is_staff", "is_active"]
    list_filter = ["organization", "is_staff", "is_superuser", "is_active", "groups"]
    search_fields = ["email", "name"]
    fieldsets = [
        (None, {"fields": ["email", "password"]}),
        ("Dados", {"fields": ["name", "organization"]}),
        ("Permissões", {"fields": ["is_active", "is_staff", "is_superuser", "groups", "user_permissions"]}),
    ]
    add_fieldsets = [
        (None, {"classes": ["wide"], "fields": ["email", "name", "organization", "password1", "password2"]})
    ]

    # Django's forms write accounts; the trail records what they wrote (helpdesk.services.user_changes_record).
    def save_model(self, request, obj, form, change):
        form.audited_before = user_snapshot(User.objects.get(pk=obj.pk)) if change else None
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)  # groups and permissions are saved here
        user_changes_record(user=form.instance, before=form.audited_before, after=user_snapshot(form.instance))

    def delete_model(self, request, obj):
        user_changes_record(user=obj, before=user_snapshot(obj), after=None)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for user in queryset:
            user_changes_record(user=user, before=user_snapshot(user), after=None)
        super().delete_queryset(request, queryset)

    def user_change_password(self, request, id, form_url=""):  # noqa: A002 (Django's own signature)
        def password_of():
            return User.objects.filter(pk=unquote(id)).values_list("password", flat=True).first()

        before = password_of()
        response = super().user_change_password(request, id, form_url)
        if before is not None and password_of() != before:  # set, or password login disabled
            user_password_changed_record(user=self.get_object(request, unquote(id)))
        return response


class AgentChangeForm(forms.ModelForm):
    # A plain file field: helpdesk.services.avatar_check judges the content, whatever the file's name.
    avatar = forms.FileField(label="avatar", required=False)
    request = None  # set by AgentAdmin.get_form

    def clean_is_active(self):
        is_active = self.cleaned_data["is_active"]
        if self.instance.pk is not None and is_active != self.instance.is_active:
            try:  # the service's own rule, shown on the field rather than as an error page
                user_rank_check(actor=self.request.user, target=self.instance.user)
            except AccessDenied as error:
                raise forms.ValidationError(error.detail)
        return is_active

    class Meta:
        model = Agent
        fields = ["name", "avatar", "is_active"]

    def clean_avatar(self):
        avatar = self.cleaned_data.get("avatar")
        if avatar and avatar != self.instance.avatar:
            try:
                avatar_check(avatar)
            except ValidationFailed as error:
                raise forms.ValidationError(error.errors["avatar"])
        return avatar


class AgentAddForm(AgentChangeForm):
    email = forms.EmailField(label="e-mail")
    password = forms.CharField(label="senha", required=False, widget=forms.PasswordInput, help_text="Opcional.")

    def clean_email(self):
        try:  # the rule and the words of every door (helpdesk.services.agent_email_check)
            return agent_email_check(email=self.cleaned_data["email"])
        except ValidationFailed as error:
            raise forms.ValidationError(error.errors["email"])

    def clean(self):
        cleaned = super().clean()
        password = cleaned.get("password")
        if password:
            try:  # the validators every door applies (helpdesk.services.password_check)
                password_check(password=password, email=cleaned.get("email", ""), name=cleaned.get("name", ""))
            except ValidationFailed as error:
                self.add_error("password", error.errors["senha"])
        return cleaned


@admin.register(Agent)
class AgentAdmin(OrganizationScopedAdmin):
    list_display = ["name", "email", "photo", "is_active"]
    list_filter = ["is_active"]
    search_fields = ["name", "user__email"]
    list_select_related = ["user"]
    actions = ["activate", "deactivate"]
    ordering = ["name"]
    # Agents are deactivated (offboarding), never deleted: their replies keep their author, their tickets
    # their assignee.
    refused = ("delete",)

    def get_form(self, request, obj=None, change=False, **kwargs):
        base = AgentChangeForm if obj is not None else AgentAddForm
        kwargs["form"] = type(f"{base.__name__}ForRequest", (base,), {"request": request})
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        return (
            ["name", "avatar", "is_active"] if obj is not None else ["name", "email", "password", "avatar", "is_active"]
        )

    @admin.display(description="e-mail", ordering="user__email")
    def email(self, agent: Agent) -> str:
        return agent.user.email

    @admin.display(description="foto")
    def photo(self, agent: Agent) -> str:
        return format_html("<span>{}</span>", "sim" if agent.avatar else "—")

    def has_add_permission(self, request):
        # An agent belongs to the adding user's organization; superusers use create_agent.
        return user_organization_id(request) is not None and super().has_add_permission(request)

    def save_model(self, request, obj, form, change):
        if change:
            data = form.cleaned_data
            agent_update(
                agent=Agent.objects.get(pk=obj.pk),
                name=data["name"],
                is_active=data["is_active"],
                avatar=data["avatar"] if "avatar" in form.changed_data else None,
                actor=Actor.of_agent(request_agent(request)),
                by=request.user,
            )
            return
        agent = agent_create(
            organization=request.user.organization,
            name=form.cleaned_data["name"],
            email=form.cleaned_data["email"],
            password=form.cleaned_data.get("password") or None,
            is_active=form.cleaned_data["is_active"],
            avatar=form.cleaned_data.get("avatar"),
        )
        obj.pk = agent.pk

    @admin.action(description="Ativar atendentes selecionados", permissions=["change"])
    def activate(self, request, queryset):
        self._set_active(request, queryset, is_active=True)

    @admin.action(description="Desativar atendentes selecionados", permissions=["change"])
    def deactivate(self, request, queryset):
        self._set_active(request, queryset, is_active=False)

    def _set_active(self, request, queryset, *, is_active: bool) -> None:
        refused = []
        for agent in queryset.select_related("user"):
            try:
                agent_set_active(agent=agent, is_active=is_active, by=request.user)
            except AccessDenied as error:
                refused.append(agent.name)
                detail = error.detail
        if refused:
            self.message_user(request, f"{detail} Não alterado(s): {', '.join(refused)}.", messages.ERROR)


# simplejwt's admin shows the whole refresh token on its page: a credential. Ours shows everything else.
admin.site.unregister(OutstandingToken)
admin.site.unregister(BlacklistedToken)


@admin.register(OutstandingToken)
class OutstandingTokenAdmin(SuperuserOnlyAdmin, token_admin.OutstandingTokenAdmin):
    exclude = ["token"]

    refused = ("add", "change")

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in self.model._meta.fields if field.name != "token"]


@admin.register(BlacklistedToken)
class BlacklistedTokenAdmin(SuperuserOnlyAdmin, token_admin.BlacklistedTokenAdmin):
    fields = ["token_jti", "token_user", "token_created_at", "token_expires_at", "blacklisted_at"]
    readonly_fields = fields
    refused = ("add", "change")


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyOrganizationAdmin):
    """The audit trail, read-only, for whoever manages the organization's API (as GET /api/auditoria)."""

    list_display = ["created_at", "action", "actor_type", "actor_name", "ip", "resource_type", "resource_id"]
    list_filter = ["action", "actor_type", "resource_type"]
    search_fields = ["actor_id", "resource_id", "actor_name"]
    date_hierarchy = "created_at"
    ordering = ["-created_at", "-id"]
    readonly_fields = [
        "created_at",
        "action",
        "actor_type",
        "actor_id",
        "actor_name",
        "ip",
        "user_agent",
        "resource_type",
        "resource_id",
        "changes",
    ]
    fields = readonly_fields

    def may_read(self, request) -> bool:
        return request.user.is_superuser or request.user.has_perm(MANAGE_PUBLIC_API_PERM)
