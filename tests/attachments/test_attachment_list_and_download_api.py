"""GET /api/v1/tickets/{id}/anexos and the signed download link: public attachments only, oldest first,
paginated, a fixed number of queries; the link serves the file as a download, 30 minutes, bound to
the attachment and its organization, never an internal note's."""

import time
import uuid
from urllib.parse import unquote

import pytest
from django.core import signing

from helpdesk.services import organization_set_active
from tests.assertions import (
    assert_error,
    assert_success,
    assert_ticket_not_found,
    assert_validation_error,
    queries_of,
)
from tests.attachments.samples import ACCEPTED, PNG, TEXT, download, upload_file
from tests.factories import make_customer_reply, make_ticket
from tickets.attachments.services import reply_create_with_attachments
from tickets.attachments.signing import attachment_token
from tickets.models import Attachment

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def agent_files(ticket, agent, *files, internal=False):
    """An agent's reply (or note) with files, through the service the panel and the admin use."""
    uploads = [upload_file(content, name, "application/octet-stream") for name, content in files]
    return reply_create_with_attachments(ticket=ticket, agent=agent, body="Segue.", internal=internal, uploads=uploads)


def listed(client, ticket, **params):
    return assert_success(client.get(f"/api/v1/tickets/{ticket.pk}/anexos", params), 200, "Anexos listados.")


def test_the_list_has_the_customers_and_agents_public_files_oldest_first_and_no_notes_file(
    partner, upload, ticket, admin
):
    customer = make_customer_reply(ticket)
    assert_success(upload(ticket, upload_file(PNG, "cliente.png"), resposta_id=str(customer.pk)), 201, "Anexo enviado.")
    public_reply, _ = agent_files(ticket, admin.agent, ("resposta.txt", TEXT))
    agent_files(ticket, admin.agent, ("nota-secreta.txt", TEXT), internal=True)

    page = listed(partner, ticket)

    assert [item["nome"] for item in page["data"]] == ["cliente.png", "resposta.txt"]
    assert [item["resposta_id"] for item in page["data"]] == [str(customer.pk), str(public_reply.pk)]
    assert (page["total"], page["por_pagina"], page["pagina_atual"], page["ultima_pagina"]) == (2, 15, 1, 1)
    assert "nota-secreta" not in str(partner.get(f"/api/v1/tickets/{ticket.pk}/anexos").content)


def test_the_list_is_paginated_like_every_list(partner, upload, ticket):
    for n in range(3):
        assert_success(upload(ticket, upload_file(TEXT, f"{n}.txt", "text/plain")), 201, "Anexo enviado.")

    second = listed(partner, ticket, page=2, por_pagina=2)
    past = listed(partner, ticket, page=9, por_pagina=2)

    assert [item["nome"] for item in second["data"]] == ["2.txt"]
    assert (second["total"], second["ultima_pagina"], past["data"]) == (3, 2, [])
    for bad in ({"por_pagina": 0}, {"por_pagina": 101}, {"page": "x"}):
        assert_validation_error(partner.get(f"/api/v1/tickets/{ticket.pk}/anexos", bad), next(iter(bad)))


def test_another_organizations_ticket_list_answers_like_a_missing_one(partner, other_organization):
    for ticket_id in (make_ticket(other_organization).pk, uuid.uuid4(), "x"):
        assert_ticket_not_found(partner.get(f"/api/v1/tickets/{ticket_id}/anexos"))


def test_the_list_runs_the_same_queries_for_1_and_30_attachments(partner, upload, ticket, admin):
    assert_success(upload(ticket), 201, "Anexo enviado.")
    one_queries, one = queries_of(partner, f"/api/v1/tickets/{ticket.pk}/anexos", {"por_pagina": 100})
    for n in range(29):
        if n % 2:
            assert_success(upload(ticket), 201, "Anexo enviado.")
        else:
            agent_files(ticket, admin.agent, (f"{n}.txt", TEXT))

    many_queries, many = queries_of(partner, f"/api/v1/tickets/{ticket.pk}/anexos", {"por_pagina": 100})

    assert (len(one["data"]), len(many["data"])) == (1, 30)
    assert len(many_queries) == len(one_queries) == 4, "\n".join(many_queries)  # key, ticket, count, page


