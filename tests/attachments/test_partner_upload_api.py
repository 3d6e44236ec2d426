"""POST /api/v1/tickets/{id}/anexos: the partner's upload, its checks and what a refusal leaves behind."""

import uuid

import pytest

from integrations.models import IdempotencyRecord, WebhookEvent
from tests.assertions import assert_error, assert_exact_validation_error, assert_success, assert_ticket_not_found, utc
from tests.attachments.samples import ACCEPTED, PNG, REFUSED, TEXT, stored_bytes, stored_keys, upload_file
from tests.factories import make_agent_reply, make_customer_reply, make_ticket, status_of
from tickets.models import Attachment, AttachmentSender
from tickets.services import ticket_update

FIELDS = {"id", "nome", "tipo", "tamanho", "resposta_id", "criado_em", "url"}


def test_an_upload_answers_201_with_the_attachment_and_keeps_the_file(upload, ticket, organization):
    keys_before = stored_keys()

    data = assert_success(upload(ticket, upload_file(PNG, "foto da tela.png")), 201, "Anexo enviado.")

    attachment = Attachment.objects.get()
    assert set(data) == FIELDS
    assert data["id"] == str(attachment.pk)
    assert (data["nome"], data["tipo"], data["tamanho"], data["resposta_id"]) == (
        "foto da tela.png",
        "image/png",
        len(PNG),
        None,
    )
    assert utc(data["criado_em"]) == attachment.created_at
    assert data["url"].startswith("http://testserver/api/v1/anexos/")
    assert (attachment.organization, attachment.ticket, attachment.sender) == (
        organization,
        ticket,
        AttachmentSender.PARTNER,
    )
    assert stored_keys() - keys_before == {attachment.storage_key}
    assert stored_bytes(attachment.storage_key) == PNG


def test_the_stored_key_is_random_never_the_file_name(upload, ticket):
    assert_success(upload(ticket, upload_file(PNG, "segredo.png")), 201, "Anexo enviado.")
    assert_success(upload(ticket, upload_file(PNG, "segredo.png")), 201, "Anexo enviado.")

    first, second = Attachment.objects.values_list("storage_key", flat=True)
    assert first != second
    assert "segredo" not in first + second
    assert len(first.rsplit("/", 1)[1]) >= 32


@pytest.mark.parametrize("kind", sorted(ACCEPTED))
def test_the_type_is_sniffed_from_the_content_whatever_the_name_and_the_header(upload, ticket, kind):
    content, served = ACCEPTED[kind]

    data = assert_success(upload(ticket, upload_file(content, "arquivo.exe", "text/html")), 201, "Anexo enviado.")

    assert data["tipo"] == served
    assert Attachment.objects.get().content_type == served


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_a_type_off_the_list_is_415_on_arquivo_and_nothing_is_kept(upload, ticket, kind):
    keys_before = stored_keys()

    response = upload(ticket, upload_file(REFUSED[kind], "foto.png", "image/png"))

    assert_error(response, 415, "Tipo de arquivo não aceito.", "arquivo")
    assert "PDF" in response.json()["errors"]["message"]
    assert not Attachment.objects.exists()
    assert stored_keys() == keys_before


def test_a_file_at_the_limit_is_taken_and_one_byte_more_is_413_on_arquivo(upload, ticket, settings):
    settings.ANEXO_MAX_BYTES = 4096
    keys_before = stored_keys()
    at_limit = TEXT + b"a" * (4096 - len(TEXT))

    assert_success(upload(ticket, upload_file(at_limit, "log.txt", "text/plain")), 201, "Anexo enviado.")
    response = upload(ticket, upload_file(at_limit + b"a", "log.txt", "text/plain"))

    assert_error(response, 413, "Arquivo muito grande.", "arquivo")
    assert response.json()["errors"]["message"] == "Cada arquivo pode ter no máximo 4 KiB."
    assert Attachment.objects.count() == 1
    assert len(stored_keys() - keys_before) == 1


def test_the_limit_is_counted_while_the_file_streams_not_after(upload, ticket, settings, monkeypatch):
    """The refusal comes at the chunk that passes the limit: the rest of the file is never written."""
    from tickets.attachments import uploads

    settings.ANEXO_MAX_BYTES = 100 * 1024
    written = []
    original = uploads.StreamedUploadHandler.receive_data_chunk
    monkeypatch.setattr(
        uploads.StreamedUploadHandler,
        "receive_data_chunk",
        lambda self, data, start: written.append(len(data)) or original(self, data, start),
    )

    response = upload(ticket, upload_file(TEXT * 20_000, "log.txt", "text/plain"))  # ~700 KiB

    assert_error(response, 413, "Arquivo muito grande.", "arquivo")
    assert sum(written) <= 100 * 1024 + 64 * 1024  # one chunk past the limit, not the whole file


