"""`segredo` and `chave` are shown once in a response and never written to the logs."""

import logging

from integrations import webhook_urls


def test_webhook_secrets_never_reach_the_logs(manager, monkeypatch, caplog):
    monkeypatch.setattr(webhook_urls, "resolve_host", lambda host, port: ["93.184.216.34"])
    caplog.set_level(logging.DEBUG)

    created = manager.post(
        "/api/webhooks",
        {"nome": "ERP", "url": "https://erp.example.com/hook", "eventos": ["ticket.resolvido"]},
        format="json",
    ).json()["data"]
    regenerated = manager.patch(f"/api/webhooks/{created['id']}", {"regenerar_segredo": True}, format="json").json()[
        "data"
    ]
    manager.patch(f"/api/webhooks/{created['id']}", {"eventos": ["x"]}, format="json")
    key = manager.post("/api/api-keys", {"nome": "ERP"}, format="json").json()["data"]["chave"]

    assert created["segredo"].startswith("whsec_")
    assert regenerated["segredo"].startswith("whsec_")
    logging.getLogger("integrations").debug("capture works")
    assert "capture works" in caplog.text
    for secret in (created["segredo"], regenerated["segredo"], key):
        assert secret not in caplog.text
