"""Macros in real headless Chromium against the running stack: a lead adds one in the admin, an agent picks it
on a ticket's page, sees the reply filled in and the actions listed, edits the text and saves."""

import uuid

from tests.e2e.browser import log_in, needs_chromium

pytestmark = needs_chromium


def test_an_agent_applies_a_macro_with_an_edited_reply_and_the_ticket_changes(stack, page):
    name = f"Pedir retorno {uuid.uuid4().hex[:6]}"
    ticket = stack.create_ticket()
    log_in(page, stack)

    # The lead adds the macro (admin@e2e.test holds the Suporte group's macro permissions).
    page.goto(f"{stack.base_url}/admin/macros/macro/add/")
    page.fill("#id_name", name)
    page.fill("#id_body", "Olá {{ solicitante.nome }}, o ticket #{{ticket.numero}} aguarda o seu retorno.")
    page.select_option("#id_status", label="Aguardando cliente")
    page.select_option("#id_priority", "alta")
    page.fill("#id_tags_add_text", "Aguardando Retorno")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    assert name in page.content()

    # The agent opens the ticket and picks it: the reply is filled in and the actions are listed.
    page.goto(f"{stack.base_url}/admin/tickets/ticket/{ticket['id']}/change/")
    page.select_option("#id_macro", label=name)
    page.wait_for_selector("#macro-acoes li")
    filled = f"Olá Maria, o ticket #{ticket['numero']} aguarda o seu retorno."
    assert page.input_value("#id_new_reply") == filled
    assert page.is_checked("#id_internal") is False
    assert page.locator("#macro-acoes li").all_inner_texts() == [
        "Status: Aguardando cliente",
        "Prioridade: Alta",
        "Acrescentar tags: aguardando-retorno",
    ]

    page.fill("#id_new_reply", filled + " Qualquer dúvida, estamos aqui.")
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist")

    assert f"{filled} Qualquer dúvida, estamos aqui." in page.content()
    assert page.locator("#id_status option:checked").inner_text() == "Aguardando cliente"
    assert page.input_value("#id_priority") == "alta"
    assert page.input_value("#id_tags_text") == "aguardando-retorno"
    assert page.input_value("#id_new_reply") == ""  # the page comes back with an empty reply box
    status, partner_view = stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")
    assert status == 200
    assert (partner_view["data"]["status"]["nome"], partner_view["data"]["prioridade"]) == (
        "Aguardando cliente",
        "alta",
    )
    assert [reply["mensagem"] for reply in partner_view["data"]["respostas"]] == [
        f"{filled} Qualquer dúvida, estamos aqui."
    ]
