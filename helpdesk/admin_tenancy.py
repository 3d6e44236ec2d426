"""Tenancy for the admin: staff see and change only their organization's rows.

Every list, change page, delete, history, search and autocomplete (which asks
the related admin's get_queryset) goes through get_queryset here, and every
foreign-key choice through formfield_for_foreignkey, so an object of another
organization is a 404 whatever the URL. Superusers see everything,
with an organization filter.
"""

from django.contrib import admin, messages
from django.http import HttpResponseRedirect

from foundation.exceptions import Conflict, NotFound, ValidationFailed
from helpdesk.models import Agent, Organization
from helpdesk.selectors import active_agent_of


def user_organization_id(request):
    return None if request.user.is_superuser else request.user.organization_id


class PermissionGate:
    """The five has_*_permission methods of a ModelAdmin, written once. An admin says who may use it at all
    (`may_use`), which actions nobody takes here (`refused`: "add", "change", "delete"), and whether Django's
    model permission of the action is needed too (`model_permissions`)."""

    refused: tuple[str, ...] = ()
    model_permissions = True

    def may_use(self, request) -> bool:
        raise NotImplementedError

    def _gate(self, request, action: str) -> bool:
        return action not in self.refused and self.may_use(request)

    def has_module_permission(self, request):
        return self._gate(request, "module") and (not self.model_permissions or super().has_module_permission(request))

    def has_view_permission(self, request, obj=None):
        return self._gate(request, "view") and (not self.model_permissions or super().has_view_permission(request, obj))

    def has_add_permission(self, request):
        return self._gate(request, "add") and (not self.model_permissions or super().has_add_permission(request))

    def has_change_permission(self, request, obj=None):
        return self._gate(request, "change") and (
            not self.model_permissions or super().has_change_permission(request, obj)
        )

    def has_delete_permission(self, request, obj=None):
        return self._gate(request, "delete") and (
            not self.model_permissions or super().has_delete_permission(request, obj)
        )


class OrganizationScopedAdmin(PermissionGate, admin.ModelAdmin):
    """`organization_path` is the lookup from the model to its organization. Staff of an organization (and
    superusers) use it, with Django's model permissions."""

    organization_path = "organization"
    list_per_page = 50

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        if request.user.organization_id is None:
            return queryset.none()
        return queryset.filter(**{self.organization_path: request.user.organization_id})

    def get_list_filter(self, request):
        filters = list(super().get_list_filter(request))
        if request.user.is_superuser:
            filters.append(self.organization_path)
        return filters

    def _staff_of_an_organization(self, request) -> bool:
        return request.user.is_superuser or bool(request.user.is_staff and request.user.organization_id)

    def may_use(self, request) -> bool:
        return self._staff_of_an_organization(request)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        """A service refusing the save for what the form could not check (a partner reached a ticket's 20 tags in
        the second between the form's check and the save): Django's transaction of the save rolls all of it back,
        and the page comes again with the reason, not as a server error page."""
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except (ValidationFailed, Conflict, NotFound) as refused:
            self.message_user(request, refusal_text(refused), messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        organization_id = user_organization_id(request)
        if field is not None and organization_id is not None and hasattr(field, "queryset"):
            field.queryset = scope_to_organization(field.queryset, organization_id)
        return field


def refusal_text(refused: Exception) -> str:
    """A domain refusal as one line for the admin's messages."""
    if isinstance(refused, ValidationFailed):
        return " ".join(message for messages_ in refused.errors.values() for message in messages_)
    return " ".join(part for part in (refused.message, refused.detail) if part)


def scope_to_organization(queryset, organization_id):
    """Limit a choice queryset of any model that belongs to an organization."""
    model = queryset.model
    if model is Organization:
        return queryset.filter(pk=organization_id)
    if model is Agent or any(f.name == "organization" for f in model._meta.fields):
        return queryset.filter(organization_id=organization_id)
    if any(f.name == "ticket" for f in model._meta.fields):
        return queryset.filter(ticket__organization_id=organization_id)
    return queryset


def request_agent(request) -> Agent | None:
    """The active agent profile of the logged-in user, in their organization."""
    if not hasattr(request, "_helpdesk_agent"):
        request._helpdesk_agent = active_agent_of(request.user)
    return request._helpdesk_agent


class ReadOnlyOrganizationAdmin(OrganizationScopedAdmin):
    """Rows the services keep (audit records, usage counters): shown to the organization's staff for whom
    `may_read` holds, written by hand by nobody."""

    refused = ("add", "change", "delete")
    model_permissions = False

    def may_read(self, request) -> bool:
        return True

    def may_use(self, request) -> bool:
        return self.may_read(request) and self._staff_of_an_organization(request)
