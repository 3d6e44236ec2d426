"""SLA end to end: web, a Celery worker and two beats as real processes, a real broker and a receiving server. A
ticket's one-minute first response reaches 80% and its deadline; each moment reaches the partner's webhook once,
with two beats scheduling the announcements and the first one restarted afterwards. Then the admin in Chromium:
the calendar and a policy set in their pages, and a breached ticket first in the queue.

Its own service (organization, database, data directory): the one-minute policy must not reach the tickets of
the other end-to-end tests."""

import json
import re
import signal
import time
from datetime import datetime

import pytest

from tests.e2e.browser import log_in, needs_chromium
from tests.e2e.stack import Stack, wait_for

SLA_EVENTS = ["ticket.sla_em_risco", "ticket.sla_violado"]


@pytest.fixture(scope="module")
def sla_stack(tmp_path_factory):
    running = Stack(tmp_path_factory.mktemp("e2e-sla")).start()
    yield running
    running.stop()


def test_each_moment_reaches_the_webhook_once_with_two_beats_and_a_restart(sla_stack, receiver):
    stack = sla_stack
    policies = {"politicas": [{"prioridade": "media", "primeira_resposta": 1}]}
    status, body = stack.panel("PUT", "/api/sla", policies)
    assert status == 200, body
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path, events=SLA_EVENTS)
    stack.start_beat("beat-2")
    try:
        status, body = stack.partner(
            "POST",
            "/api/v1/tickets?incluir=sla",
            {"assunto": "Prazo", "descricao": "Curto", "solicitante": {"nome": "Ana"}},
        )
        assert status == 201, body
        ticket = body["data"]
        [first_response] = ticket["sla"]["metas"]

        # Due in one minute; announced within the beat's 20 s (and the delivery's moment) after it.
        wait_for(lambda: len(receiver.at(path)) >= 2 and receiver.at(path), timeout=120, message="2 events")
        stack.kill("beat", signal.SIGTERM)
        stack.start_beat()
        time.sleep(45)  # two more rounds of both beats

        bodies = [json.loads(request.body) for request in receiver.at(path)]
        assert sorted(body["evento"] for body in bodies) == SLA_EVENTS, [b["evento"] for b in bodies]
        for body in bodies:
            assert body["data"]["ticket"]["id"] == ticket["id"]
            assert body["data"]["meta"]["tipo"] == "primeira_resposta"
            assert body["data"]["meta"]["vence_em"] == first_response["vence_em"]
        breach = next(body for body in bodies if body["evento"] == "ticket.sla_violado")
        assert breach["data"]["meta"]["violada"] is True and breach["data"]["sla"]["metas"][0]["violada"] is True
        due = datetime.fromisoformat(first_response["vence_em"]).timestamp()
        breach_arrived = next(r.at for r in receiver.at(path) if json.loads(r.body)["evento"] == "ticket.sla_violado")
        assert 0 <= breach_arrived - due < 60  # within a minute of the deadline
        status, feed = stack.partner("GET", "/api/v1/eventos")
        assert status == 200, feed
        assert sorted(item["evento"] for item in feed["data"]["itens"] if item["evento"] in SLA_EVENTS) == SLA_EVENTS
    finally:
        stack.kill("beat-2", signal.SIGTERM)


@needs_chromium
def test_staff_configure_hours_and_a_policy_and_see_the_breached_ticket_first_in_the_queue(sla_stack, page):
    """Issue 23 in Chromium: the calendar and the policies typed in their admin pages; a ticket past its deadline
    comes first when the queue is sorted by the next deadline, its page shows the target breached, and the "SLA
    violado" filter keeps it and leaves the one in time out."""
    stack = sla_stack
    late = stack.create_ticket()
    log_in(page, stack)
    _open_add_or_change(page, stack, "businesshours")
    page.fill("#id_time_zone", "UTC")
    page.fill("#id_intervals_text", "\n".join(f"{day} 00:00-24:00" for day in DAYS))
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    _open_add_or_change(page, stack, "slapolicies")
    page.fill("#id_media_first_response", "1")
    page.fill("#id_media_resolution", "600")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    status, body = stack.panel("GET", "/api/sla")
    assert body["data"]["politicas"] == [
        {"prioridade": "media", "primeira_resposta": 1, "proxima_resposta": None, "resolucao": 600}
    ]
    # The beat re-targets the ticket opened before (within 30 s); a minute after its creation it is breached.
    wait_for(lambda: _sla_of(stack, late["id"])["metas"][0]["violada"], timeout=120, message="the breach")
    in_time = stack.create_ticket()

    page.goto(f"{stack.base_url}/admin/tickets/ticket/?fila=todos")
    page.click("th.column-sla_deadline a")  # sorted by the next deadline
    page.wait_for_selector("th.sorted.column-sla_deadline")
    first_row = page.locator("#result_list tbody tr").first
    assert first_row.locator(".prazo-sla").get_attribute("class") == "prazo-sla sla-violado"
    number = page.locator(".field-number a", has_text=re.compile(rf"^{in_time['numero']}$"))
    in_time_row = page.locator("#result_list tbody tr").filter(has=number)
    assert in_time_row.locator(".prazo-sla").get_attribute("class") in (
        "prazo-sla sla-no_prazo",
        "prazo-sla sla-em_risco",
    )

    page.goto(f"{stack.base_url}/admin/tickets/ticket/?sla=violado")
    numbers = page.locator("#result_list tbody td.field-number, #result_list tbody th.field-number").all_inner_texts()
    assert str(late["numero"]) in numbers and str(in_time["numero"]) not in numbers

    page.goto(f"{stack.base_url}/admin/tickets/ticket/{late['id']}/change/")
    targets = page.locator("ul.metas-sla li").all_inner_texts()
    assert targets[0].startswith("Primeira resposta: vence ") and targets[0].endswith("violada")
    assert targets[1].startswith("Resolução: vence ") and targets[1].endswith("no prazo")


DAYS = ("seg", "ter", "qua", "qui", "sex", "sab", "dom")


def _open_add_or_change(page, stack, model: str) -> None:
    """The organization's one row of `model` (sla), or its add page when it has none yet."""
    page.goto(f"{stack.base_url}/admin/sla/{model}/")
    rows = page.locator("#result_list tbody a")
    if rows.count():
        rows.first.click()
    else:
        page.goto(f"{stack.base_url}/admin/sla/{model}/add/")
    page.wait_for_selector("input[name=_save]")


def _sla_of(stack, ticket_id: str) -> dict:
    status, body = stack.partner("GET", f"/api/v1/tickets/{ticket_id}?incluir=sla")
    assert status == 200, body
    return body["data"]["sla"] or {"metas": [{"violada": False}]}
