"""Exact totals without counting rows: the counters the database's triggers keep, beat's recount, and
the list's deep pages and cursor mode (docs/performance.md, "Big organizations")."""

import random

import pytest
from django.core.management import call_command
from django.db import connection

from helpdesk.actors import Actor
from tests.assertions import assert_exact_validation_error, assert_success, bearer_client
from tests.factories import make_customer_reply, make_key, make_organization, make_ticket, status_of
from tests.metrics import scrape
from tickets import selectors
from tickets.counts import ticket_counts_recount
from tickets.models import Ticket, TicketCount, TicketSequence
from tickets.services import ticket_delete, ticket_update

TICKETS = "/api/v1/tickets"
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def counted(organization, **filters) -> int:
    return sum(TicketCount.objects.filter(organization=organization, **filters).values_list("tickets", flat=True))


def assert_counters_match(organization) -> None:
    real = Ticket.objects.filter(organization=organization)
    for priority in ("baixa", "media", "alta", "urgente"):
        assert counted(organization, priority=priority) == real.filter(priority=priority).count(), priority
    for status_id in real.values_list("status_id", flat=True).distinct():
        assert counted(organization, status_id=status_id) == real.filter(status_id=status_id).count()
    assert counted(organization) == real.count()


def listed(client, path=TICKETS, **params) -> dict:
    return assert_success(client.get(path, params), 200, "Tickets listados.")


def test_the_total_follows_creates_moves_and_deletes_whatever_wrote_them(partner, organization, agent):
    tickets = [make_ticket(organization) for _ in range(6)]
    ticket_update(ticket=tickets[0], priority="alta")
    ticket_update(ticket=tickets[1], status=status_of(organization, "resolvido"))
    make_customer_reply(Ticket.objects.get(pk=tickets[1].pk), body="Voltou")  # reopens: moves it back
    ticket_delete(ticket=tickets[2], actor=Actor.of_agent(agent))
    Ticket.objects.filter(pk=tickets[3].pk).update(priority="urgente")  # no service: the triggers still count
    Ticket.objects.filter(pk=tickets[4].pk).delete()

    assert_counters_match(organization)
    assert listed(partner)["total"] == 4
    assert listed(partner, prioridade="urgente")["total"] == 1
    assert listed(partner, prioridade="media")["total"] == 2


@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL keeps a table's triggers when a column changes")
def test_a_migration_that_rebuilt_the_table_gets_its_counting_triggers_back(partner, organization):
    """SQLite changes a column by rebuilding the table, which drops its triggers (a migration that adds a
    required field to tickets does): the next `migrate` puts them back, and tickets count again."""
    with connection.cursor() as cursor:
        for name in ("insert", "delete", "move", "renumber"):
            cursor.execute(f"DROP TRIGGER tickets_ticket_counted_{name}")

    call_command("migrate", verbosity=0)
    make_ticket(organization)

    assert listed(partner)["total"] == 1
    assert_counters_match(organization)


def test_filtered_totals_counted_and_not_counted_agree_with_the_rows(partner, agent_client, organization, agent):
    for n in range(9):
        ticket = make_ticket(organization, subject=f"Pedido {n}", priority=["baixa", "alta", "media"][n % 3])
        if n % 4 == 0:
            ticket_update(ticket=ticket, status=status_of(organization, "em_andamento"), assignee=agent)
    in_progress = status_of(organization, "em_andamento")

    assert listed(partner, prioridade="alta")["total"] == 3
    assert listed(partner, busca="Pedido 1")["total"] == 1  # not a counter: counted from the rows
    assert listed(partner, numero=2)["total"] == 1
    panel = listed(agent_client, "/api/tickets", status=str(in_progress.pk))
    assert panel["total"] == 3 == len(panel["data"])
    assert listed(agent_client, "/api/tickets", status=str(in_progress.pk), prioridade="baixa")["total"] == 1
    assert listed(agent_client, "/api/tickets", atendente=str(agent.pk))["total"] == 3


def test_another_organizations_tickets_never_count(partner, organization, other_organization):
    make_ticket(organization)
    for _ in range(3):
        make_ticket(other_organization)

    assert listed(partner)["total"] == 1


def test_the_recount_corrects_drift_and_reports_it(organization, other_organization):
    for n in range(5):
        make_ticket(organization, priority="alta" if n % 2 else "media")
    make_ticket(other_organization)
    TicketCount.objects.filter(organization=organization, priority="alta").update(tickets=7)
    TicketCount.objects.filter(organization=organization, priority="media").delete()
    before = scrape()

    result = ticket_counts_recount(batch=10)

    assert_counters_match(organization)
    assert_counters_match(other_organization)
    assert (result.added, result.removed, result.organizations) == (3, 5, 2)
    after = scrape()
    assert after.since(before, "helpdesk_ticket_count_corrections_total", direction="acrescentados") == 3
    assert after.since(before, "helpdesk_ticket_count_corrections_total", direction="retirados") == 5
    assert ticket_counts_recount(batch=10).added == 0  # nothing left to correct


def test_each_recount_takes_the_organizations_checked_longest_ago(db):
    organizations = [make_organization(f"Org {n}") for n in range(5)]

    first, second, third = (ticket_counts_recount(batch=2) for _ in range(3))

    assert (first.organizations, second.organizations, third.organizations) == (2, 2, 2)
    checked = TicketSequence.objects.filter(organization__in=organizations, counts_checked_at__isnull=False)
    assert checked.count() == 5  # the first four, then the fifth before any again


# --- deep pages ----------------------------------------------------------------------------------


def all_pages(client, per_page: int, **params) -> list[str]:
    first = listed(client, por_pagina=per_page, **params)
    numbers = [item["numero"] for item in first["data"]]
    for page in range(2, first["ultima_pagina"] + 1):
        numbers += [item["numero"] for item in listed(client, por_pagina=per_page, page=page, **params)["data"]]
    return numbers


