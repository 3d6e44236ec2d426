"""What happens to stored files: deleted with their ticket once the deletion commits, kept when it rolls
back; left by a transaction the service did not own that rolled back, then removed by the hourly sweep."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from tests.assertions import assert_success
from tests.attachments.samples import TEXT, stored_keys, upload_file
from tickets.attachments.services import attachment_files_sweep, reply_create_with_attachments
from tickets.attachments.storage import attachment_storage
from tickets.models import Attachment, Ticket
from tickets.tasks import sweep_attachment_files


@pytest.fixture
def staff(client, admin):
    client.force_login(admin)
    return client


def with_files(ticket, agent, count=2):
    uploads = [upload_file(TEXT, f"{n}.txt", "text/plain") for n in range(count)]
    return reply_create_with_attachments(ticket=ticket, agent=agent, body="Segue.", internal=False, uploads=uploads)


def test_deleting_a_ticket_in_the_admin_deletes_its_files_once_it_commits(
    staff, upload, ticket, admin, django_capture_on_commit_callbacks
):
    assert_success(upload(ticket), 201, "Anexo enviado.")
    with_files(ticket, admin.agent)
    keys = set(Attachment.objects.values_list("storage_key", flat=True))
    assert len(keys) == 3 and keys <= stored_keys()

    with django_capture_on_commit_callbacks(execute=False) as pending:
        response = staff.post(reverse("admin:tickets_ticket_delete", args=[ticket.pk]), {"post": "yes"})
        assert response.status_code == 302
        assert keys <= stored_keys()  # not before the deletion commits
    for callback in pending:
        callback()

    assert not Ticket.objects.filter(pk=ticket.pk).exists()
    assert not Attachment.objects.exists()
    assert not keys & stored_keys()


def test_a_deletion_that_rolls_back_keeps_the_rows_and_the_files(upload, ticket, django_capture_on_commit_callbacks):
    assert_success(upload(ticket), 201, "Anexo enviado.")
    key = Attachment.objects.get().storage_key

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        Ticket.objects.filter(pk=ticket.pk).delete()
        raise RuntimeError("the admin's request failed after the delete")

    assert Attachment.objects.get().storage_key == key
    assert key in stored_keys()


def test_files_of_an_enclosing_transaction_that_rolled_back_are_swept_after_an_hour(ticket, admin):
    """The admin's request is one transaction the service does not own: its rollback leaves the files."""
    before = stored_keys()
    with pytest.raises(RuntimeError), transaction.atomic():
        with_files(ticket, admin.agent)
        raise RuntimeError("a later step of the admin's save failed")
    orphans = stored_keys() - before
    assert len(orphans) == 2 and not Attachment.objects.exists()
    _, [kept] = with_files(ticket, admin.agent, count=1)

    attachment_files_sweep(now=timezone.now() + timedelta(minutes=30))
    assert orphans <= stored_keys()  # younger than an hour: an upload may still be committing
    # (A shared bucket may hold other tests' orphans too: their rows were rolled back the same way.)
    deleted = attachment_files_sweep(now=timezone.now() + timedelta(hours=2))

    assert deleted >= 2
    assert not orphans & stored_keys()
    assert kept.storage_key in stored_keys()


def test_the_sweep_looks_back_two_days_and_no_further(ticket):
    storage = attachment_storage()
    now = timezone.now()
    old = storage.save(f"{(now - timedelta(days=3)):%Y/%m/%d/%H}/velho", upload_file(TEXT, "a.txt"))
    yesterday = storage.save(
        f"{(now - timedelta(days=1)).astimezone(timezone.get_fixed_timezone(0)):%Y/%m/%d/%H}/ontem",
        upload_file(TEXT, "b.txt"),
    )

    attachment_files_sweep(now=now)

    assert yesterday not in stored_keys()
    assert old in stored_keys()  # older than the window: beat ran hourly meanwhile
    storage.delete(old)


def test_beat_runs_the_sweep_hourly(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-attachment-files"]

    assert (entry["task"], entry["schedule"]) == (sweep_attachment_files.name, 3600.0)
