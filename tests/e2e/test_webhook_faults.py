"""Nothing lost, nothing sent twice after success, nothing sent for what rolled back."""

import time

from tests.e2e.stack import wait_for
from tools.ports import free_port

# What an operator may expect after a worker dies or the broker comes back, with the default settings.
RECOVERY_SECONDS = 15


def _succeeded(stack, webhook_id):
    return [d for d in stack.deliveries(webhook_id) if d["status"] == "sucesso"]


def test_worker_killed_mid_delivery_delivers_again_within_seconds_with_the_same_id(stack, receiver):
    """The killed worker's lease is no longer renewed: it runs out (WEBHOOK_LEASE, 6 s), the dispatcher
    (every 2 s) queues the delivery again, and it arrives a second time, once, with the same id."""
    path = receiver.new_path(("sleep", 1.5, 200), 200)
    webhook = stack.create_webhook(receiver.base_url + path)
    ticket = stack.create_ticket()

    stack.agent_reply(ticket["id"], "Durante a queda")
    first = wait_for(lambda: receiver.at(path), message="the first attempt")[0]
    stack.kill("worker")  # SIGKILL to the whole worker process group, mid-request
    killed_at = time.time()
    stack.start_worker()

    second = wait_for(lambda: receiver.at(path)[1:], timeout=40, message="the attempt after the kill")[0]
    assert second.at - killed_at < RECOVERY_SECONDS
    delivery = wait_for(lambda: _succeeded(stack, webhook["id"]), timeout=20, message="success in the log")[0]
    time.sleep(4)  # longer than a lease and two dispatcher runs: nothing more may come
    arrivals = receiver.at(path)
    assert len(arrivals) == 2
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
            lambda: "could not queue" in (stack.logs / "web.log").read_text(errors="replace"),
            message="the failed publish in the web log",
        )
        if stack.uses_redis:
            # The whole broker is down: nothing can arrive until it is back.
            time.sleep(3)
            assert receiver.at(path) == []
    finally:
        stack.broker_up()
    back_at = time.time()

    request = wait_for(lambda: receiver.at(path), timeout=40, message="delivery after the broker is back")[0]
    assert request.at - back_at < RECOVERY_SECONDS
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
    time.sleep(5)  # several dispatcher runs
    assert receiver.at(path) == []
    assert stack.deliveries(webhook["id"]) == []
    assert stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")[1]["data"]["respostas"] == []


BACKLOG = 400


def test_a_backlog_written_while_the_broker_was_down_drains_at_once_and_each_delivery_arrives_once(stack, receiver):
    """Events written during an outage are due at once; the dispatcher queues them all in its first run
    after the broker is back (not 200 per run), so the workers' speed is the only limit."""
    path = receiver.new_path(*[200] * BACKLOG)
    webhook = stack.create_webhook(receiver.base_url + path, events=("ticket.resposta_publica",))
    script = (
        "from integrations.models import Webhook\n"
        "from integrations.events import webhook_test_send\n"
        f"webhook = Webhook.objects.get(pk='{webhook['id']}')\n"
        f"for _ in range({BACKLOG}):\n"
        "    webhook_test_send(webhook=webhook)\n"
    )
    if stack.uses_redis:
        stack.stop_redis()
        try:
            stack.manage("shell", "-c", script)
        finally:
            stack.start_redis()
    else:  # the embedded broker cannot be stopped alone: these writers see a broker that is down
        stack.manage("shell", "-c", script, CELERY_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0")
    back_at = time.time()

    wait_for(lambda: len(receiver.at(path)) >= BACKLOG, timeout=90, interval=0.5, message="the whole backlog")
    drained_in = time.time() - back_at
    first = min(request.at for request in receiver.at(path)) - back_at

    assert first < RECOVERY_SECONDS
    time.sleep(3)
    ids = [request.headers["X-Service-Delivery"] for request in receiver.at(path)]
    assert len(ids) == len(set(ids)) == BACKLOG  # each once, none lost
    print(f"backlog of {BACKLOG}: first after {first:.1f} s, all after {drained_in:.1f} s")