def test_a_body_announced_larger_than_the_ceiling_is_refused_before_it_is_read(partner, ticket, settings):
    settings.ANEXO_MAX_BYTES = 1024
    body = (
        b"--X\r\nContent-Disposition: form-data; name=arquivo; filename=a.txt\r\n\r\n"
        + b"a" * 200_000
        + b"\r\n--X--\r\n"
    )

    response = partner.generic(
        "POST", f"/api/v1/tickets/{ticket.pk}/anexos", body, content_type="multipart/form-data; boundary=X"
    )

    assert_error(response, 413, "Arquivo muito grande.", "arquivo")
    assert not Attachment.objects.exists()


def test_the_json_body_limit_does_not_apply_to_uploads(upload, ticket, settings):
    settings.API_MAX_BODY_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024
    big = TEXT * 10_000  # ~350 KiB

    data = assert_success(upload(ticket, upload_file(big, "log.txt", "text/plain")), 201, "Anexo enviado.")

    assert data["tamanho"] == len(big)


def test_an_empty_file_is_422_on_arquivo(upload, ticket):
    response = upload(ticket, upload_file(b"", "vazio.txt", "text/plain"))

    assert_exact_validation_error(response, {"arquivo": ["O arquivo enviado está vazio."]})
    assert not Attachment.objects.exists()


def test_a_missing_file_is_422_on_arquivo(partner, ticket):
    for data in ({}, {"arquivo": "não é um arquivo"}, {"resposta_id": ""}):
        response = partner.post(f"/api/v1/tickets/{ticket.pk}/anexos", data, format="multipart")

        assert_exact_validation_error(response, {"arquivo": ["Nenhum arquivo foi submetido."]})


def test_a_repeated_resposta_id_is_422(partner, ticket):
    data = {"arquivo": upload_file(), "resposta_id": ["a", "b"]}

    response = partner.post(f"/api/v1/tickets/{ticket.pk}/anexos", data, format="multipart")

    assert_exact_validation_error(response, {"resposta_id": ["Informe um único valor."]})
    assert not Attachment.objects.exists()


def test_two_files_in_one_request_are_422_on_arquivo(partner, ticket):
    files = [upload_file(), upload_file(TEXT, "b.txt", "text/plain")]

    response = partner.post(f"/api/v1/tickets/{ticket.pk}/anexos", {"arquivo": files}, format="multipart")

    assert_exact_validation_error(response, {"arquivo": ["Envie um único arquivo por requisição."]})
    assert not Attachment.objects.exists()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b'{"arquivo": "x"}', "application/json"), (b"arquivo=x", "application/x-www-form-urlencoded"), (b"", "")],
    ids=["json", "urlencoded", "no-body"],
)
def test_a_body_that_is_not_multipart_is_422_on_arquivo_saying_how_to_send_it(partner, ticket, body, content_type):
    response = partner.generic("POST", f"/api/v1/tickets/{ticket.pk}/anexos", body, content_type=content_type)

    assert_exact_validation_error(
        response, {"arquivo": ["Envie o arquivo como multipart/form-data, no campo `arquivo`."]}
    )
    assert not Attachment.objects.exists()


def test_a_malformed_multipart_body_is_400_on_body(partner, ticket):
    response = partner.generic(
        "POST", f"/api/v1/tickets/{ticket.pk}/anexos", b"--X\r\nlixo", content_type="multipart/form-data; boundary="
    )

    assert_error(response, 400, "Multipart inválido.", "body")


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("../../etc/passwd.txt", "passwd.txt"),
        ("C:\\Users\\ana\\nota fiscal.txt", "nota fiscal.txt"),
        ("  relatório de março ção 📎.txt  ", "relatório de março ção 📎.txt"),
        ("fatura\u202etxt.exe", "faturatxt.exe"),
        ("linha\u0007\u001bquebrada.txt", "linhaquebrada.txt"),
        ("a" * 300 + ".txt", "a" * 251 + ".txt"),
    ],
)
def test_the_file_name_is_cleaned(upload, ticket, sent, kept):
    data = assert_success(upload(ticket, upload_file(TEXT, sent, "text/plain")), 201, "Anexo enviado.")

    assert data["nome"] == kept
    assert len(data["nome"]) <= 255