@pytest.mark.parametrize("kind", ["png", "pdf", "docx"])
def test_the_link_serves_the_file_as_a_download_with_the_sniffed_type(partner, anon_client, upload, ticket, kind):
    content, served = ACCEPTED[kind]
    data = assert_success(
        upload(ticket, upload_file(content, f"fatura março.{kind}", "text/html")), 201, "Anexo enviado."
    )

    status, headers, body = download(anon_client, data["url"])

    assert (status, body) == (200, content)
    assert headers["Content-Type"] == served
    assert headers["Content-Disposition"].startswith("attachment;")
    assert f"fatura março.{kind}" in unquote(headers["Content-Disposition"])


def test_the_link_says_nosniff_and_forbids_everything_as_a_document(anon_client, upload, ticket, filesystem_only):
    data = assert_success(upload(ticket, upload_file(TEXT, "nota.txt", "text/plain")), 201, "Anexo enviado.")

    response = anon_client.get(data["url"])

    assert response.status_code == 200
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "default-src 'none'"
    assert response["Content-Disposition"] == 'attachment; filename="nota.txt"'
    assert response["Content-Length"] == str(len(TEXT))


def test_a_unicode_name_is_sent_as_rfc_5987_filename(anon_client, upload, ticket, filesystem_only):
    data = assert_success(upload(ticket, upload_file(TEXT, "relatório ção.txt", "text/plain")), 201, "Anexo enviado.")

    response = anon_client.get(data["url"])

    assert response["Content-Disposition"] == "attachment; filename*=utf-8''relat%C3%B3rio%20%C3%A7%C3%A3o.txt"


def test_an_altered_or_expired_link_is_403_on_assinatura(anon_client, upload, ticket, monkeypatch):
    url = assert_success(upload(ticket), 201, "Anexo enviado.")["url"]
    token = url.rsplit("/", 1)[1]
    altered = url[:-3] + ("AAA" if not url.endswith("AAA") else "BBB")

    assert_error(anon_client.get(altered), 403, "Acesso negado.", "assinatura")
    assert_error(anon_client.get(url.replace(token, "lixo")), 403, "Acesso negado.", "assinatura")
    later = time.time() + 30 * 60 + 5
    monkeypatch.setattr(signing.time, "time", lambda: later)
    assert_error(anon_client.get(url), 403, "Acesso negado.", "assinatura")


def test_the_link_is_valid_for_30_minutes(anon_client, upload, ticket, monkeypatch):
    url = assert_success(upload(ticket), 201, "Anexo enviado.")["url"]
    later = time.time() + 29 * 60
    monkeypatch.setattr(signing.time, "time", lambda: later)

    assert download(anon_client, url)[0] == 200


def test_an_internal_notes_file_never_opens_with_a_partners_link(anon_client, ticket, admin, organization):
    _, [hidden] = agent_files(ticket, admin.agent, ("nota.txt", TEXT), internal=True)
    # A link signed exactly as the partner's are, for the note's file: as if it had been guessed.
    forged = f"/api/v1/anexos/{attachment_token(hidden.pk, organization.pk)}"
    agents = f"/api/v1/anexos/{attachment_token(hidden.pk, organization.pk, for_agent=True)}"

    assert_error(anon_client.get(forged), 404, "Anexo não encontrado.", "anexo")
    assert download(anon_client, agents)[0] == 200


def test_a_link_is_bound_to_its_organization(anon_client, upload, ticket, other_organization):
    data = assert_success(upload(ticket), 201, "Anexo enviado.")
    other_org_token = attachment_token(data["id"], other_organization.pk)

    assert_error(anon_client.get(f"/api/v1/anexos/{other_org_token}"), 404, "Anexo não encontrado.", "anexo")


def test_the_link_of_a_deleted_attachment_is_404(anon_client, upload, ticket):
    url = assert_success(upload(ticket), 201, "Anexo enviado.")["url"]
    Attachment.objects.all().delete()

    assert_error(anon_client.get(url), 404, "Anexo não encontrado.", "anexo")


def test_a_suspended_organizations_links_stop_opening_until_it_is_restored(anon_client, upload, ticket, organization):
    url = assert_success(upload(ticket), 201, "Anexo enviado.")["url"]

    organization_set_active(organization=organization, is_active=False)
    assert_error(anon_client.get(url), 404, "Anexo não encontrado.", "anexo")

    organization_set_active(organization=organization, is_active=True)
    status, _headers, _body = download(anon_client, url)
    assert status == 200