def newest_first(organization) -> list[int]:
    return list(
        Ticket.objects.filter(organization=organization)
        .order_by("-created_at", "-number")
        .values_list("number", flat=True)
    )


@pytest.mark.parametrize("seed", range(4))
def test_deep_pages_start_at_a_number_and_read_exactly_what_offset_reads(
    partner, organization, agent, monkeypatch, seed
):
    rng = random.Random(seed)
    tickets = [make_ticket(organization) for _ in range(40)]
    for ticket in rng.sample(tickets, 12):  # gaps anywhere, the newest and the oldest included
        ticket_delete(ticket=ticket, actor=Actor.of_agent(agent))
    monkeypatch.setattr(selectors, "DEEP_PAGE_OFFSET", 3)
    starts = []
    real_start = selectors._nth_newest_number
    monkeypatch.setattr(selectors, "_nth_newest_number", lambda *a: starts.append(real_start(*a)) or starts[-1])

    assert all_pages(partner, rng.choice([1, 2, 3, 5])) == newest_first(organization)
    assert starts and None not in starts  # the deep pages did start at a number
    assert listed(partner, por_pagina=5, page=100)["data"] == []


def test_numbers_out_of_creation_order_fall_back_to_offset_and_stay_exact(partner, organization, monkeypatch):
    tickets = [make_ticket(organization) for _ in range(12)]
    Ticket.objects.filter(pk=tickets[3].pk).update(created_at=tickets[9].created_at)  # an imported ticket, say
    monkeypatch.setattr(selectors, "DEEP_PAGE_OFFSET", 2)

    assert not TicketSequence.objects.get(organization=organization).numbered_in_order
    assert all_pages(partner, 2) == newest_first(organization)


def test_a_deep_page_runs_a_fixed_number_of_statements(partner, organization, agent, monkeypatch):
    from django.test.utils import CaptureQueriesContext

    tickets = [make_ticket(organization) for _ in range(30)]
    ticket_delete(ticket=tickets[-1], actor=Actor.of_agent(agent))
    monkeypatch.setattr(selectors, "DEEP_PAGE_OFFSET", 5)
    partner.get(TICKETS)
    counts = []
    for per_page, page in ((2, 8), (10, 2), (25, 1)):
        with CaptureQueriesContext(connection) as captured:
            listed(partner, por_pagina=per_page, page=page)
        counts.append(len(captured))

    assert counts[0] == counts[1] <= counts[2] + 2, counts  # deep: the sequence and its gaps, then the page


# --- cursor mode ---------------------------------------------------------------------------------


def walk(client, per_page: int, between=None, **params) -> tuple[list[int], list[dict]]:
    numbers, pages, cursor = [], [], ""
    while cursor is not None:
        page = listed(client, por_pagina=per_page, cursor=cursor, **params)
        pages.append(page)
        numbers += [item["numero"] for item in page["data"]]
        cursor = page["proximo_cursor"]
        if between:
            between()
    return numbers, pages


def test_the_cursor_walks_the_whole_list_once_in_order(partner, organization):
    for n in range(11):
        make_ticket(organization, priority="alta" if n % 2 else "baixa")

    numbers, pages = walk(partner, 3)

    assert numbers == newest_first(organization)
    assert [page["pagina_atual"] for page in pages] == [1, 2, 3, 4]
    assert {page["total"] for page in pages} == {11} and {page["ultima_pagina"] for page in pages} == {4}
    assert pages[-1]["proximo_cursor"] is None
    alta, _ = walk(partner, 2, prioridade="alta")
    assert alta == [n for n in newest_first(organization) if n % 2 == 0]


def test_tickets_created_during_a_walk_never_shift_it(partner, organization):
    for _ in range(9):
        make_ticket(organization)
    before = newest_first(organization)

    numbers, _ = walk(partner, 2, between=lambda: make_ticket(organization))

    assert numbers == before


def test_page_mode_keeps_the_contracts_shape(partner, organization):
    make_ticket(organization)

    page = listed(partner)

    assert set(page) == {"data", "total", "por_pagina", "pagina_atual", "ultima_pagina"}


@pytest.mark.parametrize("cursor", ["lixo", "W10:1x:abc", "a" * 1000])
def test_a_cursor_not_made_by_the_list_is_a_422(partner, organization, cursor):
    response = partner.get(TICKETS, {"cursor": cursor})

    assert_exact_validation_error(
        response,
        {
            "cursor": [
                "Informe o proximo_cursor de uma resposta anterior, ou deixe vazio para começar do início da lista."
            ]
        },
    )


def test_another_organizations_cursor_does_not_load(partner, organization, other_organization):
    for _ in range(3):
        make_ticket(other_organization)
    other = bearer_client(make_key(other_organization))
    cursor = listed(other, por_pagina=1, cursor="")["proximo_cursor"]

    response = partner.get(TICKETS, {"cursor": cursor})

    assert response.status_code == 422


def test_external_id_finds_the_ticket_of_an_order(partner, organization, other_organization):
    make_ticket(organization, external_id="pedido-1234")
    make_ticket(organization, external_id="pedido-12345")
    make_ticket(other_organization, external_id="pedido-1234")

    found = listed(partner, external_id="pedido-1234")

    assert [item["external_id"] for item in found["data"]] == ["pedido-1234"] and found["total"] == 1
    assert listed(partner, external_id="nao-existe") == {
        "data": [],
        "total": 0,
        "por_pagina": 15,
        "pagina_atual": 1,
        "ultima_pagina": 1,
    }
    assert partner.get(TICKETS, {"external_id": "x" * 256}).status_code == 422
