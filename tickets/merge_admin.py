"""The admin's "Mesclar em..." (issue 24): an action over 2 to 20 selected tickets, an intermediate page where the
agent picks the target among them, then tickets.merging.tickets_merge, all or nothing."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from foundation.exceptions import ApplicationError, ValidationFailed
from helpdesk.actors import Actor
from helpdesk.admin_tenancy import request_agent
from tickets.merging import MERGE_MAX_TICKETS, MERGE_MIN_TICKETS, tickets_merge
from tickets.models import Ticket


class MergeTargetForm(forms.Form):
    target = forms.ChoiceField(error_messages={"required": "Escolha o ticket de destino."})

    def __init__(self, *args, tickets: list[Ticket], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = [(str(ticket.pk), f"#{ticket.number}") for ticket in tickets]
        self.fields["target"].error_messages["invalid_choice"] = "Escolha o destino entre os tickets selecionados."


def merge_error_text(error: Exception) -> str:
    """A domain error as one line for the admin's message."""
    if isinstance(error, ValidationFailed):
        return " ".join(message for messages_ in error.errors.values() for message in messages_)
    return f"{error.message} {error.detail}"


class TicketMergeAdminMixin:
    """Adds the "Mesclar em..." action (`merge_into`) and the source's link to its target (`merged_into_link`)
    to the ticket admin."""

    @admin.action(description="Mesclar em...", permissions=["change"])
    def merge_into(self, request, queryset):
        tickets = list(queryset.select_related("status", "requester").order_by("number"))
        if not MERGE_MIN_TICKETS <= len(tickets) <= MERGE_MAX_TICKETS:
            self.message_user(
                request,
                f"Selecione de {MERGE_MIN_TICKETS} a {MERGE_MAX_TICKETS} tickets para mesclar.",
                messages.ERROR,
            )
            return None
        form = MergeTargetForm(request.POST if request.POST.get("post") == "yes" else None, tickets=tickets)
        if form.is_bound and form.is_valid():
            by_id = {str(ticket.pk): ticket for ticket in tickets}
            target = by_id[form.cleaned_data["target"]]
            sources = [ticket for ticket in tickets if ticket.pk != target.pk]
            try:
                tickets_merge(target=target, sources=sources, actor=Actor.of_agent(request_agent(request)))
            except (ApplicationError, ValidationFailed) as error:
                self.message_user(request, f"Nada foi mesclado: {merge_error_text(error)}", messages.ERROR)
                return None
            merged = ", ".join(f"#{source.number}" for source in sources)
            self.message_user(request, f"Tickets {merged} mesclados em #{target.number}.", messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:tickets_ticket_change", args=[target.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": "Mesclar tickets",
            "opts": self.model._meta,
            "tickets": tickets,
            "form": form,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/tickets/ticket/merge_confirmation.html", context)

    @admin.display(description="mesclado em")
    def merged_into_link(self, ticket: Ticket) -> str:
        if ticket.merged_into_id is None:
            return "—"
        target = ticket.merged_into
        url = reverse("admin:tickets_ticket_change", args=[target.pk])
        return format_html('<a href="{}" class="mesclado-em">#{} {}</a>', url, target.number, target.subject)

    @admin.display(description="tickets mesclados neste")
    def merged_sources(self, ticket: Ticket) -> str:
        sources = ticket.merged_sources.order_by("number").values_list("pk", "number")
        if not sources:
            return "—"
        return format_html_join(
            ", ",
            '<a href="{}">#{}</a>',
            ((reverse("admin:tickets_ticket_change", args=[pk]), number) for pk, number in sources),
        )
