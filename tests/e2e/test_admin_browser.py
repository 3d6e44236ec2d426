"""The admin in real headless Chromium (Debian's package, driven by Playwright),
against the running stack, so what staff do reaches the partner for real."""

import json
import re

from tests.e2e.browser import log_in, needs_chromium
from tests.e2e.stack import ADMIN_PASSWORD, wait_for

pytestmark = needs_chromium


def open_ticket(page, stack, ticket):
    page.goto(f"{stack.base_url}/admin/tickets/ticket/?fila=todos")
    page.click(f"text={ticket['assunto']}")
    page.wait_for_selector("#id_new_reply")
    assert f"/admin/tickets/ticket/{ticket['id']}/change/" in page.url


def save_and_continue(page):
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist")


def test_staff_reply_in_the_admin_reaches_the_partner_signed(stack, receiver, page):
    path = receiver.new_path(200)
    webhook = stack.create_webhook(receiver.base_url + path)
    ticket = stack.create_ticket()

    log_in(page, stack)
    open_ticket(page, stack, ticket)
    page.fill("#id_new_reply", "Olá Maria, resolvemos pelo painel.")
    save_and_continue(page)

    assert "Olá Maria, resolvemos pelo painel." in page.content()
    request = wait_for(lambda: receiver.at(path), message="the delivery")[0]
    body = json.loads(request.body)
    assert body["evento"] == "ticket.resposta_publica"
    assert body["data"]["resposta"]["mensagem"] == "Olá Maria, resolvemos pelo painel."
    from standardwebhooks import Webhook as StandardWebhook

    standard_headers = {k: v for k, v in request.headers.items() if k.lower().startswith("webhook-")}
    assert StandardWebhook(webhook["segredo"]).verify(request.body, standard_headers) == body


def test_internal_note_in_the_admin_stays_out_of_the_partner_api(stack, receiver, page):
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path)
    ticket = stack.create_ticket()

    log_in(page, stack)
    open_ticket(page, stack, ticket)
    page.fill("#id_new_reply", "Cliente VIP, priorizar.")
    page.check("#id_internal")
    save_and_continue(page)

    assert page.locator(".nota-interna").count() == 1
    status, partner_view = stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")
    assert status == 200
    assert partner_view["data"]["respostas"] == []
    assert "Cliente VIP" not in json.dumps(partner_view)
    assert receiver.at(path) == []


def test_resolving_in_the_admin_sends_ticket_resolvido_and_the_partner_sees_resolvido_em(stack, receiver, page):
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path, events=("ticket.resolvido",))
    ticket = stack.create_ticket()

    log_in(page, stack)
    open_ticket(page, stack, ticket)
    page.select_option("#id_status", label="Resolvido")
    save_and_continue(page)

    request = wait_for(lambda: receiver.at(path), message="ticket.resolvido")[0]
    assert request.headers["X-Service-Event"] == "ticket.resolvido"
    resolved_at = stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")[1]["data"]["resolvido_em"]
    assert resolved_at is not None
    assert json.loads(request.body)["data"]["ticket"]["resolvido_em"] == resolved_at


def test_tags_added_on_the_ticket_page_reach_the_partner_and_filter_the_ticket_list(stack, receiver, page):
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path, events=("ticket.tags_alteradas",))
    tagged, other = stack.create_ticket(), stack.create_ticket()

    log_in(page, stack)
    page.goto(f"{stack.base_url}/admin/tickets/ticket/{tagged['id']}/change/")
    page.fill("#id_tags_text", "Cliente VIP, Loja  Centro")
    save_and_continue(page)

    assert page.input_value("#id_tags_text") == "cliente-vip, loja-centro"
    status, body = stack.partner("GET", f"/api/v1/tickets/{tagged['id']}?incluir=tags")
    assert (status, body["data"]["tags"]) == (200, ["cliente-vip", "loja-centro"])
    delivered = json.loads(wait_for(lambda: receiver.at(path), message="ticket.tags_alteradas")[0].body)
    assert delivered["data"]["alteracoes"]["tags"] == {"adicionadas": ["cliente-vip", "loja-centro"], "removidas": []}

    page.goto(f"{stack.base_url}/admin/tickets/ticket/?fila=todos")
    page.click("#changelist-filter a:has-text('cliente-vip (1)')")
    page.wait_for_selector("#result_list")
    assert "tag=cliente-vip" in page.url
    assert page.locator(f"#result_list a[href*='{tagged['id']}']").count() > 0
    assert page.locator(f"#result_list a[href*='{other['id']}']").count() == 0
    assert page.locator("#result_list .tag-do-ticket").all_inner_texts() == ["cliente-vip", "loja-centro"]


