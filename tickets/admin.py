"""Support staff's screen: tickets with their thread, contacts and statuses.

Every change goes through tickets.services, so webhooks fire exactly as from
the agent panel API.
"""

import contextlib
import re
from datetime import datetime, time, timedelta

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import F, Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import formats, timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.timesince import timesince

from foundation.exceptions import ApplicationError, ValidationFailed
from foundation.ids import parse_uuid
from helpdesk.actors import SYSTEM, Actor
from helpdesk.admin_tenancy import (
    OrganizationScopedAdmin,
    ReadOnlyOrganizationAdmin,
    request_agent,
    user_organization_id,
)
from helpdesk.models import Agent, AuditRecord, Organization
from macros.admin import MacroTicketAdminMixin
from sla.policies import TARGET_LABELS
from sla.rules import TARGETS
from tickets.attachments.admin_fields import MultipleFileField, attachment_links, check_attachments
from tickets.attachments.services import reply_create_with_attachments
from tickets.bulk import BulkChange, tickets_update_in_bulk
from tickets.exceptions import format_bytes
from tickets.fields.admin import (
    CustomFieldAdmin,  # noqa: F401 (registered)
    CustomFieldListFilter,
    changed_values,
    value_form_fields,
    value_initial,
)
from tickets.fields.rules import custom_values_clean
from tickets.fields.selectors import field_definitions
from tickets.merge_admin import TicketMergeAdminMixin
from tickets.models import (
    EMAIL_MAX_LENGTH,
    AttachmentUsage,
    Contact,
    Priority,
    Reply,
    ReplyOrigin,
    StatusCategory,
    Ticket,
    TicketRating,
    TicketStatus,
)
from tickets.queues import (
    DEFAULT_QUEUE,
    QUEUES,
    QUEUES_BY_SLUG,
    awaits_agent,
    queue_counts,
    queue_tickets,
    with_last_messages,
)
from tickets.selectors import satisfaction_report, tag_counts, ticket_change_history
from tickets.service_levels import SLA_FILTERS, SLA_STATES, sla_condition, sla_state, sla_view
from tickets.services import (
    RequesterData,
    TagsChange,
    contact_delete,
    contact_update,
    reply_edit_as_agent,
    status_check,
    status_create,
    status_delete,
    status_update,
    ticket_delete,
    ticket_fields_set,
    ticket_open,
    ticket_resolve,
    ticket_update,
    ticket_update_check,
)
from tickets.tags import MAX_TAGS, TOO_MANY_TAGS, tags_condition, tags_normalize

LABELS_BY_NAME = {TARGETS[kind]: label for kind, label in TARGET_LABELS.items()}  # `tipo` -> label
_COLOR_RE = re.compile(r"^#[0-9A-Fa-f]{6}$")
FILES_PER_REPLY = 10


def status_badge(status: TicketStatus) -> str:
    color = status.color if _COLOR_RE.match(status.color or "") else "#6B7280"
    return format_html(
        '<span style="background:{};color:#fff;padding:2px 8px;border-radius:10px;white-space:nowrap">{}</span>',
        color,
        status.name,
    )


def _when(instant) -> str:
    """An instant as the admin shows every date (its time zone and format); a dash for none."""
    return formats.localize(timezone.template_localtime(instant)) if instant is not None else "—"


def status_author(record: AuditRecord) -> str:
    """Who a status change's audit record names, as agents read it: every partner API write is the
    customer's (a reply, resolver, reabrir), an admin or panel write its user's, the rest the system's."""
    if record.actor_type == AuditRecord.ACTOR_CREDENTIAL:
        return "cliente via API"
    if record.actor_type == AuditRecord.ACTOR_USER:
        return record.actor_name
    return "sistema"


def _refusal_text(refused: ApplicationError | ValidationFailed) -> str:
    if isinstance(refused, ValidationFailed):
        return " ".join(message for messages_ in refused.errors.values() for message in messages_)
    return f"{refused.message} {refused.detail}"


def change_summary(record: AuditRecord, agent_names: dict[str, str]) -> str:
    """One change as agents read it: "status Aberto → Resolvido", "tags +vip −antiga"."""
    changes = record.changes
    if "status" in changes:
        return f"status {changes['status'].get('antes')} → {changes['status'].get('depois')}"
    if "prioridade" in changes:
        before, after = (changes["prioridade"].get(side) or "sem prioridade" for side in ("antes", "depois"))
        return f"prioridade {before} → {after}"
    if "atendente_id" in changes:

        def named(side: str) -> str:
            agent_id = changes["atendente_id"].get(side)
            return agent_names.get(agent_id, "atendente excluído") if agent_id else "ninguém"

        return f"atendente {named('antes')} → {named('depois')}"
    if "tags" in changes:
        before, after = set(changes["tags"].get("antes") or []), set(changes["tags"].get("depois") or [])
        moves = [*(f"+{tag}" for tag in sorted(after - before)), *(f"−{tag}" for tag in sorted(before - after))]
        return f"tags {' '.join(moves)}"
    return record.action


