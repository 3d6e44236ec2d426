"""The admin's queues and bulk actions as agents use them (issue 24): the list opens on "Meus tickets", each
queue counts what the agent may see, and the bulk actions run tickets.bulk with a report of what was left."""

import re

import pytest

from helpdesk.models import User
from integrations.models import WebhookEvent
from tests.contract import TICKET_CHANGELIST
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket, status_of
from tickets.models import Ticket
from tickets.services import ticket_update

pytestmark = pytest.mark.usefixtures("insecure_webhook_urls")


def queue_counts(response) -> dict[str, int]:
    return {queue["slug"]: queue["count"] for queue in response.context["queues"]}


def listed(response) -> set:
    return {ticket.pk for ticket in response.context["cl"].result_list}


def test_an_agents_list_opens_on_my_tickets_and_keeps_any_address_with_parameters(staff):
    assert staff.get(TICKET_CHANGELIST)["Location"] == f"{TICKET_CHANGELIST}?fila=meus"
    assert staff.get(TICKET_CHANGELIST, {"q": "x"}).status_code == 200
    assert staff.get(TICKET_CHANGELIST, {"fila": "nada"})["Location"].endswith("?e=1")


def test_each_queue_lists_and_counts_its_tickets_and_only_the_organizations(
    staff, admin, organization, other_organization
):
    colleague = make_agent(organization)
    mine = ticket_update(ticket=make_ticket(organization), assignee=admin.agent)
    mine_resolved = ticket_update(
        ticket=make_ticket(organization), assignee=admin.agent, status=status_of(organization, "resolvido")
    )
    theirs = ticket_update(ticket=make_ticket(organization), assignee=colleague)
    nobodys = make_ticket(organization)
    waiting = ticket_update(ticket=make_ticket(organization), status=status_of(organization, "aguardando"))
    closed = ticket_update(ticket=make_ticket(organization), status=status_of(organization, "fechado"))
    for _ in range(3):
        ticket_update(ticket=make_ticket(other_organization), status=status_of(other_organization, "aguardando"))

    expected = {
        "meus": {mine.pk},
        "sem_atendente": {nobodys.pk, waiting.pk},
        "aguardando": {waiting.pk},
        "abertos": {mine.pk, theirs.pk, nobodys.pk, waiting.pk},
        "sla_em_risco": set(),
        "sla_violado": set(),
        "todos": {mine.pk, mine_resolved.pk, theirs.pk, nobodys.pk, waiting.pk, closed.pk},
    }
    for slug, tickets in expected.items():
        response = staff.get(TICKET_CHANGELIST, {"fila": slug})
        assert listed(response) == tickets, slug
        assert queue_counts(response) == {name: len(ids) for name, ids in expected.items()}
    assert "Meus tickets" in staff.get(TICKET_CHANGELIST, {"fila": "todos"}).content.decode()


def test_a_superuser_who_is_no_agent_has_no_my_tickets_and_is_not_redirected(client, organization):
    root = User.objects.create_superuser(email="root@example.test", password="x-Senha-Forte-42")
    make_ticket(organization)
    client.force_login(root)

    response = client.get(TICKET_CHANGELIST)

    assert response.status_code == 200
    assert "meus" not in queue_counts(response)
    assert queue_counts(response)["todos"] == 1


def test_the_list_marks_the_tickets_whose_last_public_message_is_the_customers(staff, admin, organization):
    answered = make_ticket(organization, subject="Respondido")
    make_agent_reply(answered, admin.agent, body="Já vimos.")
    noted = make_ticket(organization, subject="Só nota")
    make_agent_reply(noted, admin.agent, body="Nota", internal=True)
    came_back = make_ticket(organization, subject="Voltou")
    make_agent_reply(came_back, admin.agent, body="Já vimos.")
    make_customer_reply(came_back, body="Não resolveu.")

    response = staff.get(TICKET_CHANGELIST, {"fila": "todos"})

    marks = {
        ticket.subject: 'class="aguarda-equipe"' in ticket_row(response, ticket)
        for ticket in [answered, noted, came_back]
    }
    assert marks == {"Respondido": False, "Só nota": True, "Voltou": True}
    assert "há " in ticket_row(response, came_back)


def ticket_row(response, ticket: Ticket) -> str:
    html = response.content.decode()
    start = html.index(f'value="{ticket.pk}"')
    return html[start : html.index("</tr>", start)]


