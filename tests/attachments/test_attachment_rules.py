"""The output builders against their serializers (the schema), and ANEXOS_POR_TICKET under parallel uploads
(PostgreSQL: real row locks)."""

import pytest
from rest_framework.test import APIRequestFactory

from tests.attachments.samples import TEXT, parallel_uploads, stored_keys, upload_file
from tests.factories import make_key, make_organization, make_ticket
from tickets.api.attachment_serializers import (
    AttachmentOut,
    PanelAttachmentOut,
    attachment_row,
    attachments_panel,
    attachments_public,
)
from tickets.attachments.selectors import ATTACHMENT_COLUMNS, PANEL_ATTACHMENT_COLUMNS
from tickets.attachments.services import attachment_add_by_partner, reply_create_with_attachments
from tickets.models import Attachment


def test_the_builders_answer_exactly_what_the_serializers_describe(organization, ticket, admin):
    attachment_add_by_partner(ticket=ticket, upload=upload_file())
    reply_create_with_attachments(
        ticket=ticket, agent=admin.agent, body="Nota", internal=True, uploads=[upload_file(TEXT, "n.txt", "text/plain")]
    )
    request = APIRequestFactory().get("/")
    attachments = list(Attachment.objects.select_related("reply").order_by("created_at", "id"))
    context = {"request": request}

    public_rows = list(Attachment.objects.order_by("created_at", "id").values_list(*ATTACHMENT_COLUMNS))
    panel_rows = list(Attachment.objects.order_by("created_at", "id").values_list(*PANEL_ATTACHMENT_COLUMNS))

    assert attachments_public(request, public_rows) == AttachmentOut(attachments, many=True, context=context).data
    assert attachments_panel(request, panel_rows) == PanelAttachmentOut(attachments, many=True, context=context).data
    assert [attachment_row(a) for a in attachments] == panel_rows


THREADS = 8
LIMIT = 3


def test_parallel_uploads_never_pass_anexos_por_ticket(postgres_only, settings):
    settings.ANEXOS_POR_TICKET = LIMIT
    organization = make_organization("Anexos em paralelo")
    key = make_key(organization)
    ticket = make_ticket(organization)
    keys_before = stored_keys()

    statuses = parallel_uploads(key, [ticket], THREADS)

    assert sorted(statuses) == [201] * LIMIT + [409] * (THREADS - LIMIT)
    assert Attachment.objects.filter(ticket=ticket).count() == LIMIT
    assert len(stored_keys() - keys_before) == LIMIT  # the refused ones removed what they stored


@pytest.fixture
def ticket(organization):
    return make_ticket(organization)


def test_without_libmagic_the_service_refuses_to_start_with_what_to_install(monkeypatch):
    import builtins

    from tickets import checks
    from tickets.attachments import content

    real_import = builtins.__import__

    def no_libmagic(name, *args, **kwargs):
        if name == "magic":
            raise ImportError("failed to find libmagic.  Check your installation")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(content, "_magic", None)
    monkeypatch.setattr(builtins, "__import__", no_libmagic)

    [error] = checks.libmagic_is_installed(None)

    assert error.id == "tickets.E001"
    assert "apt-get install libmagic1" in error.hint
    monkeypatch.undo()
    assert checks.libmagic_is_installed(None) == []
