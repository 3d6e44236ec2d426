"""Management API: POST /api/webhooks/{id}/testar, GET .../entregas, POST .../entregas/{entrega}/reenviar."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.models import (
    DeliveryStatus,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEvent,
)
from integrations.services import webhook_update
from tests.assertions import api_timestamp, assert_error, assert_validation_error, panel_client, queries_of
from tests.factories import make_agent, make_test_delivery, make_webhook

DELIVERY_FIELDS = {
    "id",
    "evento",
    "evento_id",
    "status",
    "tentativas",
    "proxima_tentativa_em",
    "ultima_tentativa_em",
    "criado_em",
    "historico",
}

pytestmark = pytest.mark.usefixtures("example_dns", "generous_rate_limits", "queued")


@pytest.fixture
def webhook(organization) -> Webhook:
    return make_webhook(organization, events=["ticket.resposta_publica", "ticket.resolvido"])


def add_attempts(delivery, outcomes, start) -> None:
    """Log attempts as the engine does: (status_code, error, excerpt) each, the last one deciding the status."""
    for number, (status_code, error, excerpt) in enumerate(outcomes, start=1):
        WebhookDeliveryAttempt.objects.create(
            delivery=delivery,
            number=number,
            attempted_at=start + timedelta(minutes=number),
            status_code=status_code,
            duration_ms=100 * number,
            error=error,
            response_excerpt=excerpt,
            succeeded=status_code is not None and 200 <= status_code < 300,
        )


def url_testar(webhook_id) -> str:
    return f"/api/webhooks/{webhook_id}/testar"


def deliveries_url(webhook_id) -> str:
    return f"/api/webhooks/{webhook_id}/entregas"


def resend_url(webhook_id, delivery_id) -> str:
    return f"/api/webhooks/{webhook_id}/entregas/{delivery_id}/reenviar"


def delivery_state() -> list[tuple]:
    return sorted(
        (str(pk), status, attempts)
        for pk, status, attempts in WebhookDelivery.objects.values_list("pk", "status", "attempt_count")
    )


# --- POST .../testar ---------------------------------------------------------------------------


def test_testar_queues_a_webhook_teste_delivery(
    manager, organization, webhook, queued, django_capture_on_commit_callbacks
):
    make_webhook(organization, name="CRM")

    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(url_testar(webhook.pk))

    assert response.status_code == 200, response.content
    delivery = WebhookDelivery.objects.get()
    event = WebhookEvent.objects.get()
    assert (delivery.webhook_id, delivery.event_id, event.kind) == (webhook.pk, event.pk, "webhook.teste")
    assert response.json() == {
        "success": True,
        "message": "Evento de teste enfileirado.",
        "data": {
            "id": str(delivery.pk),
            "evento": "webhook.teste",
            "evento_id": str(event.pk),
            "status": "pendente",
            "tentativas": 0,
            "proxima_tentativa_em": None,
            "ultima_tentativa_em": None,
            "criado_em": api_timestamp(delivery.created_at),
            "historico": [],
        },
        "errors": [],
    }
    assert queued == [[str(delivery.pk), 0]]


def test_testar_an_inactive_webhook_is_409_and_queues_nothing(
    manager, webhook, queued, django_capture_on_commit_callbacks
):
    webhook_update(webhook=webhook, is_active=False)

    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(url_testar(webhook.pk))

    assert_error(response, 409, "Webhook inativo.", "ativo")
    assert not WebhookEvent.objects.exists()
    assert not WebhookDelivery.objects.exists()
    assert queued == []


# --- GET .../entregas ----------------------------------------------------------------------------


def test_entregas_lists_the_webhooks_deliveries_newest_first_with_their_attempts(manager, organization, webhook):
    start = timezone.now().replace(microsecond=0) - timedelta(hours=1)
    oldest = make_test_delivery(webhook, created_at=start)
    retrying = make_test_delivery(webhook, created_at=start + timedelta(minutes=10))
    newest = make_test_delivery(webhook, created_at=start + timedelta(minutes=20))
    make_test_delivery(make_webhook(organization, name="CRM"))  # another webhook's log
    add_attempts(oldest, [(500, "http_500", "erro"), (None, "timeout", ""), (200, "", "ok")], start)
    WebhookDelivery.objects.filter(pk=oldest.pk).update(
        status=DeliveryStatus.SUCCEEDED,
        attempt_count=3,
        last_attempt_at=start + timedelta(minutes=3),
        next_attempt_at=None,
    )
    add_attempts(retrying, [(503, "http_503", "")], start)
    retry_at = start + timedelta(minutes=2)
    WebhookDelivery.objects.filter(pk=retrying.pk).update(
        attempt_count=1, last_attempt_at=start + timedelta(minutes=1), next_attempt_at=retry_at
    )

    response = manager.get(deliveries_url(webhook.pk))

    assert response.status_code == 200, response.content
    body = response.json()
    assert body == {"success": True, "message": "Entregas listadas.", "data": body["data"], "errors": []}
    page = body["data"]
    assert {key: page[key] for key in page if key != "data"} == {
        "total": 3,
        "por_pagina": 15,
        "pagina_atual": 1,
        "ultima_pagina": 1,
    }
    assert [item["id"] for item in page["data"]] == [str(newest.pk), str(retrying.pk), str(oldest.pk)]
    assert all(set(item) == DELIVERY_FIELDS for item in page["data"])
    assert page["data"][0] == {
        "id": str(newest.pk),
        "evento": "webhook.teste",
        "evento_id": str(newest.event_id),
        "status": "pendente",
        "tentativas": 0,
        "proxima_tentativa_em": None,
        "ultima_tentativa_em": None,
        "criado_em": api_timestamp(start + timedelta(minutes=20)),
        "historico": [],
    }
    assert page["data"][1] == {
        "id": str(retrying.pk),
        "evento": "webhook.teste",
        "evento_id": str(retrying.event_id),
        "status": "pendente",
        "tentativas": 1,
        "proxima_tentativa_em": api_timestamp(retry_at),
        "ultima_tentativa_em": api_timestamp(start + timedelta(minutes=1)),
        "criado_em": api_timestamp(start + timedelta(minutes=10)),
        "historico": [
            {
                "tentativa": 1,
                "enviada_em": api_timestamp(start + timedelta(minutes=1)),
                "status_code": 503,
                "duracao_ms": 100,
                "erro": "http_503",
                "resposta": "",
                "sucesso": False,
            }
        ],
    }
    assert page["data"][2]["status"] == "sucesso"
    assert page["data"][2]["tentativas"] == 3
    assert page["data"][2]["proxima_tentativa_em"] is None
    assert page["data"][2]["historico"] == [
        {
            "tentativa": 1,
            "enviada_em": api_timestamp(start + timedelta(minutes=1)),
            "status_code": 500,
            "duracao_ms": 100,
            "erro": "http_500",
            "resposta": "erro",
            "sucesso": False,
        },
        {
            "tentativa": 2,
            "enviada_em": api_timestamp(start + timedelta(minutes=2)),
            "status_code": None,
            "duracao_ms": 200,
            "erro": "timeout",
            "resposta": "",
            "sucesso": False,
        },
        {
            "tentativa": 3,
            "enviada_em": api_timestamp(start + timedelta(minutes=3)),
            "status_code": 200,
            "duracao_ms": 300,
            "erro": "",
            "resposta": "ok",
            "sucesso": True,
        },
    ]


def test_entregas_is_paginated(manager, webhook):
    start = timezone.now() - timedelta(hours=1)
    deliveries = [make_test_delivery(webhook, created_at=start + timedelta(minutes=n)) for n in range(3)]

    response = manager.get(deliveries_url(webhook.pk), {"por_pagina": 2, "page": 2})

    assert response.status_code == 200
    page = response.json()["data"]
    assert [item["id"] for item in page["data"]] == [str(deliveries[0].pk)]
    assert {key: page[key] for key in page if key != "data"} == {
        "total": 3,
        "por_pagina": 2,
        "pagina_atual": 2,
        "ultima_pagina": 2,
    }


def test_entregas_of_a_webhook_without_deliveries_is_an_empty_page(manager, webhook):
    response = manager.get(deliveries_url(webhook.pk))

    assert response.status_code == 200
    assert response.json() == {
        "success": True,
        "message": "Entregas listadas.",
        "data": {"data": [], "total": 0, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1},
        "errors": [],
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"por_pagina": 0}, "por_pagina"),
        ({"por_pagina": 101}, "por_pagina"),
        ({"page": "abc"}, "page"),
        ({"page": 0}, "page"),
    ],
)
def test_entregas_rejects_bad_page_values_with_422(manager, webhook, params, field):
    make_test_delivery(webhook)

    response = manager.get(deliveries_url(webhook.pk), params)

    assert_validation_error(response, field)


# --- POST .../reenviar -------------------------------------------------------------------------------


def test_reenviar_creates_a_new_delivery_of_the_same_event(
    manager, webhook, queued, django_capture_on_commit_callbacks
):
    original = make_test_delivery(webhook)
    add_attempts(original, [(500, "http_500", "")], timezone.now())
    WebhookDelivery.objects.filter(pk=original.pk).update(status=DeliveryStatus.FAILED, attempt_count=1)
    before = delivery_state()

    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(resend_url(webhook.pk, original.pk))

    assert response.status_code == 200, response.content
    copy = WebhookDelivery.objects.exclude(pk=original.pk).get()
    assert copy.pk != original.pk
    assert (copy.webhook_id, copy.event_id, copy.status, copy.attempt_count) == (
        webhook.pk,
        original.event_id,
        DeliveryStatus.PENDING,
        0,
    )
    assert response.json() == {
        "success": True,
        "message": "Entrega reenviada.",
        "data": {
            "id": str(copy.pk),
            "evento": "webhook.teste",
            "evento_id": str(original.event_id),
            "status": "pendente",
            "tentativas": 0,
            "proxima_tentativa_em": None,
            "ultima_tentativa_em": None,
            "criado_em": api_timestamp(copy.created_at),
            "historico": [],
        },
        "errors": [],
    }
    assert sorted([*before, (str(copy.pk), "pendente", 0)]) == delivery_state()
    assert WebhookEvent.objects.count() == 1
    assert queued == [[str(copy.pk), 0]]


@pytest.mark.parametrize("entrega", [str(uuid.uuid4()), "nao-e-um-uuid"])
def test_reenviar_an_unknown_delivery_is_404(manager, webhook, queued, entrega, django_capture_on_commit_callbacks):
    make_test_delivery(webhook)
    before = delivery_state()

    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(resend_url(webhook.pk, entrega))

    assert_error(response, 404, "Entrega não encontrada.", "entrega")
    assert delivery_state() == before
    assert queued == []


def test_reenviar_to_an_inactive_webhook_is_409(manager, webhook, queued, django_capture_on_commit_callbacks):
    original = make_test_delivery(webhook)
    webhook_update(webhook=webhook, is_active=False)
    before = delivery_state()

    with django_capture_on_commit_callbacks(execute=True):
        response = manager.post(resend_url(webhook.pk, original.pk))

    assert_error(response, 409, "Webhook inativo.", "ativo")
    assert delivery_state() == before
    assert queued == []


# --- Tenancy and access -----------------------------------------------------------------------------


def test_another_organizations_webhook_is_404_on_every_delivery_endpoint(
    manager, webhook, other_webhook, queued, django_capture_on_commit_callbacks
):
    foreign = make_test_delivery(other_webhook)
    mine = make_test_delivery(webhook)
    before = delivery_state()
    events_before = WebhookEvent.objects.count()

    with django_capture_on_commit_callbacks(execute=True):
        responses = [
            manager.post(url_testar(other_webhook.pk)),
            manager.get(deliveries_url(other_webhook.pk)),
            manager.post(resend_url(other_webhook.pk, foreign.pk)),
            manager.post(resend_url(other_webhook.pk, mine.pk)),
        ]

    for response in responses:
        assert_error(response, 404, "Webhook não encontrado.", "id")
        assert str(foreign.pk) not in response.content.decode()
    assert delivery_state() == before
    assert WebhookEvent.objects.count() == events_before
    assert queued == []


def test_an_unknown_webhook_id_is_404_on_every_delivery_endpoint(manager, webhook):
    for webhook_id in (uuid.uuid4(), "nao-e-um-uuid"):
        assert_error(manager.post(url_testar(webhook_id)), 404, "Webhook não encontrado.", "id")
        assert_error(manager.get(deliveries_url(webhook_id)), 404, "Webhook não encontrado.", "id")
        assert_error(manager.post(resend_url(webhook_id, uuid.uuid4())), 404, "Webhook não encontrado.", "id")
    assert not WebhookEvent.objects.exists()


def test_a_delivery_of_another_webhook_under_mine_is_404(
    manager, organization, webhook, other_webhook, queued, django_capture_on_commit_callbacks
):
    sibling_delivery = make_test_delivery(make_webhook(organization, name="CRM"))
    foreign_delivery = make_test_delivery(other_webhook)
    before = delivery_state()

    with django_capture_on_commit_callbacks(execute=True):
        responses = [
            manager.post(resend_url(webhook.pk, sibling_delivery.pk)),
            manager.post(resend_url(webhook.pk, foreign_delivery.pk)),
        ]

    for response in responses:
        assert_error(response, 404, "Entrega não encontrada.", "entrega")
    assert delivery_state() == before
    assert queued == []


def test_a_user_without_permission_gets_403_on_every_delivery_endpoint(
    organization, webhook, queued, django_capture_on_commit_callbacks
):
    delivery = make_test_delivery(webhook)
    before = delivery_state()
    client = panel_client(make_agent(organization).user.email)

    with django_capture_on_commit_callbacks(execute=True):
        responses = [
            client.post(url_testar(webhook.pk)),
            client.get(deliveries_url(webhook.pk)),
            client.post(resend_url(webhook.pk, delivery.pk)),
        ]

    for response in responses:
        assert_error(response, 403, "Acesso negado.", "permissao")
        assert str(delivery.pk) not in response.content.decode()
    assert delivery_state() == before
    assert WebhookEvent.objects.count() == 1
    assert queued == []


def test_without_a_token_every_delivery_endpoint_is_401(webhook, anon_client):
    delivery = make_test_delivery(webhook)
    before = delivery_state()

    responses = [
        anon_client.post(url_testar(webhook.pk)),
        anon_client.get(deliveries_url(webhook.pk)),
        anon_client.post(resend_url(webhook.pk, delivery.pk)),
    ]

    for response in responses:
        assert_error(response, 401, "Não autenticado.", "token")
    assert delivery_state() == before


# --- Query count --------------------------------------------------------------------------------------


def make_logged_deliveries(webhook, count: int) -> None:
    start = timezone.now() - timedelta(hours=2)
    for n in range(count):
        delivery = make_test_delivery(webhook, created_at=start + timedelta(seconds=n))
        add_attempts(delivery, [(500, "http_500", "erro"), (502, "http_502", ""), (200, "", "ok")], start)
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.SUCCEEDED, attempt_count=3)


def queries_of_list(client, webhook) -> tuple[int, dict]:
    sql, data = queries_of(client, deliveries_url(webhook.pk), {"por_pagina": 100})
    return len(sql), data


def test_entregas_runs_the_same_number_of_queries_for_1_and_30_deliveries(manager, organization):
    small = make_webhook(organization, name="Pequeno")
    large = make_webhook(organization, name="Grande")
    make_logged_deliveries(small, 1)
    make_logged_deliveries(large, 30)

    few, small_page = queries_of_list(manager, small)
    many, large_page = queries_of_list(manager, large)

    assert (small_page["total"], len(small_page["data"])) == (1, 1)
    assert (large_page["total"], len(large_page["data"])) == (30, 30)
    assert all(len(item["historico"]) == 3 for item in large_page["data"])
    assert many == few