class TicketChangeList(ChangeList):
    """The list's rows carry the customer's last activity and the last public message's side (one statement)."""

    def get_queryset(self, request, exclude_parameters=None):
        return with_last_messages(super().get_queryset(request, exclude_parameters))


class QueueFilter(admin.SimpleListFilter):
    """The agents' queues (tickets.queues): "Meus tickets" first; shown as the bar above the list too."""

    title = "fila"
    parameter_name = "fila"

    def lookups(self, request, model_admin):
        return [(queue.slug, queue.label) for queue in QUEUES]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        if self.value() not in QUEUES_BY_SLUG:
            raise IncorrectLookupParameters(f"fila inválida: {self.value()!r}")
        return queue_tickets(queryset, self.value(), agent=request_agent(request), now=timezone.now())


class StatusCategoryFilter(admin.SimpleListFilter):
    title = "categoria do status"
    parameter_name = "categoria"

    def lookups(self, request, model_admin):
        return StatusCategory.choices

    def queryset(self, request, queryset):
        return queryset.filter(status__category=self.value()) if self.value() else queryset


class SlaFilter(admin.SimpleListFilter):
    """The queue's SLA views: tickets with a target at risk, or breached (tickets.service_levels.sla_condition)."""

    title = "SLA"
    parameter_name = "sla"

    def lookups(self, request, model_admin):
        return [("em_risco", "SLA em risco"), ("violado", "SLA violado")]

    def queryset(self, request, queryset):
        return queryset.filter(sla_condition(self.value())) if self.value() in SLA_FILTERS else queryset


class AssigneeFilter(admin.SimpleListFilter):
    """Only the agents of the user's organization are offered."""

    title = "atendente"
    parameter_name = "atendente"
    field = "assignee"

    def lookups(self, request, model_admin):
        agents = Agent.objects.order_by("name")
        organization_id = user_organization_id(request)
        if organization_id is not None:
            agents = agents.filter(organization_id=organization_id)
        return [("nenhum", "Sem atendente"), *((str(agent.pk), agent.name) for agent in agents)]

    def queryset(self, request, queryset):
        if self.value() == "nenhum":
            return queryset.filter(**{f"{self.field}__isnull": True})
        if self.value():
            agent_id = parse_uuid(self.value())
            if agent_id is None:
                raise IncorrectLookupParameters(f"atendente inválido: {self.value()!r}")
            return queryset.filter(**{f"{self.field}_id": agent_id})
        return queryset


class RatedAgentFilter(AssigneeFilter):
    """A rating's agent (the one who resolved the ticket), offered as the assignees are."""

    field = "agent"


class TagFilter(admin.SimpleListFilter):
    """The organization's tags (each with how many tickets carry it); the list keeps the tickets that have it."""

    title = "tag"
    parameter_name = "tag"

    def lookups(self, request, model_admin):
        organization_id = user_organization_id(request)
        if organization_id is None:  # a superuser sees every organization: no one list of tags
            return []
        counts = tag_counts(organization=Organization(pk=organization_id))
        return [(tag.name, f"{tag.name} ({tag.tickets})") for tag in counts]

    def queryset(self, request, queryset):
        if not self.value():
            return queryset
        try:
            tags = tags_normalize([self.value()])
        except ValidationFailed:
            raise IncorrectLookupParameters(f"tag inválida: {self.value()!r}") from None
        return queryset.filter(tags_condition(tags))


def tags_text(tags) -> str:
    return ", ".join(tags)


class ReplyThreadForm(forms.ModelForm):
    """A row of the thread: only the agent's own replies and notes are editable."""

    agent: Agent | None = None

    class Meta:
        model = Reply
        fields = ["body"]
        widgets = {"body": forms.Textarea(attrs={"rows": 3, "cols": 70})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        own = (
            self.agent is not None
            and self.instance.origin == ReplyOrigin.AGENT
            and self.instance.author_agent_id == self.agent.pk
        )
        self.fields["body"].disabled = not own
        self.fields["body"].label = "Mensagem"


class ReplyThreadInline(admin.TabularInline):
    model = Reply
    form = ReplyThreadForm
    verbose_name = "mensagem"
    verbose_name_plural = "conversa (em ordem; notas internas nunca saem para o parceiro)"
    fields = ["created_at", "visibility", "author", "origin", "body", "edited", "files"]
    readonly_fields = ["created_at", "visibility", "author", "origin", "edited", "files"]
    extra = 0
    can_delete = False
    ordering = ["created_at", "id"]

    def get_queryset(self, request):
        queryset = super().get_queryset(request).select_related("author_agent", "author_contact")
        return queryset.prefetch_related("attachments")

    def get_formset(self, request, obj=None, **kwargs):
        kwargs["form"] = type("ReplyThreadFormForAgent", (ReplyThreadForm,), {"agent": request_agent(request)})
        return super().get_formset(request, obj, **kwargs)

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="tipo")
    def visibility(self, reply: Reply) -> str:
        if reply.is_internal:
            kind = format_html(
                '<strong class="nota-interna" style="background:#FEF3C7;color:#92400E;padding:2px 6px">{}</strong>',
                "Nota interna",
            )
        else:
            kind = format_html('<span class="resposta-publica" style="color:#065F46">{}</span>', "Pública")
        if reply.merged_from_number is None:
            return kind
        # Moved here by a merge (tickets.merging): the ticket it was written in.
        return format_html('{} <span class="mesclado-de">do #{}</span>', kind, reply.merged_from_number)

    @admin.display(description="anexos")
    def files(self, reply: Reply) -> str:
        return attachment_links(reply)

    @admin.display(description="autor")
    def author(self, reply: Reply) -> str:
        if reply.author_agent_id:
            return f"{reply.author_agent.name} (atendente)"
        contact = reply.author_contact
        return f"{contact.name} (cliente)" if contact else "Sistema"  # a merge's notes (tickets.merging)