def test_a_reply_the_organization_sent_through_the_api_takes_the_file(upload, ticket):
    reply = make_customer_reply(ticket)

    data = assert_success(upload(ticket, resposta_id=str(reply.pk)), 201, "Anexo enviado.")

    assert data["resposta_id"] == str(reply.pk)
    assert Attachment.objects.get().reply == reply


def test_an_agents_reply_is_403_and_a_note_or_another_tickets_reply_is_404_on_resposta_id(
    upload, ticket, organization, other_organization, admin
):
    agent_reply = make_agent_reply(ticket, admin.agent)
    note = make_agent_reply(ticket, admin.agent, internal=True)
    elsewhere = make_customer_reply(make_ticket(organization))
    foreign = make_customer_reply(make_ticket(other_organization))

    assert_error(upload(ticket, resposta_id=str(agent_reply.pk)), 403, "Acesso negado.", "resposta_id")
    for reply_id in (note.pk, elsewhere.pk, foreign.pk, uuid.uuid4(), "não-é-uuid"):
        assert_error(upload(ticket, resposta_id=str(reply_id)), 404, "Resposta não encontrada.", "resposta_id")
    assert not Attachment.objects.exists()


def test_another_organizations_ticket_answers_like_a_missing_one(upload, other_organization):
    foreign = make_ticket(other_organization)

    for ticket_id in (foreign.pk, uuid.uuid4(), "nao-e-uuid"):
        assert_ticket_not_found(upload(ticket_id))
    assert not Attachment.objects.exists()


def test_past_anexos_por_ticket_the_upload_is_409_and_nothing_is_kept(upload, ticket, settings):
    settings.ANEXOS_POR_TICKET = 2
    for _ in range(2):
        assert_success(upload(ticket), 201, "Anexo enviado.")
    keys_before = stored_keys()

    response = upload(ticket)

    assert_error(response, 409, "Limite de anexos atingido.", "arquivo")
    assert response.json()["errors"]["message"] == "Um ticket guarda no máximo 2 anexos."
    assert Attachment.objects.count() == 2
    assert stored_keys() == keys_before


def test_a_closed_ticket_takes_no_file(upload, ticket, organization):
    ticket_update(ticket=ticket, status=status_of(organization, "fechado"))

    assert_error(upload(ticket), 409, "Ticket fechado.", "status")
    assert not Attachment.objects.exists()


def test_the_partners_upload_emits_no_event(upload, ticket, organization):
    assert_success(upload(ticket), 201, "Anexo enviado.")

    assert not WebhookEvent.objects.filter(organization=organization).exists()


def test_a_retry_with_the_same_idempotency_key_replays_the_first_answer(upload, ticket):
    headers = {"HTTP_IDEMPOTENCY_KEY": "anexo-1"}

    first = upload(ticket, upload_file(PNG, "a.png"), headers=headers)
    again = upload(ticket, upload_file(PNG, "a.png"), headers=headers)
    other = upload(ticket, upload_file(TEXT, "a.png", "text/plain"), headers=headers)

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert_exact_validation_error(other, {"Idempotency-Key": ["Esta chave já foi usada com outra requisição."]})
    assert Attachment.objects.count() == 1
    assert IdempotencyRecord.objects.get().status_code == 201


def test_a_refused_upload_with_an_idempotency_key_is_replayed_too(upload, ticket, settings):
    settings.ANEXOS_POR_TICKET = 0
    headers = {"HTTP_IDEMPOTENCY_KEY": "anexo-2"}

    first = upload(ticket, headers=headers)
    settings.ANEXOS_POR_TICKET = 5
    again = upload(ticket, headers=headers)

    assert_error(first, 409, "Limite de anexos atingido.", "arquivo")
    assert again.json() == first.json()
    assert not Attachment.objects.exists()


@pytest.mark.django_db(transaction=True)  # as in production: the upload's own transaction, none around it
def test_a_failure_of_the_services_transaction_removes_the_file_it_stored(upload, ticket, monkeypatch):
    keys_before = stored_keys()

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Attachment.objects, "create", broken)

    assert_error(upload(ticket), 500, "Erro interno do servidor.", "server")
    assert stored_keys() == keys_before
    assert not Attachment.objects.exists()
