"""Merging duplicates in the admin (issue 24), in real headless Chromium against the running stack: select two
tickets in the list, "Mesclar em...", pick the target, and see the target's thread with the source's messages
marked, the source closed, and the partner told."""

import json
import uuid

from tests.e2e.browser import log_in, needs_chromium
from tests.e2e.stack import wait_for

pytestmark = needs_chromium


def _partner_ticket(stack, subject: str, description: str) -> dict:
    status, body = stack.partner(
        "POST",
        "/api/v1/tickets",
        {
            "assunto": subject,
            "descricao": description,
            "external_id": f"dup-{uuid.uuid4().hex[:8]}",
            "solicitante": {"nome": "Maria"},
        },
    )
    assert status == 201, body
    return body["data"]


def test_an_agent_merges_two_tickets_and_sees_the_sources_messages_in_the_target(stack, receiver, page):
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path, events=("ticket.mesclado",))
    marker = uuid.uuid4().hex[:6]
    target = _partner_ticket(stack, f"Impressora parada {marker}", "A impressora não liga.")
    source = _partner_ticket(stack, f"Impressora ainda parada {marker}", "Abri outro pedido, a impressora não liga.")
    status, _reply = stack.partner("POST", f"/api/v1/tickets/{source['id']}/respostas", {"mensagem": "Alguém viu?"})
    assert status == 201

    log_in(page, stack)
    page.goto(f"{stack.base_url}/admin/tickets/ticket/?q={marker}")
    page.wait_for_selector("#result_list")
    page.check(f"#result_list input.action-select[value='{target['id']}']")
    page.check(f"#result_list input.action-select[value='{source['id']}']")
    page.select_option("select[name=action]", label="Mesclar em...")
    page.click("button[name=index]")

    page.wait_for_selector("#merge-targets")
    assert page.locator("#merge-targets input[name=target]").count() == 2
    page.check(f"#merge-targets input[value='{target['id']}']")
    page.click("#merge-form input[type=submit]")

    page.wait_for_selector(".messagelist")
    assert f"/admin/tickets/ticket/{target['id']}/change/" in page.url
    assert page.inner_text(".messagelist") == f"Tickets #{source['numero']} mesclados em #{target['numero']}."
    marks = page.locator(".mesclado-de").all_inner_texts()
    assert marks == [f"do #{source['numero']}"] * 2  # the source's description and its reply
    thread = page.content()
    assert "Abri outro pedido, a impressora não liga." in thread
    assert "Alguém viu?" in thread
    assert f"Mesclados neste ticket: #{source['numero']}." in thread

    page.goto(f"{stack.base_url}/admin/tickets/ticket/{source['id']}/change/")
    page.wait_for_selector(".mesclado-em")
    assert page.inner_text(".mesclado-em") == f"#{target['numero']} {target['assunto']}"
    assert page.locator("#id_status option:checked").inner_text() == "Fechado"

    status, merged = stack.partner("GET", f"/api/v1/tickets/{source['id']}?incluir=mesclagem")
    assert status == 200
    assert merged["data"]["status"]["categoria"] == "fechado"
    assert merged["data"]["mesclado_em"] == {"id": target["id"], "numero": target["numero"]}
    delivered = json.loads(wait_for(lambda: receiver.at(path), message="ticket.mesclado")[0].body)
    assert delivered["evento"] == "ticket.mesclado"
    assert delivered["data"]["ticket"]["id"] == source["id"]
    assert delivered["data"]["destino"] == {"id": target["id"], "numero": target["numero"]}