class TicketAdminForm(forms.ModelForm):
    new_reply = forms.CharField(
        label="Nova mensagem",
        required=False,
        max_length=65535,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="Deixe em branco para só alterar status, atendente ou prioridade.",
    )
    internal = forms.BooleanField(label="Nota interna (não visível para o cliente nem para o parceiro)", required=False)
    tags_text = forms.CharField(
        label="Tags",
        required=False,
        max_length=4000,
        widget=forms.TextInput(attrs={"size": 80}),
        # The page sends back the tags it showed: what changed is counted against them, not against the row now.
        show_hidden_initial=True,
        help_text=(
            f"Separadas por vírgula, no máximo {MAX_TAGS}. Cada uma vira minúsculas, com os espaços internos "
            'trocados por um hífen ("Cliente VIP" vira cliente-vip). Só o que você mudar aqui muda: tags que o '
            "parceiro acrescentar enquanto isso ficam."
        ),
    )
    attachments = MultipleFileField(
        label="Anexos",
        required=False,
        help_text=(
            f"Até {FILES_PER_REPLY} arquivos com a mensagem: imagens, PDF, texto, CSV, documentos de escritório e ZIP. "
            "Os de uma nota interna nunca saem para o parceiro."
        ),
    )

    request = None
    # ticket_update's error keys (the panel API's field names) on this form's fields.
    SERVICE_FIELDS = {"status_id": "status", "atendente_id": "assignee", "prioridade": "priority"}

    class Meta:
        model = Ticket
        fields = ["status", "assignee", "priority"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tags_text"].initial = tags_text(self.instance.tags)
        # New assignments go to active agents; an inactive current assignee stays until changed.
        assignee = self.fields["assignee"]
        assignee.queryset = assignee.queryset.filter(Q(is_active=True) | Q(pk=self.instance.assignee_id))
        for name in ("status", "assignee"):  # statuses and agents are managed on their own pages
            widget = self.fields[name].widget
            widget.can_add_related = widget.can_change_related = widget.can_delete_related = False
            widget.can_view_related = False
        # The organization's custom fields (declared by TicketAdmin.get_form), with the ticket's values.
        self.initial.update(
            {name: value for name, value in value_initial(self.instance).items() if name in self.fields}
        )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("new_reply", "").strip() and request_agent(self.request) is None:
            raise forms.ValidationError("Somente atendentes ativos da organização podem responder.")
        check_attachments(self, cleaned, max_files=FILES_PER_REPLY)
        self._clean_tags(cleaned)
        try:
            ticket_update_check(
                ticket=self.instance,
                status=cleaned.get("status"),
                assignee=cleaned.get("assignee"),
                priority=cleaned.get("priority"),
            )
        except ValidationFailed as error:
            for key, messages_ in error.errors.items():
                self.add_error(self.SERVICE_FIELDS[key], messages_)
        try:
            custom_values_clean(
                definitions=field_definitions(self.instance.organization_id), values=changed_values(self), actor=SYSTEM
            )
        except ValidationFailed as error:
            for key, messages_ in error.errors.items():
                self.add_error(f"campo_{key.removeprefix('campos.')}", messages_)
        return cleaned

    def _clean_tags(self, cleaned) -> None:
        """The tags as typed, normalised; what changed is against what the page showed (`tags_add`, `tags_remove`),
        so a tag the partner added meanwhile stays."""
        typed = [part for part in (cleaned.get("tags_text") or "").split(",") if part.strip()]
        try:
            wanted = tags_normalize(typed, field="tags_text")
        except ValidationFailed as error:
            self.add_error("tags_text", error.errors["tags_text"])
            return
        if len(wanted) > MAX_TAGS:
            self.add_error("tags_text", TOO_MANY_TAGS)
            return
        shown_text = self.data.get(self.add_initial_prefix("tags_text"))
        shown = set(self.instance.tags)
        if shown_text is not None:
            with contextlib.suppress(ValidationFailed):  # not what the page wrote: judged against the row
                shown = set(tags_normalize([part for part in shown_text.split(",") if part.strip()]))
        cleaned["tags_add"] = sorted(set(wanted) - shown)
        cleaned["tags_remove"] = sorted(shown - set(wanted))


class TicketAddForm(forms.ModelForm):
    """A ticket an agent opens for a requester: found or made as for a partner's ticket (tickets.services)."""

    requester_name = forms.CharField(label="Nome do solicitante", max_length=255)
    requester_email = forms.EmailField(label="E-mail do solicitante", required=False, max_length=254)
    requester_phone = forms.CharField(label="Telefone do solicitante", required=False, max_length=32)
    requester_external_id = forms.CharField(
        label="ID externo do solicitante",
        required=False,
        max_length=255,
        help_text="O id do cliente no sistema do parceiro: um contato com o mesmo id é reaproveitado.",
    )

    request = None

    class Meta:
        model = Ticket
        fields = ["subject", "description", "priority", "assignee"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assignee = self.fields["assignee"]
        assignee.queryset = assignee.queryset.filter(is_active=True)
        widget = assignee.widget
        widget.can_add_related = widget.can_change_related = widget.can_delete_related = False
        widget.can_view_related = False

    def requester(self) -> RequesterData:
        data = self.cleaned_data
        return RequesterData(
            name=data["requester_name"],
            email=data["requester_email"],
            phone=data["requester_phone"],
            external_id=data["requester_external_id"] or None,
        )


class BulkStatusForm(forms.Form):
    status = forms.ModelChoiceField(queryset=TicketStatus.objects.none(), label="Novo status")

    def __init__(self, *args, organization_id, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["status"].queryset = TicketStatus.objects.filter(organization_id=organization_id).order_by(
            "position", "name"
        )

    def change(self) -> BulkChange:
        return BulkChange(status_id=self.cleaned_data["status"].pk)


class BulkPriorityForm(forms.Form):
    priority = forms.ChoiceField(choices=Priority.choices, label="Nova prioridade")

    def __init__(self, *args, organization_id, **kwargs):
        super().__init__(*args, **kwargs)

    def change(self) -> BulkChange:
        return BulkChange(priority=self.cleaned_data["priority"])


UNASSIGN = "nenhum"


class BulkAssigneeForm(forms.Form):
    assignee = forms.ChoiceField(label="Atendente")

    def __init__(self, *args, organization_id, **kwargs):
        super().__init__(*args, **kwargs)
        agents = Agent.objects.filter(organization_id=organization_id, is_active=True).order_by("name")
        self.fields["assignee"].choices = [
            (UNASSIGN, "Sem atendente (tirar o atendente)"),
            *((str(pk), name) for pk, name in agents.values_list("pk", "name")),
        ]

    def change(self) -> BulkChange:
        value = self.cleaned_data["assignee"]
        return BulkChange(assignee_id=None if value == UNASSIGN else value)


class BulkTagsForm(forms.Form):
    tags_add = forms.CharField(label="Acrescentar tags", required=False, help_text="Separadas por vírgula.")
    tags_remove = forms.CharField(label="Retirar tags", required=False, help_text="Separadas por vírgula.")

    def __init__(self, *args, organization_id, **kwargs):
        super().__init__(*args, **kwargs)

    def clean(self):
        cleaned = super().clean()
        add, remove = (_comma_list(cleaned.get(name, "")) for name in ("tags_add", "tags_remove"))
        if not add and not remove:
            raise forms.ValidationError("Informe tags a acrescentar, a retirar ou as duas.")
        try:
            cleaned["tags"] = TagsChange.of(add, remove, fields=("tags_add", "tags_remove"))
        except ValidationFailed as refused:
            for name, errors in refused.errors.items():
                self.add_error(name, errors)
        return cleaned

    def change(self) -> BulkChange:
        return BulkChange(tags=self.cleaned_data["tags"])


def _comma_list(text: str) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


@admin.register(Ticket)
class TicketAdmin(MacroTicketAdminMixin, TicketMergeAdminMixin, OrganizationScopedAdmin):
    form = TicketAdminForm
    inlines = [ReplyThreadInline]
    list_display = [
        "number",
        "subject",
        "requester",
        "colored_status",
        "priority",
        "assignee",
        "customer_activity",
        "awaiting_us",
        "sla_deadline",
        "tag_list",
    ]
    list_display_links = ["number", "subject"]
    list_select_related = ["status", "requester", "assignee"]
    list_filter = [
        QueueFilter,
        StatusCategoryFilter,
        SlaFilter,
        "priority",
        AssigneeFilter,
        TagFilter,
        CustomFieldListFilter,
    ]
    search_fields = ["subject", "external_id", "requester__name", "requester__email", "requester__external_id"]
    search_help_text = "Número, assunto, ID externo do ticket, ou nome, e-mail ou ID externo do solicitante."
    date_hierarchy = "created_at"
    ordering = ["-created_at", "-number"]
    actions = ["resolve", "assign_to_me", "bulk_status", "bulk_priority", "bulk_assignee", "bulk_tags", "merge_into"]
    change_list_template = "admin/tickets/ticket/change_list.html"
    readonly_fields = [
        "number",
        "subject",
        "description",
        "requester",
        "external_id",
        "channel",
        "created_at",
        "updated_at",
        "resolved_at",
        "change_history",
        "sla_targets",
        "ratings",
        "merged_into_link",
        "merged_sources",
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "number",
                    "subject",
                    "description",
                    "requester",
                    "external_id",
                    "channel",
                    "merged_into_link",
                    "merged_sources",
                ]
            },
        ),
        (
            "Atendimento",
            {
                "fields": [
                    "status",
                    "assignee",
                    "priority",
                    "tags_text",
                    "resolved_at",
                    "sla_targets",
                    "ratings",
                    "change_history",
                ]
            },
        ),
        ("Responder", {"fields": ["macro", "new_reply", "internal", "attachments"]}),
        ("Datas", {"fields": ["created_at", "updated_at"], "classes": ["collapse"]}),
    ]

    add_fieldsets = [
        (None, {"fields": ["subject", "description", "priority", "assignee"]}),
        (
            "Solicitante",
            {"fields": ["requester_name", "requester_email", "requester_phone", "requester_external_id"]},
        ),
    ]

    def get_form(self, request, obj=None, change=False, **kwargs):
        # The request rides on the base form: a subclass of the built form would build its fields again.
        base = self.form if obj is not None else TicketAddForm
        custom = value_form_fields(obj.organization_id) if obj is not None else {}
        kwargs["form"] = type("TicketAdminFormForRequest", (base,), {"request": request, **custom})
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return self.add_fieldsets
        custom = list(value_form_fields(obj.organization_id))
        if not custom:
            return self.fieldsets
        return [*self.fieldsets[:2], ("Campos personalizados", {"fields": custom}), *self.fieldsets[2:]]

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else []

    def get_inline_instances(self, request, obj=None):
        return super().get_inline_instances(request, obj) if obj is not None else []

    def response_post_save_add(self, request, obj):
        # The agent opened it to work on it: its page, not the list.
        return HttpResponseRedirect(reverse("admin:tickets_ticket_change", args=[obj.pk]))

    def has_add_permission(self, request):
        # An agent opens tickets for requesters (channel `painel`); partners' come through the API.
        return request_agent(request) is not None and super().has_add_permission(request)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("status", "requester", "assignee", "merged_into")

    def changelist_view(self, request, extra_context=None):
        """An agent's list opens on "Meus tickets"; the queues' bar above it shows every queue's count, counted
        in one query over what the user may see."""
        agent = request_agent(request)
        if request.method == "GET" and not request.GET and agent is not None:
            return HttpResponseRedirect(f"{request.path}?{urlencode({QueueFilter.parameter_name: DEFAULT_QUEUE})}")
        counts = queue_counts(self.get_queryset(request), agent=agent, now=timezone.now())
        current = request.GET.get(QueueFilter.parameter_name)
        queues = [
            {
                "slug": queue.slug,
                "label": queue.label,
                "count": counts[queue.slug],
                "url": f"?{urlencode({QueueFilter.parameter_name: queue.slug})}",
                "current": queue.slug == current,
            }
            for queue in QUEUES
            if agent is not None or queue.slug != DEFAULT_QUEUE
        ]
        return super().changelist_view(request, extra_context={**(extra_context or {}), "queues": queues})

    def get_changelist(self, request, **kwargs):
        return TicketChangeList

    def get_search_results(self, request, queryset, search_term):
        # `queryset` already carries the list filters: a number match must stay inside them.
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip().lstrip("#")
        if re.fullmatch(r"[0-9]{1,9}", term):
            results = results | queryset.filter(number=int(term))
        return results, may_have_duplicates

    @admin.display(description="status", ordering="status__name")
    def colored_status(self, ticket: Ticket) -> str:
        return status_badge(ticket.status)

    @admin.display(description="próximo prazo", ordering=F("sla_due_at").asc(nulls_last=True))
    def sla_deadline(self, ticket: Ticket) -> str:
        """The next deadline, coloured by the ticket's SLA state; sorting by this column puts the breached ones
        first, then the nearest deadlines."""
        state = sla_state(ticket, now=timezone.now())
        if state is None:
            return "—"
        label, color = SLA_STATES[state]
        due = f" {_when(ticket.sla_due_at)}" if ticket.sla_due_at is not None else ""
        return format_html(
            '<span class="prazo-sla sla-{}" style="background:{};color:#fff;padding:2px 8px;border-radius:10px;'
            'white-space:nowrap">{}{}</span>',
            state,
            color,
            label,
            due,
        )

    @admin.display(description="metas de SLA")
    def sla_targets(self, ticket: Ticket) -> str:
        """Each target of the ticket's policy: its deadline, when it was met, and whether it is breached or paused."""
        now = timezone.now()
        view = sla_view(ticket.sla_clock, now=now)
        if view is None:
            return "Sem política de SLA para esta prioridade."

        def reading(target) -> str:
            if target["violada"]:
                return "violada"
            if target["cumprida_em"] is not None:
                return "cumprida"
            return "pausada" if target["pausada"] else "no prazo"

        rows = format_html_join(
            "",
            '<li class="meta-sla">{}: vence {}, cumprida {} — <strong>{}</strong></li>',
            (
                (
                    LABELS_BY_NAME[target["tipo"]],
                    _when(target["vence_em"]),
                    _when(target["cumprida_em"]),
                    reading(target),
                )
                for target in view["metas"]
            ),
        )
        return format_html('<ul class="metas-sla" style="margin:0;padding-left:1.2em">{}</ul>', rows)

    @admin.display(description="avaliações do cliente")
    def ratings(self, ticket: Ticket) -> str:
        """Each resolution's rating, the latest first: the score, the comment, the agent rated and when."""
        ratings = ticket.ratings.select_related("agent").order_by("-cycle")
        if not ratings:
            return "Sem avaliação."
        items = format_html_join(
            "",
            '<li class="avaliacao">Nota <strong>{}</strong> ({}, {}){}</li>',
            (
                (
                    rating.score,
                    rating.agent.name if rating.agent else "sem atendente",
                    _when(rating.created_at),
                    f": “{rating.comment}”" if rating.comment else "",
                )
                for rating in ratings
            ),
        )
        return format_html('<ul class="avaliacoes" style="margin:0;padding-left:1.2em">{}</ul>', items)

    @admin.display(description="tags")
    def tag_list(self, ticket: Ticket) -> str:
        if not ticket.tags:
            return "—"
        return format_html_join(
            " ",
            '<span class="tag-do-ticket" style="background:#E5E7EB;padding:1px 6px;border-radius:8px">{}</span>',
            ((tag,) for tag in ticket.tags),
        )

    @admin.display(description="última atividade do cliente", ordering="customer_activity_at")
    def customer_activity(self, ticket: Ticket) -> str:
        instant = getattr(ticket, "customer_activity_at", None)
        if instant is None:
            return "—"
        return format_html(
            '<span class="atividade-cliente" title="{}">há {}</span>', _when(instant), timesince(instant, depth=1)
        )

    @admin.display(description="aguarda a equipe")
    def awaiting_us(self, ticket: Ticket) -> str:
        """Marked when the customer spoke last: the team owes the next public message."""
        if not awaits_agent(ticket):
            return ""
        return format_html(
            '<span class="aguarda-equipe" title="{}" style="color:#DC2626;font-weight:bold">● {}</span>',
            "A última mensagem pública é do cliente.",
            "cliente aguarda",
        )

    @admin.display(description="histórico de alterações")
    def change_history(self, ticket: Ticket) -> str:
        """Who changed the status, priority, assignee or tags, from what to what, and when: agents and the
        customer (a reply, resolver/reabrir or tags through the partner API) alike."""
        records, agent_names = ticket_change_history(ticket=ticket)
        if not records:
            return "—"
        items = format_html_join(
            "",
            '<li class="alteracao-{}">{}: {}, por <span class="autor-alteracao">{}</span></li>',
            (
                (
                    record.action.removeprefix("ticket."),
                    formats.localize(timezone.template_localtime(record.created_at)),
                    change_summary(record, agent_names),
                    status_author(record),
                )
                for record in records
            ),
        )
        return format_html('<ul class="historico-alteracoes" style="margin:0;padding-left:1.2em">{}</ul>', items)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if not change:
            agent = request_agent(request)
            ticket = ticket_open(
                organization=agent.organization,
                actor=Actor.of_agent(agent),
                subject=data["subject"],
                description=data["description"],
                requester=form.requester(),
                priority=data["priority"],
                assignee=data["assignee"],
            )
            obj.pk, obj.number = ticket.pk, ticket.number
            return
        actor = Actor.of_agent(request_agent(request))
        ticket = ticket_update(
            ticket=Ticket.objects.get(pk=obj.pk),
            status=data["status"],
            assignee=data["assignee"],
            unassign=data["assignee"] is None,
            priority=data["priority"],
            tags_add=data.get("tags_add", ()),
            tags_remove=data.get("tags_remove", ()),
            actor=actor,
        )
        values = changed_values(form)
        if values:
            ticket_fields_set(ticket=ticket, values=values, actor=actor)

    def delete_model(self, request, obj):
        ticket_delete(ticket=obj, actor=Actor.of_agent(request_agent(request)))

    def delete_queryset(self, request, queryset):
        """The bulk "delete selected": each ticket through the same service, its tombstone and its event."""
        actor = Actor.of_agent(request_agent(request))
        for ticket in queryset:
            ticket_delete(ticket=ticket, actor=actor)

    def save_formset(self, request, form, formset, change):
        """Edits go through the service (which emits the webhook), never formset.save()."""
        agent = request_agent(request)
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for row in formset.forms:
            if agent is not None and row.instance.pk and "body" in row.changed_data:
                reply = reply_edit_as_agent(
                    reply=Reply.objects.get(pk=row.instance.pk), agent=agent, body=row.cleaned_data["body"]
                )
                formset.changed_objects.append((reply, ["body"]))

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        body = form.cleaned_data.get("new_reply", "").strip()
        if body:
            reply_create_with_attachments(
                ticket=form.instance,
                agent=request_agent(request),
                body=body,
                internal=form.cleaned_data["internal"],
                uploads=form.cleaned_data.get("attachments") or [],
            )

    @admin.action(description="Resolver os tickets selecionados", permissions=["change"])
    def resolve(self, request, queryset):
        actor = Actor.of_agent(request_agent(request))
        resolved = sum(ticket_resolve(ticket=ticket, actor=actor) for ticket in queryset.select_related("status"))
        self.message_user(request, f"{resolved} ticket(s) resolvido(s).", messages.SUCCESS)

    @admin.action(description="Atribuir a mim", permissions=["change"])
    def assign_to_me(self, request, queryset):
        agent = request_agent(request)
        if agent is None:
            self.message_user(request, "Somente atendentes ativos podem assumir tickets.", messages.ERROR)
            return
        count = 0
        for ticket in queryset.filter(organization_id=agent.organization_id):
            try:
                ticket_update(ticket=ticket, assignee=agent, actor=Actor.of_agent(agent))
                count += 1
            except (ApplicationError, ValidationFailed):
                continue
        self.message_user(request, f"{count} ticket(s) atribuído(s) a você.", messages.SUCCESS)

    @admin.action(description="Mudar o status dos selecionados…", permissions=["change"])
    def bulk_status(self, request, queryset):
        return self._bulk_edit(request, queryset, BulkStatusForm, "Mudar o status")

    @admin.action(description="Mudar a prioridade dos selecionados…", permissions=["change"])
    def bulk_priority(self, request, queryset):
        return self._bulk_edit(request, queryset, BulkPriorityForm, "Mudar a prioridade")

    @admin.action(description="Atribuir os selecionados a…", permissions=["change"])
    def bulk_assignee(self, request, queryset):
        return self._bulk_edit(request, queryset, BulkAssigneeForm, "Atribuir a um atendente")

    @admin.action(description="Acrescentar ou retirar tags dos selecionados…", permissions=["change"])
    def bulk_tags(self, request, queryset):
        return self._bulk_edit(request, queryset, BulkTagsForm, "Acrescentar ou retirar tags")

    def _bulk_edit(self, request, queryset, form_class, title):
        """A bulk action's page: the form first (what to set), then tickets.bulk, the panel's POST
        /api/tickets/lote's service, and a report of what was changed and what was left, with why."""
        agent = request_agent(request)
        if agent is None:
            self.message_user(request, "Somente atendentes ativos podem alterar tickets em lote.", messages.ERROR)
            return None
        applying = "aplicar" in request.POST
        form = form_class(request.POST if applying else None, organization_id=agent.organization_id)
        if applying and form.is_valid():
            numbers = dict(queryset.values_list("pk", "number"))
            try:
                outcome = tickets_update_in_bulk(
                    organization=agent.organization,
                    ticket_ids=list(numbers),
                    change=form.change(),
                    actor=Actor.of_agent(agent),
                )
            except (ApplicationError, ValidationFailed) as refused:
                self.message_user(request, _refusal_text(refused), messages.ERROR)
                return None
            self.message_user(
                request, f"{len(outcome.updated)} atualizados, {len(outcome.ignored)} ignorados.", messages.SUCCESS
            )
            for ticket_id, reason in outcome.ignored:
                self.message_user(request, f"#{numbers.get(ticket_id, '?')} ignorado: {reason}", messages.WARNING)
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "form": form,
            "tickets": queryset.order_by("number"),
            "action": request.POST.get("action", ""),
            "select_across": request.POST.get("select_across", "0"),
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/tickets/ticket/bulk_edit.html", context)


