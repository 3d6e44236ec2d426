"""The admin's attachment pieces: a file input that takes several files, the service's rules as form
errors, and the thread's links (signed for agents, 30 minutes)."""

from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from foundation.exceptions import ApplicationError, ValidationFailed
from tickets.attachments.services import attachment_check
from tickets.attachments.signing import attachment_token
from tickets.attachments.uploads import FIELD


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one input (Django's documented recipe): cleans to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, (list, tuple)):
            return [super(MultipleFileField, self).clean(item, initial) for item in data]
        return [super().clean(data, initial)] if data else []


def check_attachments(form, cleaned, *, max_files: int) -> None:
    """The service's rules as field errors, before anything is stored (the service checks them again)."""
    files = cleaned.get("attachments") or []
    if not files:
        return
    if not cleaned.get("new_reply", "").strip():
        form.add_error("new_reply", "Escreva a mensagem que acompanha os anexos.")
    if len(files) > max_files:
        form.add_error("attachments", f"Envie no máximo {max_files} arquivos por mensagem.")
        return
    for upload in files:
        try:
            attachment_check(upload)
        except ValidationFailed as error:
            form.add_error("attachments", f"{upload.name}: {' '.join(error.errors[FIELD])}")
        except ApplicationError as error:
            form.add_error("attachments", f"{upload.name}: {error.detail}")
    if form.instance.attachments.count() + len(files) > settings.ANEXOS_POR_TICKET:
        form.add_error("attachments", f"Um ticket guarda no máximo {settings.ANEXOS_POR_TICKET} anexos.")


def attachment_links(reply) -> str:
    """Each file of a reply or note (prefetched) as a download link for agents."""
    links = [
        format_html(
            '<a class="anexo" href="{}" rel="noopener">{}</a> ({})',
            reverse(
                "attachment-download-detail",
                kwargs={"token": attachment_token(item.pk, item.organization_id, for_agent=True)},
            ),
            item.name,
            filesizeformat(item.size),
        )
        for item in reply.attachments.all()
    ]
    return format_html_join(mark_safe("<br>"), "{}", ((link,) for link in links)) if links else "—"
