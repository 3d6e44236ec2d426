"""Webhook delivery end to end: web, Celery worker and beat as real processes,
a real broker, and a real HTTP receiver on 127.0.0.1."""

import json
import re
import time
from pathlib import Path

from standardwebhooks import Webhook as StandardWebhook

from tests.e2e.stack import wait_for

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def _documented_verifier():
    """The Python verification function exactly as docs/webhooks.md prints it."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    source = next(block for block in blocks if "def verify_signature" in block)
    namespace: dict = {}
    exec(compile(source, str(DOCS), "exec"), namespace)  # the code of our own documentation
    return namespace["verify_signature"]


def _hook(stack, receiver, *script, events=None):
    path = receiver.new_path(*script)
    kwargs = {"events": events} if events else {}
    return path, stack.create_webhook(receiver.base_url + path, **kwargs)


def test_agent_reply_arrives_signed_and_verifiable_by_the_documented_function(stack, receiver):
    path, webhook = _hook(stack, receiver)
    ticket = stack.create_ticket()

    stack.agent_reply(ticket["id"], "Nota: cliente VIP", internal=True)
    reply = stack.agent_reply(ticket["id"], "Olá Maria, o pedido sai hoje.")

    request = wait_for(lambda: receiver.at(path), message="the delivery")[0]
    body = json.loads(request.body)
    assert request.headers["X-Service-Event"] == "ticket.resposta_publica"
    assert body["evento"] == "ticket.resposta_publica"
    assert body["data"]["resposta"]["id"] == reply["id"]
    assert body["data"]["resposta"]["mensagem"] == "Olá Maria, o pedido sai hoje."
    assert body["data"]["ticket"]["id"] == ticket["id"]
    assert "respostas" not in body["data"]["ticket"]
    assert b"cliente VIP" not in request.body
    verify = _documented_verifier()
    assert verify(webhook["segredo"], request.body, request.headers["X-Service-Signature"]) is True
    assert verify("whsec_" + "A" * 44, request.body, request.headers["X-Service-Signature"]) is False
    assert verify(webhook["segredo"], request.body + b" ", request.headers["X-Service-Signature"]) is False
    stale = int(request.headers["X-Service-Signature"].split(",")[0][2:]) + 301
    assert verify(webhook["segredo"], request.body, request.headers["X-Service-Signature"], now=stale) is False
    standard_headers = {k: v for k, v in request.headers.items() if k.lower().startswith("webhook-")}
    assert StandardWebhook(webhook["segredo"]).verify(request.body, standard_headers) == body
    assert request.headers["webhook-id"] == request.headers["X-Service-Delivery"]
    time.sleep(1)
    assert len(receiver.at(path)) == 1  # the internal note sent nothing


def test_receiver_failing_twice_gets_the_same_delivery_three_times_and_the_log_shows_it(stack, receiver):
    path, webhook = _hook(stack, receiver, 500, 500, 200)
    ticket = stack.create_ticket()

    stack.agent_reply(ticket["id"], "Tentativas")

    requests = wait_for(lambda: len(receiver.at(path)) >= 3 and receiver.at(path), timeout=30, message="3 attempts")
    assert len({r.headers["X-Service-Delivery"] for r in requests}) == 1
    assert len({r.body for r in requests}) == 1
    delivery = wait_for(
        lambda: [d for d in stack.deliveries(webhook["id"]) if d["status"] == "sucesso"], message="success in the log"
    )[0]
    assert delivery["id"] == requests[0].headers["X-Service-Delivery"]
    assert delivery["tentativas"] == 3
    assert [a["status_code"] for a in delivery["historico"]] == [500, 500, 200]
    assert [a["sucesso"] for a in delivery["historico"]] == [False, False, True]
    assert delivery["historico"][2]["resposta"] == '{"ok": true}'


def test_receiver_slower_than_the_timeout_counts_as_a_failure(stack, receiver):
    path, webhook = _hook(stack, receiver, ("sleep", 4, 200), 200)
    ticket = stack.create_ticket()

    stack.agent_reply(ticket["id"], "Lento")

    delivery = wait_for(
        lambda: [d for d in stack.deliveries(webhook["id"]) if d["status"] == "sucesso"], timeout=30, message="retry"
    )[0]
    first, second = delivery["historico"]
    assert first["status_code"] is None
    assert first["erro"] == "timeout"
    assert first["sucesso"] is False
    assert second["status_code"] == 200


def test_a_redirect_is_not_followed(stack, receiver):
    target = receiver.new_path(200)
    path, webhook = _hook(stack, receiver, ("redirect", 302, receiver.base_url + target))
    ticket = stack.create_ticket()

    stack.agent_reply(ticket["id"], "Redirecionado")

    delivery = wait_for(
        lambda: [d for d in stack.deliveries(webhook["id"]) if d["tentativas"] >= 2], timeout=30, message="2 attempts"
    )[0]
    assert [a["status_code"] for a in delivery["historico"][:2]] == [302, 302]
    assert delivery["historico"][0]["erro"] == "http_302"
    assert receiver.at(target) == []


def test_410_gone_deactivates_the_webhook(stack, receiver):
    path, webhook = _hook(stack, receiver, 410)
    ticket = stack.create_ticket()

    stack.agent_reply(ticket["id"], "Ainda existe?")

    wait_for(lambda: stack.panel("GET", f"/api/webhooks/{webhook['id']}")[1]["data"]["ativo"] is False, timeout=20)
    delivery = stack.deliveries(webhook["id"])[0]
    assert delivery["status"] == "falhou"
    assert [a["status_code"] for a in delivery["historico"]] == [410]
    stack.agent_reply(ticket["id"], "Mais uma")
    time.sleep(3)
    assert len(receiver.at(path)) == 1


def test_testar_sends_a_test_event(stack, receiver):
    path, webhook = _hook(stack, receiver)

    status, body = stack.panel("POST", f"/api/webhooks/{webhook['id']}/testar")

    assert status == 200
    assert body["message"] == "Evento de teste enfileirado."
    request = wait_for(lambda: receiver.at(path), message="the test event")[0]
    assert request.headers["X-Service-Event"] == "webhook.teste"
    assert request.headers["X-Service-Delivery"] == body["data"]["id"]
    assert json.loads(request.body)["data"]["webhook"]["id"] == webhook["id"]


def test_after_regenerating_the_secret_the_new_secret_signs(stack, receiver):
    path, webhook = _hook(stack, receiver)
    status, body = stack.panel("PATCH", f"/api/webhooks/{webhook['id']}", {"regenerar_segredo": True})
    assert status == 200
    new_secret = body["data"]["segredo"]
    assert new_secret != webhook["segredo"]

    stack.panel("POST", f"/api/webhooks/{webhook['id']}/testar")

    request = wait_for(lambda: receiver.at(path), message="the test event")[0]
    verify = _documented_verifier()
    assert verify(new_secret, request.body, request.headers["X-Service-Signature"]) is True
    # During the 24-hour grace period the old secret still verifies too.
    assert verify(webhook["segredo"], request.body, request.headers["X-Service-Signature"]) is True
    standard_headers = {k: v for k, v in request.headers.items() if k.lower().startswith("webhook-")}
    assert StandardWebhook(new_secret).verify(request.body, standard_headers)["evento"] == "webhook.teste"


def test_resolution_and_edit_arrive_and_partner_actions_do_not_echo(stack, receiver):
    path, webhook = _hook(stack, receiver)
    ticket = stack.create_ticket()
    statuses = stack.panel("GET", "/api/ticket-status")[1]["data"]
    resolved = next(s for s in statuses if s["categoria"] == "resolvido")

    status, customer_reply = stack.partner("POST", f"/api/v1/tickets/{ticket['id']}/respostas", {"mensagem": "Oi"})
    assert status == 201
    stack.partner(
        "PATCH", f"/api/v1/tickets/{ticket['id']}/respostas/{customer_reply['data']['id']}", {"mensagem": "Oi!"}
    )
    reply = stack.agent_reply(ticket["id"], "Primeira versão")
    stack.panel("PATCH", f"/api/tickets/{ticket['id']}/respostas/{reply['id']}", {"mensagem": "Segunda versão"})
    stack.panel("PATCH", f"/api/tickets/{ticket['id']}", {"status_id": resolved["id"]})

    requests = wait_for(lambda: len(receiver.at(path)) >= 3 and receiver.at(path), timeout=20, message="3 events")
    time.sleep(1.5)
    kinds = sorted(r.headers["X-Service-Event"] for r in receiver.at(path))
    assert kinds == ["ticket.resolvido", "ticket.resposta_editada", "ticket.resposta_publica"]
    edited = json.loads(next(r.body for r in requests if r.headers["X-Service-Event"] == "ticket.resposta_editada"))
    assert edited["data"]["mensagem_anterior"] == "Primeira versão"
    assert edited["data"]["resposta"]["mensagem"] == "Segunda versão"
    resolved_event = json.loads(next(r.body for r in requests if r.headers["X-Service-Event"] == "ticket.resolvido"))
    assert resolved_event["data"]["ticket"]["resolvido_em"] is not None