class ContactAdminForm(forms.ModelForm):
    # The limit of every door (the API's); the column is wider only to hold the lower-cased form.
    email = forms.EmailField(label="e-mail", required=False, max_length=EMAIL_MAX_LENGTH)

    class Meta:
        model = Contact
        fields = ["name", "email", "phone"]


@admin.register(Contact)
class ContactAdmin(OrganizationScopedAdmin):
    form = ContactAdminForm
    list_display = ["name", "email", "phone", "external_id", "created_at"]
    search_fields = ["name", "email", "external_id"]
    readonly_fields = ["external_id", "created_at", "updated_at"]
    fields = ["name", "email", "phone", "external_id", "created_at", "updated_at"]
    ordering = ["name"]
    refused = ("add",)  # contacts are created with the tickets of their requesters

    def has_change_permission(self, request, obj=None):
        # An anonymised person's data does not come back (contact_update refuses): the page is read-only.
        return super().has_change_permission(request, obj) and (obj is None or obj.anonymized_at is None)

    def save_model(self, request, obj, form, change):
        """Through the service: the requester's tickets move in the change list."""
        data = form.cleaned_data
        contact_update(
            contact=Contact.objects.get(pk=obj.pk),
            name=data["name"],
            email=data["email"],
            phone=data["phone"],
            actor=Actor.of_agent(request_agent(request)),
        )

    def delete_model(self, request, obj):
        contact_delete(contact=obj)

    def delete_queryset(self, request, queryset):
        for contact in queryset:
            contact_delete(contact=contact)


