"""Data-subject requests (LGPD/GDPR): GET /api/contatos/{id}/exportar and POST /api/contatos/{id}/anonimizar.

The person is made through the doors partners and agents use (tickets, customer replies, a file, agent replies
that emit events with deliveries, an Idempotency-Key answer); after anonymisation, their name, e-mail and
phone are in no answer of any door, no stored event, delivery attempt or stored answer, no audit record and no
log line, while tickets, numbers and counts stay.
"""

import json
import types

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from helpdesk.models import AuditRecord
from integrations import delivery as delivery_module
from integrations.delivery import delivery_attempt
from integrations.models import EventKind, IdempotencyRecord, WebhookDelivery, WebhookDeliveryAttempt, WebhookEvent
from tests.assertions import assert_error, assert_success, bearer_client, panel_client
from tests.factories import make_key, make_ticket, make_webhook
from tickets.attachments.storage import attachment_storage
from tickets.models import Attachment, Contact, Ticket, TicketCount
from tickets.services import RequesterData

pytestmark = pytest.mark.usefixtures("example_dns", "queued", "generous_rate_limits")

NAME = "Joana Titular Exemplar"
EMAIL = "joana.titular@exemplo.test"
PHONE = "+55 11 98888-7777"
EXTERNAL_ID = "crm-joana-77"
PERSON = (NAME, EMAIL, PHONE)
NOTE = "NOTA-INTERNA-SIGILOSA"


class EchoingReceiver:
    """A receiver that refuses the delivery and quotes the person back: its answer lands in the delivery log."""

    def post(self, url, data=None, headers=None, **kwargs):
        answer = f"Cliente {NAME} <{EMAIL}> tel. {PHONE} desconhecido".encode()
        raw = types.SimpleNamespace(
            read=lambda amount, decode_content=False, _left=[answer]: _left.pop() if _left else b""
        )
        return types.SimpleNamespace(status_code=422, headers={}, raw=raw, close=lambda: None)


@pytest.fixture
def person(organization, admin, partner, monkeypatch, settings):
    """Joana's two tickets, her replies and file, an agent's reply and note, events delivered to a webhook."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    webhook = make_webhook(organization)
    requester = {"nome": NAME, "email": EMAIL, "telefone": PHONE, "external_id": EXTERNAL_ID}
    created = partner.post(
        "/api/v1/tickets",
        {"assunto": "Entrega atrasada", "descricao": "Cadê meu pedido?", "solicitante": requester},
        format="json",
        HTTP_IDEMPOTENCY_KEY="pedido-joana",
    )
    first = assert_success(created, 201, "Ticket criado.")
    second = partner.post(
        "/api/v1/tickets",
        {"assunto": "Troca", "descricao": "Quero trocar", "solicitante": requester},
        format="json",
    ).json()["data"]
    reply = partner.post(f"/api/v1/tickets/{first['id']}/respostas", {"mensagem": "Alguma novidade?"}, format="json")
    assert reply.status_code == 201
    upload = partner.post(
        f"/api/v1/tickets/{first['id']}/anexos",
        {"arquivo": SimpleUploadedFile("comprovante.txt", b"Comprovante da Joana\n", "text/plain")},
        format="multipart",
    )
    assert upload.status_code == 201
    agent = panel_client(admin.email)
    answered = agent.post(
        f"/api/tickets/{first['id']}/respostas", {"mensagem": "Sai hoje.", "interna": False}, format="json"
    )
    assert answered.status_code == 201
    noted = agent.post(f"/api/tickets/{first['id']}/respostas", {"mensagem": NOTE, "interna": True}, format="json")
    assert noted.status_code == 201
    monkeypatch.setattr(delivery_module, "_session", EchoingReceiver)
    for delivery in WebhookDelivery.objects.filter(webhook=webhook):
        delivery_attempt(delivery_id=delivery.pk, expected_attempts=0)
    contact = Contact.objects.get(organization=organization, external_id=EXTERNAL_ID)
    return types.SimpleNamespace(contact=contact, tickets=[first["id"], second["id"]], webhook=webhook)


@pytest.fixture
def bystander(organization, other_organization):
    """Pedro in the same organization, and Joana's namesake (same e-mail) in another one: neither is touched."""
    pedro = make_ticket(organization, requester=RequesterData(name="Pedro Vizinho", email="pedro@exemplo.test"))
    elsewhere = make_ticket(
        other_organization, requester=RequesterData(name=NAME, email=EMAIL, phone=PHONE, external_id=EXTERNAL_ID)
    )
    return types.SimpleNamespace(pedro=pedro, elsewhere=elsewhere)


def text_of(*values) -> str:
    return json.dumps(values, ensure_ascii=False, default=str)


