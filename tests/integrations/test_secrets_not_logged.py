"""`segredo` and `chave` are shown once in a response and never written to the logs."""

import logging

import pytest
from rest_framework.test import APIClient

from integrations import webhook_urls
from tests.factories import PASSWORD


@pytest.fixture
def admin_client(organization):
    admin = organization.users.get(is_staff=True)
    client = APIClient()
    token = client.post("/api/auth/login", {"email": admin.email, "senha": PASSWORD}, format="json")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.json()['data']['access_token']}")
    return client


def test_webhook_secrets_never_reach_the_logs(admin_client, monkeypatch, caplog):
    monkeypatch.setattr(webhook_urls, "resolve_host", lambda host, port: ["93.184.216.34"])
    caplog.set_level(logging.DEBUG)

    created = admin_client.post(
        "/api/webhooks",
        {"nome": "ERP", "url": "https://erp.example.com/hook", "eventos": ["ticket.resolvido"]},
        format="json",
    ).json()["data"]
    regenerated = admin_client.patch(
        f"/api/webhooks/{created['id']}", {"regenerar_segredo": True}, format="json"
    ).json()["data"]
    admin_client.patch(f"/api/webhooks/{created['id']}", {"eventos": ["x"]}, format="json")
    key = admin_client.post("/api/api-keys", {"nome": "ERP"}, format="json").json()["data"]["chave"]

    assert created["segredo"].startswith("whsec_")
    assert regenerated["segredo"].startswith("whsec_")
    logging.getLogger("integrations").debug("capture works")
    assert "capture works" in caplog.text
    for secret in (created["segredo"], regenerated["segredo"], key):
        assert secret not in caplog.text
