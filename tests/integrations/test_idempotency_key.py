from integrations.models import IdempotencyRecord
from tickets.models import Reply, Ticket

PAYLOAD = {"assunto": "Pedido", "descricao": "Chegou quebrado", "solicitante": {"nome": "Maria"}}


def test_retry_with_same_key_and_body_replays_first_response_without_creating_again(partner, organization):
    first = partner.post("/api/v1/tickets", PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="req-1")
    retry = partner.post("/api/v1/tickets", PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="req-1")

    assert first.status_code == 201
    assert retry.status_code == 201
    assert retry.json() == first.json()
    assert retry["Idempotent-Replayed"] == "true"
    assert Ticket.objects.filter(organization=organization).count() == 1


def test_same_key_with_another_body_is_a_validation_error(partner, organization):
    partner.post("/api/v1/tickets", PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="req-1")

    response = partner.post(
        "/api/v1/tickets", {**PAYLOAD, "assunto": "Outro"}, format="json", HTTP_IDEMPOTENCY_KEY="req-1"
    )

    assert response.status_code == 422
    assert response.json() == {
        "success": False,
        "message": "Erro de validação",
        "errors": {"Idempotency-Key": ["Esta chave já foi usada com outra requisição."]},
    }
    assert Ticket.objects.filter(organization=organization).count() == 1


def test_replayed_reply_is_not_written_twice(partner, organization):
    ticket_id = partner.post("/api/v1/tickets", PAYLOAD, format="json").json()["data"]["id"]
    url = f"/api/v1/tickets/{ticket_id}/respostas"

    first = partner.post(url, {"mensagem": "Ainda não chegou"}, format="json", HTTP_IDEMPOTENCY_KEY="r-1")
    retry = partner.post(url, {"mensagem": "Ainda não chegou"}, format="json", HTTP_IDEMPOTENCY_KEY="r-1")

    assert first.status_code == retry.status_code == 201
    assert retry.json()["data"]["id"] == first.json()["data"]["id"]
    assert Reply.objects.filter(ticket_id=ticket_id).count() == 1


def test_error_responses_are_replayed_too(partner, organization):
    first = partner.post("/api/v1/tickets", {"assunto": ""}, format="json", HTTP_IDEMPOTENCY_KEY="bad-1")
    retry = partner.post("/api/v1/tickets", {"assunto": ""}, format="json", HTTP_IDEMPOTENCY_KEY="bad-1")

    assert first.status_code == retry.status_code == 422
    assert retry.json() == first.json()


def test_keys_are_per_credential(partner, other_partner, organization, other_organization):
    partner.post("/api/v1/tickets", PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    response = other_partner.post("/api/v1/tickets", PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="shared")

    assert response.status_code == 201
    assert Ticket.objects.filter(organization=other_organization).count() == 1


def test_key_longer_than_255_characters_is_rejected(partner, organization):
    response = partner.post("/api/v1/tickets", PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="k" * 256)

    assert response.status_code == 422
    assert list(response.json()["errors"]) == ["Idempotency-Key"]
    assert not Ticket.objects.exists()
    assert not IdempotencyRecord.objects.exists()


def test_without_the_header_every_post_creates(partner, organization):
    partner.post("/api/v1/tickets", PAYLOAD, format="json")
    partner.post("/api/v1/tickets", PAYLOAD, format="json")

    assert Ticket.objects.filter(organization=organization).count() == 2
    assert not IdempotencyRecord.objects.exists()


def test_the_same_json_with_other_spacing_or_key_order_is_the_same_request(partner, organization):
    first = partner.post(
        "/api/v1/tickets",
        b'{"assunto":"Pedido","descricao":"Chegou quebrado","solicitante":{"nome":"Maria"}}',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="req-9",
    )
    retry = partner.post(
        "/api/v1/tickets",
        b'{ "solicitante": { "nome": "Maria" },\n  "descricao": "Chegou quebrado", "assunto": "Pedido" }',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="req-9",
    )

    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert Ticket.objects.filter(organization=organization).count() == 1


def test_an_answer_echoing_a_nul_is_answered_and_not_kept(partner, organization):
    """The contract fuzzing found a 500 on PostgreSQL: the 422 naming an unknown `incluir` block echoed the NUL
    the query sent, and jsonb cannot hold one. The refusal is answered; the key stays free, and the retry
    answers the same refusal."""
    path = "/api/v1/tickets?incluir=x%00"
    first = partner.post(path, PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="nul-1")
    retry = partner.post(path, PAYLOAD, format="json", HTTP_IDEMPOTENCY_KEY="nul-1")

    assert first.status_code == retry.status_code == 422
    assert first.json()["errors"]["incluir"][0].startswith("Bloco desconhecido: x\x00.")
    assert retry.json() == first.json() and "Idempotent-Replayed" not in retry
    assert not IdempotencyRecord.objects.filter(key="nul-1").exists()
    assert not Ticket.objects.filter(organization=organization).exists()
