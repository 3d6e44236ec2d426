"""An agent's day in the admin, in real headless Chromium (issue 24): the list opens on "Meus tickets", the
queues' bar leads to the unassigned ones, three are selected and changed in bulk, and the ticket page tells who
changed what."""

import re

from tests.e2e.browser import log_in, needs_chromium

pytestmark = needs_chromium


def queue_count(page, slug: str) -> int:
    return int(page.inner_text(f".filas-de-tickets a[data-fila='{slug}'] .contagem-fila"))


def row_of(page, ticket):
    return page.locator("#result_list tbody tr").filter(has=page.locator(f"a[href*='{ticket['id']}']"))


def run_bulk_action(page, action: str) -> None:
    page.select_option("select[name=action]", action)
    page.click("button[name=index]")
    page.wait_for_selector("form.edicao-em-lote")


def test_an_agent_opens_a_queue_selects_three_tickets_and_changes_their_priority(stack, page):
    tickets = [stack.create_ticket() for _ in range(3)]
    untouched = stack.create_ticket()

    log_in(page, stack)
    page.goto(f"{stack.base_url}/admin/tickets/ticket/")
    assert page.url.endswith("?fila=meus")
    assert page.locator(".filas-de-tickets a.fila-atual").get_attribute("data-fila") == "meus"
    unassigned = queue_count(page, "sem_atendente")
    assert unassigned >= 4

    page.click(".filas-de-tickets a[data-fila='sem_atendente']")
    page.wait_for_selector(".filas-de-tickets a.fila-atual[data-fila='sem_atendente']")
    for ticket in tickets:
        row = row_of(page, ticket)
        assert row.locator(".aguarda-equipe").count() == 1  # the customer's opening message waits on us
        assert re.fullmatch(r"há .+", row.locator(".atividade-cliente").inner_text())
        row.locator("input.action-select").check()
    run_bulk_action(page, "bulk_priority")
    assert page.locator("ul.tickets-do-lote li").count() == 3
    page.select_option("#id_priority", label="Alta")
    page.click("input[name=aplicar]")
    page.wait_for_selector(".messagelist")

    assert "3 atualizados, 0 ignorados." in page.inner_text(".messagelist")
    for ticket in tickets:
        assert stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")[1]["data"]["prioridade"] == "alta"
    assert stack.partner("GET", f"/api/v1/tickets/{untouched['id']}")[1]["data"]["prioridade"] != "alta"

    for ticket in tickets:
        row_of(page, ticket).locator("input.action-select").check()
    run_bulk_action(page, "bulk_assignee")
    me = page.locator("#id_assignee option", has_text="Administrador").first.get_attribute("value")  # the admin
    page.select_option("#id_assignee", value=me)
    page.click("input[name=aplicar]")
    page.wait_for_selector(".messagelist")
    assert "3 atualizados, 0 ignorados." in page.inner_text(".messagelist")
    assert queue_count(page, "sem_atendente") == unassigned - 3

    page.click(".filas-de-tickets a[data-fila='meus']")
    page.wait_for_selector(".filas-de-tickets a.fila-atual[data-fila='meus']")
    for ticket in tickets:
        assert row_of(page, ticket).count() == 1
    assert row_of(page, untouched).count() == 0

    row_of(page, tickets[0]).locator(".field-number a").click()
    page.wait_for_selector(".historico-alteracoes")
    history = page.inner_text(".historico-alteracoes")
    assert re.search(r"prioridade \w+ → alta, por .+", history)
    assert re.search(r"atendente ninguém → .+, por .+", history)
