"""Issue 19, findings 6 and 12: a download is saved under the sniffed type's extension (the list keeps the
name as sent), a name's invisible or line-breaking characters go, a 250-character extension is not a
500, and the admin's uploads stream like the API's (a file past ANEXO_MAX_BYTES refused at that chunk)."""

from urllib.parse import unquote

import pytest

from tests.assertions import assert_success
from tests.attachments.samples import ACCEPTED, TEXT, download, upload_file
from tests.attachments.test_agent_attachments import admin_submit
from tests.factories import make_ticket
from tickets.attachments.content import CANONICAL_EXTENSIONS, SERVED_TYPES, clean_name, download_name
from tickets.models import Attachment, Reply


@pytest.fixture
def ticket(organization):
    return make_ticket(organization)


def send(partner, ticket, file):
    return partner.post(f"/api/v1/tickets/{ticket.pk}/anexos", {"arquivo": file}, format="multipart")


@pytest.mark.parametrize(
    ("sent", "served_as"),
    [
        ("boleto.pdf.bat", "boleto.pdf.txt"),  # a script sent as text is saved as text, never run
        ("leia-me", "leia-me.txt"),
        ("nota.TXT", "nota.TXT"),
        ("nota.txt", "nota.txt"),
    ],
)
def test_a_text_downloads_under_the_text_extension_and_lists_as_sent(partner, anon_client, ticket, sent, served_as):
    data = assert_success(
        send(partner, ticket, upload_file(TEXT, sent, "application/x-msdownload")), 201, "Anexo enviado."
    )

    status, headers, _ = download(anon_client, data["url"])

    assert data["nome"] == sent
    assert status == 200
    assert unquote(headers["Content-Disposition"]).endswith(f'"{served_as}"') or unquote(
        headers["Content-Disposition"]
    ).endswith(f"''{served_as}")


def test_a_pdf_named_as_an_executable_downloads_as_a_pdf(partner, anon_client, ticket):
    content, _ = ACCEPTED["pdf"]
    data = assert_success(
        send(partner, ticket, upload_file(content, "fatura.exe", "application/pdf")), 201, "Anexo enviado."
    )

    _, headers, _ = download(anon_client, data["url"])

    assert 'filename="fatura.pdf"' in headers["Content-Disposition"]


def test_every_served_type_has_its_extension():
    assert set(SERVED_TYPES) <= set(CANONICAL_EXTENSIONS)
    assert download_name("x" * 255, "text/plain").endswith(".txt")
    assert len(download_name("x" * 255, "text/plain")) == 255


@pytest.mark.parametrize(
    "raw",
    [
        "boleto\u200b.pdf",
        "bol\u2028eto.pdf",
        "bol\u2029eto.pdf",
        "\ufeffboleto.pdf",
        "bo\u2060leto.pdf",
        "bo\u00adleto.pdf",
    ],
)
def test_invisible_and_line_breaking_characters_leave_the_name(raw):
    assert clean_name(raw) == "boleto.pdf"


def test_a_zero_width_joiner_of_an_emoji_stays():
    assert clean_name("família 👨\u200d👩\u200d👧.txt") == "família 👨\u200d👩\u200d👧.txt"


def test_a_250_character_extension_is_taken_not_a_500(partner, ticket):
    name = "a." + "x" * 250

    response = send(partner, ticket, upload_file(TEXT, name, "text/plain"))

    assert response.status_code == 201, response.content
    assert response.json()["data"]["nome"] == name


def test_the_admins_upload_past_the_limit_is_refused_as_it_streams(client, admin, ticket, settings):
    settings.ANEXO_MAX_BYTES = 1024
    client.force_login(admin)
    staff = client

    response = admin_submit(staff, ticket, [upload_file(TEXT * 200, "grande.txt", "text/plain")], new_reply="Segue")

    assert response.status_code == 413
    assert "1 KiB" in response.content.decode()
    assert not Reply.objects.exists()
    assert not Attachment.objects.exists()