def assert_no_trace(text: str) -> None:
    found = [value for value in PERSON if value.lower() in text.lower()]
    assert found == []


# --- export ----------------------------------------------------------------------------------------


def test_the_export_holds_the_person_their_tickets_replies_files_events_and_deliveries(
    organization, other_organization, manager, person, bystander
):
    response = manager.get(f"/api/contatos/{person.contact.pk}/exportar")

    document = assert_success(response, 200, "Dados do contato exportados.")
    assert set(document) == {"contato", "tickets", "anexos", "avaliacoes", "eventos", "entregas", "exportado_em"}
    assert document["contato"] == {
        "id": str(person.contact.pk),
        "nome": NAME,
        "email": EMAIL,
        "telefone": PHONE,
        "external_id": EXTERNAL_ID,
        "criado_em": document["contato"]["criado_em"],
        "anonimizado_em": None,
    }
    assert [ticket["id"] for ticket in document["tickets"]] == person.tickets
    partner_view = bearer_client(make_key(organization)).get(f"/api/v1/tickets/{person.tickets[0]}").json()["data"]
    assert document["tickets"][0] == partner_view  # the public thread, exactly as the partner sees it
    assert [reply["mensagem"] for reply in document["tickets"][0]["respostas"]] == ["Alguma novidade?", "Sai hoje."]
    [attachment] = document["anexos"]
    assert attachment["nome"] == "comprovante.txt"
    assert attachment["ticket_id"] == person.tickets[0]
    assert b"".join(Client().get(attachment["url"]).streaming_content) == b"Comprovante da Joana\n"
    assert document["avaliacoes"] == []
    assert [event["evento"] for event in document["eventos"]] == ["ticket.resposta_publica"]
    assert document["eventos"][0]["data"]["ticket"]["solicitante"]["email"] == EMAIL
    [delivery] = document["entregas"]
    assert delivery["evento_id"] == document["eventos"][0]["id"]
    assert delivery["webhook_id"] == str(person.webhook.pk)
    assert NAME in delivery["historico"][0]["resposta"]
    text = text_of(document)
    assert NOTE not in text
    assert "Pedro Vizinho" not in text and str(bystander.pedro.pk) not in text
    assert str(bystander.elsewhere.pk) not in text and str(bystander.elsewhere.requester.pk) not in text
    [record] = AuditRecord.objects.filter(action="contato.exportado")
    assert (record.organization_id, record.resource_id) == (organization.pk, str(person.contact.pk))


def test_another_organizations_or_an_unknown_contact_is_404(organization, other_organization, manager, person):
    theirs = make_ticket(other_organization).requester
    for contact_id in (theirs.pk, "00000000-0000-0000-0000-000000000000", "nao-e-um-id"):
        for response in (
            manager.get(f"/api/contatos/{contact_id}/exportar"),
            manager.post(f"/api/contatos/{contact_id}/anonimizar"),
        ):
            assert_error(response, 404, "Contato não encontrado.", "id")
    theirs.refresh_from_db()
    assert theirs.anonymized_at is None and theirs.name.startswith("Cliente")
    assert not AuditRecord.objects.filter(action__startswith="contato.").exclude(action="contato.atualizado").exists()


def test_a_plain_agent_may_neither_export_nor_anonymise(agent_client, person):
    for response in (
        agent_client.get(f"/api/contatos/{person.contact.pk}/exportar"),
        agent_client.post(f"/api/contatos/{person.contact.pk}/anonimizar"),
    ):
        assert_error(response, 403, "Acesso negado.", "permissao")
    person.contact.refresh_from_db()
    assert person.contact.name == NAME


# --- anonymisation ---------------------------------------------------------------------------------


def every_answer(organization, manager, partner, person) -> str:
    """What every door answers about the organization's tickets, events and deliveries, as one text."""
    answers = [partner.get(f"/api/v1/tickets/{ticket}").json() for ticket in person.tickets] + [
        partner.get("/api/v1/tickets").json(),
        partner.get("/api/v1/tickets/alteracoes").json(),
        partner.get("/api/v1/eventos").json(),
        manager.get(f"/api/tickets/{person.tickets[0]}").json(),
        manager.get("/api/tickets").json(),
        manager.get(f"/api/webhooks/{person.webhook.pk}/entregas").json(),
        manager.get("/api/auditoria").json(),
        manager.get(f"/api/contatos/{person.contact.pk}/exportar").json(),
    ]
    return text_of(answers)


def stored_text(organization) -> str:
    return text_of(
        list(WebhookEvent.objects.values_list("body", flat=True)),
        list(WebhookDeliveryAttempt.objects.values_list("response_excerpt", "error")),
        list(IdempotencyRecord.objects.values_list("response_body", flat=True)),
        list(AuditRecord.objects.filter(organization=organization).values()),
        list(Contact.objects.filter(organization=organization).values()),
    )