def bulk(client, action: str, tickets, **values):
    """Run a bulk action as the page does: the action, then its form with "Aplicar"."""
    data = {"action": action, "_selected_action": [str(t.pk) for t in tickets], "index": "0"}
    page = client.post(f"{TICKET_CHANGELIST}?fila=todos", data)
    assert page.status_code == 200 and "edicao-em-lote" in page.content.decode()
    return client.post(f"{TICKET_CHANGELIST}?fila=todos", {**data, **values, "aplicar": "Aplicar"}, follow=True)


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_a_bulk_status_change_reports_the_updated_and_the_ignored_with_why(staff, organization):
    open_one, other_open = make_ticket(organization), make_ticket(organization)
    closed = ticket_update(ticket=make_ticket(organization), status=status_of(organization, "fechado"))
    in_progress = status_of(organization, "em_andamento")
    WebhookEvent.objects.all().delete()

    response = bulk(staff, "bulk_status", [open_one, closed, other_open], status=str(in_progress.pk))

    assert messages_of(response) == [
        "2 atualizados, 1 ignorados.",
        f"#{closed.number} ignorado: Ticket fechado: abra-o para alterá-lo.",
    ]
    assert {t.status_id for t in Ticket.objects.filter(pk__in=[open_one.pk, other_open.pk])} == {in_progress.pk}
    assert Ticket.objects.get(pk=closed.pk).status.category == "fechado"
    assert sorted(WebhookEvent.objects.values_list("kind", flat=True)) == ["ticket.status_alterado"] * 2


def test_bulk_priority_assignee_and_tags_apply_to_every_ticket(staff, admin, organization):
    tickets = [make_ticket(organization) for _ in range(3)]
    ticket_update(ticket=tickets[0], tags_add=["antiga"], assignee=admin.agent)

    assert "3 atualizados, 0 ignorados." in messages_of(bulk(staff, "bulk_priority", tickets, priority="urgente"))
    assert "3 atualizados, 0 ignorados." in messages_of(
        bulk(staff, "bulk_tags", tickets, tags_add="Cliente VIP, revisar", tags_remove="antiga")
    )
    assert "3 atualizados, 0 ignorados." in messages_of(bulk(staff, "bulk_assignee", tickets, assignee="nenhum"))

    rows = Ticket.objects.filter(pk__in=[t.pk for t in tickets])
    assert {(t.priority, tuple(t.tags), t.assignee_id) for t in rows} == {("urgente", ("cliente-vip", "revisar"), None)}


def test_a_bulk_forms_bad_value_is_shown_on_its_page_and_nothing_changes(staff, organization, other_organization):
    tickets = [make_ticket(organization) for _ in range(2)]
    foreign_status = status_of(other_organization, "em_andamento")
    data = {"action": "bulk_status", "_selected_action": [str(t.pk) for t in tickets], "index": "0"}

    foreign = staff.post(TICKET_CHANGELIST, {**data, "status": str(foreign_status.pk), "aplicar": "Aplicar"})
    both = staff.post(
        TICKET_CHANGELIST,
        {**data, "action": "bulk_tags", "tags_add": "a", "tags_remove": "A", "aplicar": "Aplicar"},
    )

    assert foreign.status_code == 200 and foreign.context["form"].errors["status"]
    assert both.status_code == 200 and both.context["form"].errors["tags_remove"]
    assert {t.status.category for t in Ticket.objects.filter(pk__in=[t.pk for t in tickets])} == {"aberto"}


def test_bulk_actions_never_reach_another_organizations_tickets(staff, organization, other_organization):
    ours, theirs = make_ticket(organization), make_ticket(other_organization)

    response = bulk(staff, "bulk_priority", [ours, theirs], priority="urgente")

    assert messages_of(response) == ["1 atualizados, 0 ignorados."]  # the admin never offered theirs
    assert Ticket.objects.get(pk=theirs.pk).priority != "urgente"


def test_the_ticket_page_shows_who_changed_what(staff, admin, organization):
    ticket = make_ticket(organization)
    colleague = make_agent(organization, name="Carla Souza")
    bulk(staff, "bulk_priority", [ticket], priority="alta")
    bulk(staff, "bulk_assignee", [ticket], assignee=str(colleague.pk))
    bulk(staff, "bulk_tags", [ticket], tags_add="vip")

    html = staff.get(f"{TICKET_CHANGELIST}{ticket.pk}/change/").content.decode()

    history = re.sub(r"<[^>]+>", "", html[html.index('class="historico-alteracoes"') :])
    before = ticket.priority or "sem prioridade"
    assert f"prioridade {before} → alta, por {admin.name}" in history
    assert f"atendente ninguém → Carla Souza, por {admin.name}" in history
    assert f"tags +vip, por {admin.name}" in history
