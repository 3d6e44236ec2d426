"""Attempts recorded before issue 19 held exception texts; migration 0012 leaves only their classes."""

import importlib
from datetime import timedelta

from django.apps import apps
from django.utils import timezone

from integrations.models import WebhookDeliveryAttempt
from tests.factories import make_test_delivery, make_webhook

migration = importlib.import_module("integrations.migrations.0012_attempt_error_classes")

RECORDED = [
    (500, "Resposta HTTP 500.", "http_500"),
    (302, "Redirecionamento 302 não é seguido.", "http_302"),
    (None, "Tempo esgotado (10 s).", "timeout"),
    (None, "Endereço de destino não permitido: 10.0.0.5", "endereco_bloqueado"),
    (None, "Erro inesperado: KeyError", "erro_interno"),
    (
        None,
        "Falha de conexão: ConnectionError: HTTPSConnectionPool(host='db.internal', port=443): Max retries exceeded "
        "(Caused by NameResolutionError(\"Failed to resolve 'db.internal' ([Errno -2] Name or service not known)\"))",
        "dns",
    ),
    (None, "Falha de conexão: SSLError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed", "tls"),
    (
        None,
        "Falha de conexão: ConnectionError: HTTPSConnectionPool(host='10.1.2.3', port=5432): Max retries exceeded "
        "(Caused by NewConnectionError('[Errno 111] Connection refused'))",
        "conexao_recusada",
    ),
    (None, "Falha de conexão: ConnectionError: ('Connection aborted.', RemoteDisconnected('closed'))", "conexao"),
    (200, "", ""),
    (None, "timeout", "timeout"),
]


def test_recorded_texts_become_their_classes(organization, example_dns):
    delivery = make_test_delivery(make_webhook(organization))
    start = timezone.now()
    WebhookDeliveryAttempt.objects.bulk_create(
        WebhookDeliveryAttempt(
            delivery=delivery,
            number=number,
            attempted_at=start + timedelta(seconds=number),
            status_code=status_code,
            duration_ms=10,
            error=text,
            succeeded=status_code == 200,
        )
        for number, (status_code, text, _) in enumerate(RECORDED, start=1)
    )

    migration.classify_recorded_errors(apps, None)

    assert list(WebhookDeliveryAttempt.objects.order_by("number").values_list("error", flat=True)) == [
        expected for _, _, expected in RECORDED
    ]