class TicketStatusAdminForm(forms.ModelForm):
    organization_id = None
    # status_check's error keys (the API's field names) on this form's fields.
    SERVICE_FIELDS = {"nome": "name", "cor": "color"}

    class Meta:
        model = TicketStatus
        fields = ["name", "category", "color", "position"]

    def clean(self):
        cleaned = super().clean()
        organization_id = self.instance.organization_id or self.organization_id
        if cleaned.get("organization") is not None:  # a superuser's new status names its organization
            organization_id = cleaned["organization"].pk
        try:
            status_check(
                organization_id=organization_id,
                name=cleaned.get("name", ""),
                color=cleaned.get("color", ""),
                status=self.instance if self.instance.pk else None,
            )
        except ValidationFailed as error:
            for key, messages_ in error.errors.items():
                self.add_error(self.SERVICE_FIELDS[key], messages_)
        return cleaned


@admin.register(TicketStatus)
class TicketStatusAdmin(OrganizationScopedAdmin):
    form = TicketStatusAdminForm
    list_display = ["name", "badge", "category", "position"]
    list_filter = ["category"]
    search_fields = ["name"]
    ordering = ["position", "name"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type("TicketStatusFormForRequest", (form,), {"organization_id": user_organization_id(request)})

    def get_fields(self, request, obj=None):
        fields = ["name", "category", "color", "position"]
        return ["organization", *fields] if request.user.is_superuser and obj is None else fields

    @admin.display(description="cor")
    def badge(self, status: TicketStatus) -> str:
        return status_badge(status)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        values = {name: data[name] for name in ("name", "category", "color", "position")}
        if change:
            status_update(status=TicketStatus.objects.get(pk=obj.pk), **values)
            return
        organization_id = data["organization"].pk if request.user.is_superuser else request.user.organization_id
        obj.pk = status_create(organization_id=organization_id, **values).pk

    def delete_model(self, request, obj):
        status_delete(status=obj)

    def delete_queryset(self, request, queryset):
        for status in queryset:
            status_delete(status=status)


@admin.register(AttachmentUsage)
class AttachmentUsageAdmin(ReadOnlyOrganizationAdmin):
    """What the organization's files hold against ANEXOS_QUOTA_BYTES: read-only, kept by the services."""

    list_display = ["organization", "used", "quota"]
    fields = ["organization", "used", "quota"]
    readonly_fields = fields

    @admin.display(description="em uso")
    def used(self, usage) -> str:
        return f"{format_bytes(usage.bytes_used)} ({usage.bytes_used} bytes)"

    @admin.display(description="cota (ANEXOS_QUOTA_BYTES)")
    def quota(self, usage) -> str:
        quota = settings.ANEXOS_QUOTA_BYTES
        return format_bytes(quota) if quota else "sem cota"


@admin.register(TicketRating)
class TicketRatingAdmin(ReadOnlyOrganizationAdmin):
    """The customers' ratings (CSAT), collected by the partners: read-only, kept by the services; the report per
    agent and period is one click away (`relatorio/`)."""

    list_display = ["ticket_number", "score", "comment", "agent", "cycle", "created_at"]
    list_select_related = ["ticket", "agent"]
    list_filter = ["score", RatedAgentFilter]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]
    fields = ["ticket", "cycle", "score", "comment", "agent", "resolved_at", "created_at", "updated_at"]
    readonly_fields = fields
    change_list_template = "admin/tickets/ticketrating/change_list.html"

    @admin.display(description="ticket", ordering="ticket__number")
    def ticket_number(self, rating: TicketRating) -> str:
        return f"#{rating.ticket.number}"

    def get_urls(self):
        report = path("relatorio/", self.admin_site.admin_view(self.report_view), name="tickets_ticketrating_report")
        return [report, *super().get_urls()]

    def report_view(self, request):
        """Per agent, for a period (`de`, `ate`, dates; the last 30 days by default): ratings, average, share of 4-5,
        and the median business minutes to the first answer and to resolution of the tickets they resolved."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = SatisfactionPeriodForm(request.GET or None)
        since, until = form.period()
        organization_id = user_organization_id(request)
        rows = (
            satisfaction_report(organization_id=organization_id, since=since, until=until)
            if organization_id is not None
            else None
        )
        context = {
            **self.admin_site.each_context(request),
            "title": "Satisfação por atendente",
            "opts": self.model._meta,
            "form": form,
            "rows": rows,
        }
        return TemplateResponse(request, "admin/tickets/ticketrating/report.html", context)


class SatisfactionPeriodForm(forms.Form):
    de = forms.DateField(label="De", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    ate = forms.DateField(label="Até", required=False, widget=forms.DateInput(attrs={"type": "date"}))

    DEFAULT_DAYS = 30

    def period(self) -> tuple:
        """[since, until) as instants: from `de` at 00:00 to the day after `ate` at 00:00, in the admin's time zone."""
        today = timezone.localdate()
        valid = self.is_bound and self.is_valid()
        until_day = (valid and self.cleaned_data["ate"]) or today
        since_day = (valid and self.cleaned_data["de"]) or until_day - timedelta(days=self.DEFAULT_DAYS - 1)
        if not self.is_bound:
            self.initial = {"de": since_day, "ate": until_day}
        zone = timezone.get_current_timezone()
        since = datetime.combine(since_day, time.min, tzinfo=zone)
        until = datetime.combine(until_day + timedelta(days=1), time.min, tzinfo=zone)
        return since, until