def test_api_key_created_in_the_admin_is_shown_once_and_works(stack, page):
    log_in(page, stack)
    page.goto(f"{stack.base_url}/admin/integrations/apicredential/add/")
    page.fill("#id_name", "Criada no navegador")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")

    key = re.search(r"hdk_live_[0-9A-Za-z]{40}", page.inner_text(".messagelist")).group(0)
    status, _ = stack.request("GET", "/api/v1/tickets", key=key)
    assert status == 200
    page.click("text=Criada no navegador")
    page.wait_for_selector("#content")
    assert key not in page.content()
    page.goto(f"{stack.base_url}/admin/integrations/apicredential/")
    assert key not in page.content()


def test_staff_of_another_organization_cannot_open_the_ticket(stack, page):
    ticket = stack.create_ticket()
    stack.manage(
        "create_organization",
        "--name",
        "Outra",
        "--admin-email",
        "staff@outra.test",
        "--admin-password",
        ADMIN_PASSWORD,
        "--json",
    )

    log_in(page, stack, email="staff@outra.test")
    page.goto(f"{stack.base_url}/admin/tickets/ticket/{ticket['id']}/change/")

    # Django's admin answers a missing object with a redirect to the index and a warning.
    assert page.url == f"{stack.base_url}/admin/"
    assert "não existe" in page.inner_text(".messagelist")
    assert ticket["assunto"] not in page.content()
    assert page.locator("#id_new_reply").count() == 0
    page.goto(f"{stack.base_url}/admin/tickets/ticket/?fila=todos")
    assert page.locator(f"a[href*='{ticket['id']}']").count() == 0


PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def test_staff_attach_files_in_the_admin_and_only_the_public_replys_reach_the_partner(stack, receiver, page, tmp_path):
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path, events=("ticket.anexo_adicionado",))
    ticket = stack.create_ticket()
    invoice = tmp_path / "comprovante março.pdf"
    invoice.write_bytes(PDF)
    log = tmp_path / "log.txt"
    log.write_bytes(b"erro 42 na entrega\n")
    note_file = tmp_path / "interno.txt"
    note_file.write_bytes(b"cliente VIP\n")

    log_in(page, stack)
    open_ticket(page, stack, ticket)
    page.fill("#id_new_reply", "Segue o comprovante e o log.")
    page.set_input_files("#id_attachments", [str(invoice), str(log)])
    save_and_continue(page)
    page.fill("#id_new_reply", "Anexo só para a equipe.")
    page.check("#id_internal")
    page.set_input_files("#id_attachments", [str(note_file)])
    save_and_continue(page)

    links = page.locator("a.anexo")
    assert sorted(links.all_inner_texts()) == ["comprovante março.pdf", "interno.txt", "log.txt"]
    staff_download = page.request.get(stack.base_url + links.filter(has_text="interno.txt").get_attribute("href"))
    assert (staff_download.status, staff_download.body()) == (200, b"cliente VIP\n")
    status, listed = stack.partner("GET", f"/api/v1/tickets/{ticket['id']}/anexos")
    assert status == 200
    files = {item["nome"]: item for item in listed["data"]["data"]}
    assert set(files) == {"comprovante março.pdf", "log.txt"}
    partner_download = page.request.get(files["comprovante março.pdf"]["url"])
    assert (partner_download.status, partner_download.body()) == (200, PDF)
    assert partner_download.headers["content-type"] == "application/pdf"
    deliveries = wait_for(lambda: len(receiver.at(path)) == 2 and receiver.at(path), message="two deliveries")
    names = sorted(json.loads(request.body)["data"]["anexo"]["nome"] for request in deliveries)
    assert names == ["comprovante março.pdf", "log.txt"]
    assert all("interno" not in request.body.decode() for request in receiver.at(path))


