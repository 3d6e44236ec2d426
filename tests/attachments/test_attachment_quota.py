"""Issue 19, findings 2 and 7: an organization's attachments hold at most ANEXOS_QUOTA_BYTES (413 on
`arquivo`, counted in one row under its lock, given back when files are deleted), uploads stop with a
503 before writing when the disk runs low, and the partner's per-ticket cap counts only what it sees."""

import shutil
from collections import namedtuple

import pytest

from helpdesk.actors import Actor
from tests.assertions import assert_error, bearer_client
from tests.attachments.samples import TEXT, parallel_uploads, stored_keys, upload_file
from tests.factories import make_key, make_organization, make_ticket
from tickets.attachments.services import reply_create_with_attachments
from tickets.models import Attachment, AttachmentUsage
from tickets.services import ticket_delete


def upload(client, ticket, name: str = "nota.txt", content: bytes = TEXT):
    data = {"arquivo": upload_file(content, name, "text/plain")}
    return client.post(f"/api/v1/tickets/{ticket.pk}/anexos", data, format="multipart")


def used(organization) -> int:
    return AttachmentUsage.objects.get(organization=organization).bytes_used


@pytest.fixture
def ticket(organization):
    return make_ticket(organization)


def test_uploads_past_the_quota_are_a_413_and_store_nothing(partner, organization, ticket, settings):
    settings.ANEXOS_QUOTA_BYTES = 2 * len(TEXT)
    assert upload(partner, ticket, "1.txt").status_code == 201
    assert upload(partner, ticket, "2.txt").status_code == 201
    keys_before = stored_keys()

    response = upload(partner, ticket, "3.txt")

    assert_error(response, 413, "Cota de anexos da organização excedida.", "arquivo")
    assert Attachment.objects.filter(organization=organization).count() == 2
    assert stored_keys() == keys_before
    assert used(organization) == 2 * len(TEXT)


def test_the_quota_is_per_organization(partner, organization, other_organization, ticket, settings):
    settings.ANEXOS_QUOTA_BYTES = len(TEXT)
    other = bearer_client(make_key(other_organization))
    assert upload(partner, ticket).status_code == 201

    assert upload(other, make_ticket(other_organization)).status_code == 201
    assert upload(partner, ticket).status_code == 413


def test_deleting_a_ticket_gives_its_bytes_back(partner, organization, ticket, agent, settings):
    settings.ANEXOS_QUOTA_BYTES = len(TEXT)
    assert upload(partner, ticket).status_code == 201
    assert upload(partner, make_ticket(organization)).status_code == 413

    ticket_delete(ticket=ticket, actor=Actor.of_agent(agent))

    assert used(organization) == 0
    assert upload(partner, make_ticket(organization)).status_code == 201


def test_agents_files_count_against_the_quota_too(organization, ticket, agent, settings):
    settings.ANEXOS_QUOTA_BYTES = len(TEXT)
    reply_create_with_attachments(
        ticket=ticket, agent=agent, body="Segue", internal=True, uploads=[upload_file(TEXT, "a.txt", "text/plain")]
    )

    assert used(organization) == len(TEXT)
    with pytest.raises(Exception, match="Cota de anexos"):
        reply_create_with_attachments(
            ticket=ticket, agent=agent, body="Outra", internal=False, uploads=[upload_file(TEXT, "b.txt", "text/plain")]
        )


def test_no_quota_when_the_setting_is_zero(partner, ticket, settings):
    settings.ANEXOS_QUOTA_BYTES = 0

    assert upload(partner, ticket).status_code == 201


def test_a_disk_below_the_floor_is_a_503_before_anything_is_written(
    partner, organization, ticket, monkeypatch, settings
):
    settings.ANEXOS_MIN_FREE_BYTES = 10 * 1024**2
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(100 * 1024**2, 95 * 1024**2, 5 * 1024**2))
    keys_before = stored_keys()

    response = upload(partner, ticket)

    assert_error(response, 503, "Serviço indisponível.", "arquivo")
    assert response["Retry-After"] == "60"
    assert stored_keys() == keys_before
    assert not Attachment.objects.exists()


def test_the_usage_is_shown_in_the_admin(client, admin, organization, partner, ticket):
    assert upload(partner, ticket).status_code == 201
    client.force_login(admin)

    page = client.get("/admin/tickets/attachmentusage/").content.decode()

    assert organization.name in page
    assert f"({len(TEXT)} bytes)" in page
    assert "5 GiB" in page or "5120 MiB" in page


# --- Finding 7: the partner's cap counts only what the partner sees ---------------------------------------


def test_a_notes_files_do_not_count_against_the_partners_cap(partner, ticket, agent, settings):
    settings.ANEXOS_POR_TICKET = 1
    reply_create_with_attachments(
        ticket=ticket, agent=agent, body="Nota", internal=True, uploads=[upload_file(TEXT, "n.txt", "text/plain")]
    )

    assert upload(partner, ticket).status_code == 201
    response = upload(partner, ticket)

    assert response.status_code == 409  # its own file now fills the cap, as it would without the note


# --- Under parallel uploads (PostgreSQL: real row locks) -------------------------------------------------

THREADS = 8
FITTING = 3


def test_parallel_uploads_never_pass_the_quota(postgres_only, settings):
    settings.ANEXOS_QUOTA_BYTES = FITTING * len(TEXT)
    organization = make_organization("Cota em paralelo")
    key = make_key(organization)
    tickets = [make_ticket(organization) for _ in range(THREADS)]  # one ticket each: only the quota binds

    statuses = parallel_uploads(key, tickets, THREADS)

    assert sorted(statuses) == [201] * FITTING + [413] * (THREADS - FITTING)
    assert Attachment.objects.filter(organization=organization).count() == FITTING
    assert used(organization) == FITTING * len(TEXT)