def test_anonymising_leaves_no_trace_of_the_person_and_keeps_the_tickets(
    organization, manager, partner, person, bystander, json_log, django_capture_on_commit_callbacks
):
    before_text = every_answer(organization, manager, partner, person)
    assert all(value in before_text for value in PERSON)  # the checks below can fail
    assert all(value in stored_text(organization) for value in PERSON)
    numbers = list(Ticket.objects.filter(organization=organization).order_by("number").values_list("number", "pk"))
    counts = list(TicketCount.objects.filter(organization=organization).values_list("priority", "status", "tickets"))
    [file] = Attachment.objects.filter(ticket__requester=person.contact)
    storage = attachment_storage()
    assert storage.exists(file.storage_key)

    with django_capture_on_commit_callbacks(execute=True):  # files go once the deletion commits
        response = manager.post(f"/api/contatos/{person.contact.pk}/anonimizar")

    contact = assert_success(response, 200, "Contato anonimizado.")
    assert contact == {
        "id": str(person.contact.pk),
        "nome": "Contato anonimizado",
        "email": None,
        "telefone": None,
        "external_id": None,
        "criado_em": contact["criado_em"],
        "anonimizado_em": contact["anonimizado_em"],
    }
    assert contact["anonimizado_em"] is not None
    assert_no_trace(every_answer(organization, manager, partner, person))
    assert_no_trace(stored_text(organization))
    assert_no_trace(text_of(json_log()))
    # The partner's retry replays its stored answer: without the person.
    retry = partner.post(
        "/api/v1/tickets",
        {
            "assunto": "Entrega atrasada",
            "descricao": "Cadê meu pedido?",
            "solicitante": {"nome": NAME, "email": EMAIL, "telefone": PHONE, "external_id": EXTERNAL_ID},
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="pedido-joana",
    )
    assert retry.json()["data"]["solicitante"] == {
        "nome": "Contato anonimizado",
        "email": None,
        "telefone": None,
        "external_id": None,
    }
    assert not storage.exists(file.storage_key)
    assert not Attachment.objects.filter(pk=file.pk).exists()
    assert (
        list(Ticket.objects.filter(organization=organization).order_by("number").values_list("number", "pk")) == numbers
    )
    assert (
        list(TicketCount.objects.filter(organization=organization).values_list("priority", "status", "tickets"))
        == counts
    )
    bystander.pedro.requester.refresh_from_db()
    bystander.elsewhere.requester.refresh_from_db()
    assert bystander.pedro.requester.name == "Pedro Vizinho"
    assert (bystander.elsewhere.requester.name, bystander.elsewhere.requester.email) == (NAME, EMAIL)
    [record] = AuditRecord.objects.filter(action="contato.anonimizado")
    assert (record.organization_id, record.resource_id) == (organization.pk, str(person.contact.pk))


def test_partners_hear_of_it_through_a_subscribed_webhook_and_the_feed(organization, manager, partner, person):
    listener = make_webhook(
        organization, name="LGPD", url="https://hooks.example.com/lgpd", events=["contato.anonimizado"]
    )

    assert_success(manager.post(f"/api/contatos/{person.contact.pk}/anonimizar"), 200, "Contato anonimizado.")

    [delivery] = WebhookDelivery.objects.filter(webhook=listener)
    body = json.loads(delivery.event.body)
    assert body["evento"] == "contato.anonimizado"
    assert body["data"]["contato"]["id"] == str(person.contact.pk)
    assert body["data"]["contato"]["nome"] == "Contato anonimizado"
    assert [ticket["id"] for ticket in body["data"]["tickets"]] == person.tickets
    assert body["data"]["ator"]["tipo"] == "agente"
    feed = partner.get("/api/v1/eventos", {"tipo": "contato.anonimizado"}).json()["data"]["itens"]
    assert [item["id"] for item in feed] == [body["id"]]


def test_anonymising_twice_answers_200_and_changes_nothing_more(organization, manager, person):
    first = assert_success(manager.post(f"/api/contatos/{person.contact.pk}/anonimizar"), 200, "Contato anonimizado.")
    events = WebhookEvent.objects.count()
    records = AuditRecord.objects.count()

    again = assert_success(manager.post(f"/api/contatos/{person.contact.pk}/anonimizar"), 200, "Contato anonimizado.")

    assert again == first
    assert (WebhookEvent.objects.count(), AuditRecord.objects.count()) == (events, records)
    assert WebhookEvent.objects.filter(kind=EventKind.CONTACT_ANONYMIZED).count() == 1