def test_staff_change_status_assignee_and_delete_and_partners_hear_of_each(stack, receiver, page):
    path = receiver.new_path(200)
    stack.create_webhook(
        receiver.base_url + path, events=("ticket.status_alterado", "ticket.atribuido", "ticket.excluido")
    )
    ticket = stack.create_ticket()

    log_in(page, stack)
    open_ticket(page, stack, ticket)
    page.select_option("#id_status", label="Em andamento")
    assignee = page.locator("#id_assignee option").nth(1)
    agent_name, agent_id = assignee.inner_text(), assignee.get_attribute("value")
    page.select_option("#id_assignee", value=agent_id)
    save_and_continue(page)

    changes = wait_for(lambda: len(receiver.at(path)) == 2 and receiver.at(path), message="two deliveries")
    bodies = sorted((json.loads(request.body) for request in changes), key=lambda body: body["evento"])
    assert [body["evento"] for body in bodies] == ["ticket.atribuido", "ticket.status_alterado"]
    assert bodies[0]["data"]["alteracoes"]["atendente"] == {
        "anterior": None,
        "atual": {"id": agent_id, "nome": agent_name},
    }
    assert bodies[1]["data"]["alteracoes"]["status"]["atual"]["nome"] == "Em andamento"
    assert {body["data"]["ator"]["tipo"] for body in bodies} == {"agente"}
    status, before = stack.partner("GET", "/api/v1/tickets/alteracoes")
    assert status == 200

    page.click("a.deletelink")
    page.click("input[type=submit]")  # Django's confirmation page: "Sim, tenho certeza"
    page.wait_for_selector(".messagelist")

    deleted = wait_for(lambda: len(receiver.at(path)) == 3 and receiver.at(path)[2], message="ticket.excluido")
    body = json.loads(deleted.body)
    assert body["evento"] == "ticket.excluido"
    assert body["data"]["ticket"] == {"id": ticket["id"], "numero": ticket["numero"], "external_id": None}
    assert body["data"]["ator"]["tipo"] == "agente"
    assert stack.partner("GET", f"/api/v1/tickets/{ticket['id']}")[0] == 404
    status, after = stack.partner("GET", f"/api/v1/tickets/alteracoes?desde={before['data']['proximo_cursor']}")
    assert [item["id"] for item in after["data"]["excluidos"]] == [ticket["id"]]


def test_staff_open_a_ticket_in_the_admin_and_partners_hear_of_it(stack, receiver, page):
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path, events=("ticket.criado",))

    log_in(page, stack)
    page.goto(f"{stack.base_url}/admin/tickets/ticket/add/")
    page.fill("#id_subject", "Cliente ligou pedindo troca")
    page.fill("#id_description", "Produto com defeito.")
    page.select_option("#id_priority", value="alta")
    page.fill("#id_requester_name", "Joana Telefone")
    page.fill("#id_requester_email", "joana@example.com")
    page.click("input[name=_save]")
    page.wait_for_selector("#id_new_reply")  # the new ticket's own page, ready to answer

    request = wait_for(lambda: receiver.at(path), message="ticket.criado")[0]
    body = json.loads(request.body)
    assert body["evento"] == "ticket.criado"
    assert f"/admin/tickets/ticket/{body['data']['ticket']['id']}/change/" in page.url
    shown = stack.partner("GET", f"/api/v1/tickets/{body['data']['ticket']['id']}")[1]["data"]
    assert (shown["assunto"], shown["canal_origem"], shown["prioridade"]) == (
        "Cliente ligou pedindo troca",
        "painel",
        "alta",
    )
    assert shown["solicitante"]["email"] == "joana@example.com"


