"""Every write of attachments: the partner's upload, an agent's reply or note with files, the orphan sweep.

A file is written before its row, with the ticket's row lock taken only for the count and the insert.
When this service's own transaction fails, the files it wrote are deleted at once. When an enclosing
transaction it does not own rolls back later (the admin's), the files stay without a row: the hourly
sweep (`attachment_files_sweep`) removes stored files older than an hour that no row names. Deleting
rows (a ticket, a reply) deletes their files after the commit (tickets.lifecycle).
"""

import logging
import shutil
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from foundation.exceptions import AccessDenied, ValidationFailed
from helpdesk.actors import PARTNER, Actor
from helpdesk.models import Agent
from tickets import signals
from tickets.attachments.content import ALLOWED_DESCRIPTION, SNIFF_BYTES, clean_name, sniff
from tickets.attachments.selectors import PUBLIC
from tickets.attachments.storage import (
    attachment_storage,
    attachment_storage_location,
    file_delete,
    new_key,
    recent_hour_folders,
)
from tickets.attachments.uploads import FIELD, upload_sha256
from tickets.exceptions import (
    AttachmentLimitReached,
    AttachmentQuotaExceeded,
    AttachmentTooLarge,
    AttachmentTypeRefused,
    ReplyNotFound,
    StorageLow,
    TicketClosed,
)
from tickets.models import Attachment, AttachmentSender, AttachmentUsage, Reply, ReplyOrigin, StatusCategory, Ticket
from tickets.services import _locked_ticket, reply_create_by_agent

logger = logging.getLogger(__name__)

# A stored file no row names is an orphan once it is this old (no upload takes that long).
ORPHAN_AFTER = timedelta(hours=1)
# How far back the sweep looks: beat runs it hourly, so a day covers a long outage of beat.
SWEEP_WITHIN = timedelta(days=2)


@dataclass(frozen=True)
class CheckedFile:
    """An upload that passed the checks, ready to store: its cleaned name, served type, size and digest."""

    upload: UploadedFile
    name: str
    content_type: str
    size: int
    sha256: str


def attachment_check(upload: UploadedFile) -> CheckedFile:
    """The rules of one file, before anything is stored: not empty (422), at most ANEXO_MAX_BYTES (413),
    a type sniffed from the content on the allow-list (415)."""
    if not upload.size:
        raise ValidationFailed({FIELD: ["O arquivo enviado está vazio."]})
    if upload.size > settings.ANEXO_MAX_BYTES:
        raise AttachmentTooLarge(max_bytes=settings.ANEXO_MAX_BYTES)
    if hasattr(upload, "temporary_file_path"):
        content_type = sniff(upload.temporary_file_path())
    else:
        content_type = sniff(data=upload.read(SNIFF_BYTES))
        upload.seek(0)
    if content_type is None:
        raise AttachmentTypeRefused(detail=f"Aceitos: {ALLOWED_DESCRIPTION}.")
    return CheckedFile(upload, clean_name(upload.name), content_type, upload.size, upload_sha256(upload))


def attachment_add_by_partner(*, ticket: Ticket, upload: UploadedFile, reply_id=None):
    """The partner sends a file to its ticket (found in its organization by the caller, 404 before the
    body is read), alone or with one of the replies it sent through the API.

    The reply is looked up first (404, 403), then the file checked (422, 413, 415), then the ticket's
    count (409). Errors are raised after the transaction, so a stored Idempotency-Key answer stays
    (docs/decisions.md).
    """
    reply = _partner_reply(ticket, reply_id) if reply_id is not None else None
    checked = attachment_check(upload)
    if ticket.status.category == StatusCategory.CLOSED:
        raise _closed()
    _ensure_room(ticket, [checked], sender=AttachmentSender.PARTNER)  # checked again under the locks
    [attachment] = _store_and_create(
        ticket, [checked], reply=reply, sender=AttachmentSender.PARTNER, agent=None, write_reply=None
    )
    return attachment


def reply_create_with_attachments(
    *, ticket: Ticket, agent: Agent, body: str, internal: bool, uploads: list[UploadedFile]
) -> tuple[Reply, list[Attachment]]:
    """An agent's public reply or internal note with its files, in one transaction: the reply and every
    file are kept, or none. The reply is announced first (reply_published or note_added), then each file
    (attachment_added)."""
    checked = [attachment_check(upload) for upload in uploads]
    if checked:
        _ensure_room(ticket, checked, sender=AttachmentSender.AGENT)

    def write_reply(locked: Ticket) -> Reply:
        return reply_create_by_agent(ticket=locked, agent=agent, body=body, internal=internal)

    if not checked:
        return reply_create_by_agent(ticket=ticket, agent=agent, body=body, internal=internal), []
    attachments = _store_and_create(
        ticket, checked, reply=None, sender=AttachmentSender.AGENT, agent=agent, write_reply=write_reply
    )
    return attachments[0].reply, attachments


def _partner_reply(ticket: Ticket, reply_id) -> Reply:
    """A reply of this ticket the organization sent through the API: another's, a note or an unknown id
    is the 404 of a missing reply; an agent's public reply is a 403, as for an edit."""
    from tickets.selectors import reply_get_public

    try:
        reply = reply_get_public(ticket=ticket, reply_id=reply_id)
    except ReplyNotFound:
        raise ReplyNotFound(field="resposta_id")
    if reply.origin != ReplyOrigin.CUSTOMER_API:
        raise AccessDenied(field="resposta_id", detail="Anexe arquivos somente às respostas enviadas pela API.")
    return reply


