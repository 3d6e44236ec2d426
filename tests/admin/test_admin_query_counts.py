"""The ticket admin runs a fixed number of queries, however many tickets or replies it shows."""

import pytest
from django.urls import reverse

from tests.assertions import measured_get
from tests.contract import TICKET_CHANGELIST
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket, status_of
from tickets.models import StatusCategory
from tickets.services import ticket_update

CATEGORIES = [StatusCategory.OPEN, StatusCategory.IN_PROGRESS, StatusCategory.WAITING, StatusCategory.RESOLVED]


@pytest.fixture
def agents(organization, admin):
    """Several authors and assignees, so a per-row lookup of any of them would show."""
    return [admin.agent, *(make_agent(organization, name=f"Atendente {n}") for n in range(3))]


def make_varied_tickets(organization, agents, count: int) -> list:
    """Each with its own requester; statuses and assignees vary from ticket to ticket."""
    tickets = []
    for n in range(count):
        ticket = make_ticket(organization)
        ticket_update(
            ticket=ticket,
            status=status_of(organization, CATEGORIES[n % len(CATEGORIES)]),
            assignee=agents[n % len(agents)] if n % 3 else None,
        )
        tickets.append(ticket)
    return tickets


@pytest.mark.parametrize(
    "params",
    [{"fila": "todos"}, {"fila": "meus"}, {"fila": "sla_violado"}, {"q": "Assunto"}, {"categoria": "aberto"}],
    ids=["all", "mine", "sla-queue", "search", "filter"],
)
def test_ticket_changelist_queries_do_not_grow_with_tickets(staff, organization, agents, params):
    make_varied_tickets(organization, agents, 1)
    with_one, _ = measured_get(staff, TICKET_CHANGELIST, params)

    make_varied_tickets(organization, agents, 59)
    with_sixty, _ = measured_get(staff, TICKET_CHANGELIST, params)

    assert len(with_sixty) == len(with_one), "\n".join(with_sixty)


def make_thread(ticket, agents, count: int) -> None:
    """Public replies and internal notes of several agents, and customer replies, in turn."""
    for n in range(count):
        kind = n % 3
        if kind == 0:
            make_customer_reply(ticket, body=f"Cliente {n}")
        else:
            make_agent_reply(ticket, agents[n % len(agents)], body=f"Atendente {n}", internal=kind == 2)


def test_ticket_change_page_queries_do_not_grow_with_replies(staff, organization, agents):
    small = make_ticket(organization)
    make_thread(small, agents, 1)
    large = make_ticket(organization)
    make_thread(large, agents, 40)
    assert large.replies.filter(is_internal=True).count() == 13
    assert large.replies.filter(author_contact__isnull=False).count() == 14

    with_one, _ = measured_get(staff, reverse("admin:tickets_ticket_change", args=[small.pk]))
    with_forty, _ = measured_get(staff, reverse("admin:tickets_ticket_change", args=[large.pk]))

    assert len(with_forty) == len(with_one), "\n".join(with_forty)


def test_ticket_change_page_queries_do_not_grow_with_status_changes(staff, organization, agents):
    """The status history is one query, however many changes it shows."""
    few, many = make_ticket(organization), make_ticket(organization)
    for ticket, changes in ((few, 1), (many, 20)):
        for n in range(changes):
            ticket_update(ticket=ticket, status=status_of(organization, CATEGORIES[(n + 1) % len(CATEGORIES)]))

    with_one, _ = measured_get(staff, reverse("admin:tickets_ticket_change", args=[few.pk]))
    with_twenty, page = measured_get(staff, reverse("admin:tickets_ticket_change", args=[many.pk]))

    assert len(with_twenty) == len(with_one), "\n".join(with_twenty)
    assert page.content.decode().count("por <span") == 20