def test_staff_define_a_custom_field_set_it_and_filter_the_ticket_list_by_it(stack, receiver, page):
    """Issue 22: a field defined in the admin, set on a ticket's page (an agent's change: an event), and the
    ticket list filtered by its value; the partner sees the same value and finds the ticket by it."""
    path = receiver.new_path(200)
    stack.create_webhook(receiver.base_url + path, events=("ticket.campos_alterados",))
    chosen, other = stack.create_ticket(), stack.create_ticket()

    log_in(page, stack)
    page.goto(f"{stack.base_url}/admin/tickets/customfield/add/")
    page.fill("#id_key", "filial")
    page.fill("#id_name", "Filial")
    page.select_option("#id_type", value="lista")
    page.fill("#id_options_text", "centro\nnorte")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")

    page.goto(f"{stack.base_url}/admin/tickets/ticket/{chosen['id']}/change/")
    page.select_option("#id_campo_filial", value="norte")
    save_and_continue(page)
    assert page.locator("#id_campo_filial").input_value() == "norte"

    page.goto(f"{stack.base_url}/admin/tickets/ticket/?fila=todos")
    page.click("text=Filial: norte")
    page.wait_for_url(re.compile(r"campo\.filial=norte"))
    listed = page.locator("#result_list tbody tr").all_inner_texts()
    assert len(listed) == 1 and f"{chosen['numero']}" in listed[0], listed
    assert other["id"] != chosen["id"]

    request = wait_for(lambda: receiver.at(path), message="ticket.campos_alterados")[0]
    body = json.loads(request.body)
    assert body["data"]["alteracoes"] == {"campos": {"filial": {"anterior": None, "atual": "norte"}}}
    found = stack.partner("GET", "/api/v1/tickets?campo.filial=norte&incluir=campos")[1]["data"]
    assert [(ticket["id"], ticket["campos"]) for ticket in found["data"]] == [(chosen["id"], {"filial": "norte"})]


def test_staff_set_the_business_hours_and_the_panel_api_reads_them(stack, page):
    """Issue 23: the calendar typed a line each; a rule's error names its line and saves nothing, the fixed page
    saves through the service, and the panel's API answers the same calendar."""
    log_in(page, stack)
    page.goto(f"{stack.base_url}/admin/")
    page.click("text=Horários de atendimento")
    page.goto(f"{stack.base_url}/admin/sla/businesshours/add/")
    page.fill("#id_time_zone", "Europe/Lisbon")
    page.fill("#id_intervals_text", "seg 08:00-12:00\nseg 11:00-18:00\nsex 22:00-24:00\nsab 00:00-06:00")
    page.fill("#id_holidays_text", "2026-12-25 Natal")
    page.click("input[name=_save]")
    page.wait_for_selector(".errorlist")
    assert "Linha 2: Sobrepõe a linha 1 (segunda-feira 08:00–12:00)." in page.locator(".errorlist").all_inner_texts()
    assert stack.panel("GET", "/api/horario-atendimento")[1]["data"]["fuso_horario"] == "America/Sao_Paulo"

    page.fill("#id_intervals_text", "seg 08:00-12:00\nseg 13:00-18:00\nsex 22:00-24:00\nsab 00:00-06:00")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")

    status, body = stack.panel("GET", "/api/horario-atendimento")
    assert (status, body["data"]) == (
        200,
        {
            "fuso_horario": "Europe/Lisbon",
            "intervalos": [
                {"dia_semana": 0, "inicio": "08:00", "fim": "12:00"},
                {"dia_semana": 0, "inicio": "13:00", "fim": "18:00"},
                {"dia_semana": 4, "inicio": "22:00", "fim": "24:00"},
                {"dia_semana": 5, "inicio": "00:00", "fim": "06:00"},
            ],
            "feriados": [{"data": "2026-12-25", "nome": "Natal"}],
        },
    )