def _closed() -> TicketClosed:
    return TicketClosed(detail="Tickets fechados não recebem novos anexos.")


def _ensure_room(ticket: Ticket, checked: list[CheckedFile], *, sender: str) -> None:
    """Before anything is stored: the ticket's count, the organization's quota, the disk's free space."""
    if _counted(ticket.pk, sender).count() + len(checked) > settings.ANEXOS_POR_TICKET:
        raise AttachmentLimitReached(limit=settings.ANEXOS_POR_TICKET)
    used = AttachmentUsage.objects.filter(organization_id=ticket.organization_id).values_list("bytes_used", flat=True)
    _quota_check(used.first() or 0, checked)
    _disk_check(sum(item.size for item in checked))


def _counted(ticket_id, sender: str):
    """What counts against a ticket's cap: for the partner, only the files it can see (a note's files
    would tell it how many there are); for agents, every file."""
    attachments = Attachment.objects.filter(ticket_id=ticket_id)
    return attachments.filter(PUBLIC) if sender == AttachmentSender.PARTNER else attachments


def _quota_check(used: int, checked: list[CheckedFile]) -> None:
    quota = settings.ANEXOS_QUOTA_BYTES
    if quota and used + sum(item.size for item in checked) > quota:
        raise AttachmentQuotaExceeded(quota=quota)


def _disk_check(adding: int) -> None:
    """A disk the embedded database shares must never fill: below the floor, nothing is written."""
    location = attachment_storage_location()
    if location is None or not settings.ANEXOS_MIN_FREE_BYTES:
        return
    while not location.exists() and location != location.parent:  # made by the first save
        location = location.parent
    if shutil.disk_usage(location).free - adding < settings.ANEXOS_MIN_FREE_BYTES:
        logger.warning("attachment_disk_low", extra={"location": str(location)})
        raise StorageLow()


def _usage_reserve(organization_id, checked: list[CheckedFile]) -> AttachmentQuotaExceeded | None:
    """Under the usage row's lock (after the ticket's): the quota holds under parallel uploads. The
    refusal is returned, not raised, so the transaction it runs in is not broken."""
    usage, _ = AttachmentUsage.objects.select_for_update().get_or_create(organization_id=organization_id)
    try:
        _quota_check(usage.bytes_used, checked)
    except AttachmentQuotaExceeded as exceeded:
        return exceeded
    usage.bytes_used = F("bytes_used") + sum(item.size for item in checked)
    usage.save(update_fields=["bytes_used"])
    return None


def attachment_usage_release(*, organization_id, size: int) -> None:
    """A deleted file's bytes, in the deleting transaction (one atomic UPDATE, no read)."""
    AttachmentUsage.objects.filter(organization_id=organization_id).update(bytes_used=F("bytes_used") - size)


def _store_and_create(ticket, checked: list[CheckedFile], *, reply, sender, agent, write_reply) -> list[Attachment]:
    """Files first, then, under the ticket's row lock, the count and the rows; the files go again if
    this transaction does not commit its rows."""
    keys = [_store(item) for item in checked]
    error = None
    try:
        with transaction.atomic(savepoint=False):
            locked = _locked_ticket(ticket)
            count = _counted(locked.pk, sender).count()
            if locked.status.category == StatusCategory.CLOSED and sender == AttachmentSender.PARTNER:
                error = _closed()
            elif count + len(checked) > settings.ANEXOS_POR_TICKET:
                error = AttachmentLimitReached(limit=settings.ANEXOS_POR_TICKET)
            else:
                error = _usage_reserve(locked.organization_id, checked)
            if error is None:
                owner = write_reply(locked) if write_reply is not None else reply
                now = timezone.now()
                attachments = [
                    Attachment.objects.create(
                        organization_id=locked.organization_id,
                        ticket=locked,
                        reply=owner,
                        storage_key=key,
                        name=item.name,
                        content_type=item.content_type,
                        size=item.size,
                        sha256=item.sha256,
                        sender=sender,
                        author_agent=agent,
                        created_at=now,
                    )
                    for key, item in zip(keys, checked, strict=True)
                ]
                actor = Actor.of_agent(agent) if sender == AttachmentSender.AGENT else PARTNER
                for attachment in attachments:
                    signals.attachment_added.send(sender=Attachment, attachment=attachment, actor=actor)
    except BaseException:
        for key in keys:
            file_delete(key)
        raise
    if error is not None:
        for key in keys:
            file_delete(key)
        raise error
    return attachments


def _store(item: CheckedFile) -> str:
    item.upload.seek(0)
    return attachment_storage().save(new_key(), item.upload)


def attachment_files_sweep(*, now=None) -> int:
    """Deletes stored files that no row names, written between two days and an hour ago: what a
    rolled-back transaction or a killed process left. Run hourly by beat; returns how many it deleted."""
    now = now or timezone.now()
    storage = attachment_storage()
    deleted = 0
    for folder in recent_hour_folders(now, older_than=ORPHAN_AFTER, within=SWEEP_WITHIN):
        try:
            _dirs, names = storage.listdir(folder)
        except FileNotFoundError:
            continue
        if not names:
            continue
        keys = {f"{folder}/{name}" for name in names}
        known = set(Attachment.objects.filter(storage_key__in=keys).values_list("storage_key", flat=True))
        for key in sorted(keys - known):
            file_delete(key)
            deleted += 1
    if deleted:
        logger.info("attachment_orphans_deleted", extra={"count": deleted})
    return deleted
