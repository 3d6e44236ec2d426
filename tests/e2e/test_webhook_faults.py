"""Nothing lost, nothing sent twice after success, nothing sent for what rolled back."""

import time

from tests.e2e.stack import wait_for


def _succeeded(stack, webhook_id):
    return [d for d in stack.deliveries(webhook_id) if d["status"] == "sucesso"]


def test_worker_killed_mid_delivery_delivers_after_restart_with_the_same_id(stack, receiver):
    path = receiver.new_path(("sleep", 1.5, 200), 200)
    webhook = stack.create_webhook(receiver.base_url + path)
    ticket = stack.create_ticket()

    stack.agent_reply(ticket["id"], "Durante a queda")
    first = wait_for(lambda: receiver.at(path), message="the first attempt")[0]
    stack.kill("worker")  # SIGKILL to the whole worker process group, mid-request
    stack.start_worker()

    delivery = wait_for(lambda: _succeeded(stack, webhook["id"]), timeout=40, message="delivery after restart")[0]
    arrivals = receiver.at(path)
    assert len(arrivals) >= 2
    assert {r.headers["X-Service-Delivery"] for r in arrivals} == {first.headers["X-Service-Delivery"]}
    assert delivery["id"] == first.headers["X-Service-Delivery"]
    assert {r.body for r in arrivals} == {first.body}


def test_broker_down_while_agent_replies_saves_the_reply_and_delivers_once_it_is_back(stack, receiver):
    path = receiver.new_path(200)
    webhook = stack.create_webhook(receiver.base_url + path)
    ticket = stack.create_ticket()

    stack.broker_down()
    try:
        reply = stack.agent_reply(ticket["id"], "Com o broker fora")
        status, partner_view = stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")
        assert status == 200
        assert [r["id"] for r in partner_view["data"]["respostas"]] == [reply["id"]]
        wait_for(
            lambda: "could not queue webhook delivery" in (stack.logs / "web.log").read_text(errors="replace"),
            message="the failed publish in the web log",
        )
        if stack.uses_redis:
            # The whole broker is down: nothing can arrive until it is back.
            time.sleep(3)
            assert receiver.at(path) == []
    finally:
        stack.broker_up()

    request = wait_for(lambda: receiver.at(path), timeout=40, message="delivery after the broker is back")[0]
    assert request.headers["X-Service-Event"] == "ticket.resposta_publica"
    wait_for(lambda: _succeeded(stack, webhook["id"]), timeout=20, message="success in the log")


def test_agent_reply_rolled_back_sends_nothing(stack, receiver):
    path = receiver.new_path(200)
    webhook = stack.create_webhook(receiver.base_url + path)
    ticket = stack.create_ticket()

    output = stack.manage(
        "shell",
        "-c",
        "from django.db import transaction\n"
        "from helpdesk.models import Agent\n"
        "from tickets.models import Ticket\n"
        "from tickets.services import reply_create_by_agent\n"
        f"ticket = Ticket.objects.get(pk='{ticket['id']}')\n"
        "agent = Agent.objects.get(user__email='admin@e2e.test')\n"
        "try:\n"
        "    with transaction.atomic():\n"
        "        reply_create_by_agent(ticket=ticket, agent=agent, body='Desfeita')\n"
        "        raise RuntimeError('abort')\n"
        "except RuntimeError:\n"
        "    print('rolled back')\n",
    )

    assert "rolled back" in output
    time.sleep(5)  # longer than the requeue delay and several dispatcher runs
    assert receiver.at(path) == []
    assert stack.deliveries(webhook["id"]) == []
    assert stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")[1]["data"]["respostas"] == []
