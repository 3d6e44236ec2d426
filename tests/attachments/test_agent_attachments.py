"""Agents' files: the panel API's reply with files, the admin's reply form, `ticket.anexo_adicionado`,
and internal notes' files, which never reach a partner (list, id, webhook, link)."""

import json

import pytest
from django.urls import reverse

from integrations.models import EventKind, WebhookDelivery, WebhookEvent
from tests.admin.test_admin_tickets import form_values
from tests.assertions import assert_error, assert_exact_validation_error, assert_success, utc
from tests.attachments.samples import ACCEPTED, PNG, REFUSED, TEXT, download, stored_keys, upload_file
from tests.contract import TICKET_SUMMARY_FIELDS
from tests.factories import make_webhook
from tickets.models import Attachment, AttachmentSender, Reply

REPLIES = "/api/tickets/{}/respostas"
ANEXO_FIELDS = {"id", "nome", "tipo", "tamanho", "resposta_id", "criado_em"}


@pytest.fixture
def webhook(organization, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    return make_webhook(organization, url="http://127.0.0.1:9/erp", events=["ticket.anexo_adicionado"])


def reply_with_files(client, ticket, files, **fields):
    data = {"mensagem": "Segue o comprovante.", **fields, "arquivo": files}
    return client.post(REPLIES.format(ticket.pk), data, format="multipart")


def event_bodies(organization, kind) -> list[dict]:
    events = WebhookEvent.objects.filter(organization=organization, kind=kind).order_by("created_at")
    return [json.loads(event.body) for event in events]


def test_a_panel_reply_with_files_answers_the_reply_and_its_attachments(agent_client, ticket, agent):
    files = [upload_file(PNG, "tela.png"), upload_file(TEXT, "log.txt", "text/plain")]

    data = assert_success(reply_with_files(agent_client, ticket, files), 201, "Resposta enviada.")

    reply = Reply.objects.get(ticket=ticket)
    assert (data["id"], data["mensagem"], data["interna"]) == (str(reply.pk), "Segue o comprovante.", False)
    assert [(item["nome"], item["tipo"], item["interna"]) for item in data["anexos"]] == [
        ("tela.png", "image/png", False),
        ("log.txt", "text/plain", False),
    ]
    attachments = list(Attachment.objects.order_by("created_at", "name"))
    assert {a.reply for a in attachments} == {reply}
    assert {(a.sender, a.author_agent) for a in attachments} == {(AttachmentSender.AGENT, agent)}


def test_a_panel_reply_in_json_answers_exactly_as_before(agent_client, ticket):
    response = agent_client.post(REPLIES.format(ticket.pk), {"mensagem": "Oi", "interna": False}, format="json")

    data = assert_success(response, 201, "Resposta enviada.")
    assert set(data) == {"id", "mensagem", "origem", "editado", "autor", "criado_em", "interna"}


def test_each_file_of_an_agents_public_reply_is_one_event_with_the_ticket_and_the_file(
    agent_client, ticket, organization, webhook
):
    files = [upload_file(PNG, "tela.png"), upload_file(TEXT, "log.txt", "text/plain")]
    data = assert_success(reply_with_files(agent_client, ticket, files), 201, "Resposta enviada.")

    bodies = event_bodies(organization, EventKind.ATTACHMENT_ADDED)

    assert [body["evento"] for body in bodies] == ["ticket.anexo_adicionado"] * 2
    assert sorted(body["data"]["anexo"]["nome"] for body in bodies) == ["log.txt", "tela.png"]
    for body in bodies:
        assert set(body["data"]) == {"ticket", "anexo", "ator"}
        assert body["data"]["ator"]["tipo"] == "agente"
        assert set(body["data"]["ticket"]) == TICKET_SUMMARY_FIELDS
        assert body["data"]["ticket"]["id"] == str(ticket.pk)
        anexo = body["data"]["anexo"]
        assert set(anexo) == ANEXO_FIELDS  # no link: it would expire before the retries end
        assert anexo["resposta_id"] == data["id"]
        attachment = Attachment.objects.get(pk=anexo["id"])
        assert (anexo["tipo"], anexo["tamanho"], utc(anexo["criado_em"])) == (
            attachment.content_type,
            attachment.size,
            attachment.created_at,
        )
    assert WebhookDelivery.objects.filter(webhook=webhook).count() == 2
    assert len(event_bodies(organization, EventKind.PUBLIC_REPLY)) == 1


def test_the_event_feed_lists_and_filters_the_new_kind(agent_client, partner, ticket):
    assert_success(reply_with_files(agent_client, ticket, [upload_file()]), 201, "Resposta enviada.")

    data = assert_success(partner.get("/api/v1/eventos", {"tipo": "ticket.anexo_adicionado"}), 200, "Eventos listados.")

    assert [item["evento"] for item in data["itens"]] == ["ticket.anexo_adicionado"]


def test_a_webhook_subscribes_to_the_new_kind(manager, settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    body = {"nome": "Anexos", "url": "http://127.0.0.1:9/a", "eventos": ["ticket.anexo_adicionado"]}

    response = manager.post("/api/webhooks", body, format="json")

    data = assert_success(response, 200, "Webhook criado. Guarde o segredo: ele não será exibido novamente.")
    assert data["eventos"] == ["ticket.anexo_adicionado"]


def test_an_internal_notes_files_never_reach_the_partner(
    agent_client, partner, anon_client, ticket, organization, webhook
):
    note = assert_success(
        reply_with_files(
            agent_client, ticket, [upload_file(TEXT, "senha-do-cliente.txt", "text/plain")], interna="true"
        ),
        201,
        "Resposta enviada.",
    )
    [hidden] = note["anexos"]

    listed = partner.get(f"/api/v1/tickets/{ticket.pk}/anexos")
    detail = partner.get(f"/api/v1/tickets/{ticket.pk}")
    panel = assert_success(agent_client.get(f"/api/tickets/{ticket.pk}/anexos"), 200, "Anexos listados.")

    assert hidden["interna"] is True
    assert assert_success(listed, 200, "Anexos listados.")["data"] == []
    for response in (listed, detail):
        assert "senha-do-cliente" not in response.content.decode()
        assert hidden["id"] not in response.content.decode()
    assert not WebhookEvent.objects.filter(organization=organization).exists()
    assert not WebhookDelivery.objects.exists()
    assert [(item["id"], item["interna"]) for item in panel["data"]] == [(hidden["id"], True)]
    assert download(anon_client, hidden["url"])[0] == 200  # the agents' own link


def test_a_refused_file_keeps_neither_the_reply_nor_any_file(agent_client, ticket, organization):
    keys_before = stored_keys()
    files = [upload_file(PNG, "ok.png"), upload_file(REFUSED["html"], "pagina.png", "image/png")]

    response = reply_with_files(agent_client, ticket, files)

    assert_error(response, 415, "Tipo de arquivo não aceito.", "arquivo")
    assert not Reply.objects.exists()
    assert not Attachment.objects.exists()
    assert stored_keys() == keys_before
    assert not WebhookEvent.objects.filter(organization=organization).exists()


def test_files_past_the_tickets_limit_are_409_and_the_reply_is_not_kept(agent_client, ticket, settings):
    settings.ANEXOS_POR_TICKET = 1

    response = reply_with_files(agent_client, ticket, [upload_file(), upload_file()])

    assert_error(response, 409, "Limite de anexos atingido.", "arquivo")
    assert not Reply.objects.exists()


def test_a_panel_reply_with_files_still_needs_its_message(agent_client, ticket):
    response = agent_client.post(REPLIES.format(ticket.pk), {"arquivo": [upload_file()]}, format="multipart")

    assert_exact_validation_error(response, {"mensagem": ["Este campo é obrigatório."]})
    assert not Attachment.objects.exists()


def test_text_sent_as_arquivo_is_422_and_nothing_is_kept(agent_client, ticket):
    data = {"mensagem": "Oi", "arquivo": "não é um arquivo"}

    response = agent_client.post(REPLIES.format(ticket.pk), data, format="multipart")

    assert response.status_code == 422
    assert list(response.json()["errors"]) == ["arquivo.0"]
    assert not Reply.objects.exists()


def test_more_than_ten_files_in_one_reply_are_422(agent_client, ticket):
    response = reply_with_files(agent_client, ticket, [upload_file() for _ in range(11)])

    assert_exact_validation_error(response, {"arquivo": ["Envie no máximo 10 arquivos por requisição."]})


# --- the admin ------------------------------------------------------------------------------------


@pytest.fixture
def staff(client, admin):
    """The admin of `organization` (staff and an agent) logged in to the admin."""
    client.force_login(admin)
    return client


def admin_submit(staff, ticket, files, **changes):
    url = reverse("admin:tickets_ticket_change", args=[ticket.pk])
    page = staff.get(url)
    assert b'enctype="multipart/form-data"' in page.content
    values, _ = form_values(page)
    values.update(changes, attachments=files, _save="Salvar")
    return staff.post(url, values)


def test_the_admin_reply_form_carries_files_through_the_same_service(staff, ticket, organization, webhook):
    content, served = ACCEPTED["pdf"]

    response = admin_submit(staff, ticket, [upload_file(content, "fatura.pdf", "application/pdf")], new_reply="Segue.")

    assert response.status_code == 302
    [attachment] = Attachment.objects.all()
    assert (attachment.name, attachment.content_type, attachment.reply.body) == ("fatura.pdf", served, "Segue.")
    assert len(event_bodies(organization, EventKind.ATTACHMENT_ADDED)) == 1
    page = staff.get(reverse("admin:tickets_ticket_change", args=[ticket.pk])).content.decode()
    assert 'class="anexo"' in page and "fatura.pdf" in page


def test_the_admin_note_with_a_file_stays_internal(staff, partner, ticket, organization, webhook):
    response = admin_submit(
        staff, ticket, [upload_file(TEXT, "interno.txt", "text/plain")], new_reply="Nota", internal="on"
    )

    assert response.status_code == 302
    assert Attachment.objects.get().reply.is_internal
    assert assert_success(partner.get(f"/api/v1/tickets/{ticket.pk}/anexos"), 200, "Anexos listados.")["data"] == []
    assert not WebhookEvent.objects.filter(organization=organization).exists()


def test_the_admin_refuses_a_bad_file_or_files_without_a_message_with_form_errors(staff, ticket):
    keys_before = stored_keys()

    refused = admin_submit(staff, ticket, [upload_file(REFUSED["exe"], "setup.png", "image/png")], new_reply="Oi")
    no_text = admin_submit(staff, ticket, [upload_file()], new_reply="")

    assert refused.status_code == no_text.status_code == 200
    assert "setup.png: Aceitos:" in refused.content.decode()
    assert "Escreva a mensagem que acompanha os anexos." in no_text.content.decode()
    assert not Reply.objects.exists()
    assert stored_keys() == keys_before
