"""busca's exact total, counted once while the organization's tickets stand still (tickets.selectors._search_total):
kept with the change list's last position, served only while that position is the same, and right at once after
every change a search can see. Transactional tests: on PostgreSQL a total is kept only once its transaction is over."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from helpdesk.actors import Actor
from tests.assertions import assert_success
from tests.factories import make_agent, make_ticket
from tests.metrics import scrape
from tickets import selectors
from tickets.models import Ticket
from tickets.services import contact_update, ticket_delete, ticket_update

TICKETS = "/api/v1/tickets"
TERM = "reembolso"
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("generous_rate_limits")]


def searched(client, **params) -> dict:
    return assert_success(client.get(TICKETS, {"busca": TERM, **params}), 200, "Tickets listados.")


def matching(organization, **filters) -> int:
    """What the search finds, counted the plain way."""
    condition = Q(subject__icontains=TERM) | Q(description__icontains=TERM)
    condition |= Q(requester__name__icontains=TERM) | Q(requester__email__icontains=TERM)
    return Ticket.objects.filter(condition, organization=organization, **filters).count()


def totals_read() -> dict:
    samples = scrape()
    return {
        source: samples.value("helpdesk_ticket_search_totals_total", source=source) for source in ("kept", "counted")
    }


def make_refund(organization, **overrides) -> Ticket:
    return make_ticket(organization, subject="Pedido de reembolso", **overrides)


def test_a_search_is_counted_once_then_its_total_is_kept_while_nothing_changes(partner, organization):
    for _ in range(3):
        make_refund(organization)
    make_ticket(organization, subject="Outro assunto")
    before = totals_read()

    first, second = searched(partner), searched(partner)

    assert first["total"] == second["total"] == 3
    assert [item["id"] for item in first["data"]] == [item["id"] for item in second["data"]]
    after = totals_read()
    assert after["counted"] - before["counted"] == 1
    assert after["kept"] - before["kept"] == 1


def test_every_change_a_search_can_see_gives_the_exact_total_at_once(partner, organization):
    agent = make_agent(organization)
    refunds = [make_refund(organization) for _ in range(3)]
    other = make_ticket(organization, subject="Outro assunto")

    def check(**filters):
        params = {"prioridade": filters["priority"]} if "priority" in filters else {}
        assert searched(partner, **params)["total"] == matching(organization, **filters)
        assert searched(partner, **params)["total"] == matching(organization, **filters)  # and once kept

    check()
    created = partner.post(
        TICKETS, {"assunto": "Quero reembolso", "descricao": "x", "solicitante": {"nome": "Ana"}}, format="json"
    )
    assert created.status_code == 201, created.content
    check()
    ticket_delete(ticket=refunds[0], actor=Actor.of_agent(agent))
    check()
    contact_update(contact=other.requester, name="Reembolsos Ltda", actor=Actor.of_agent(agent))  # its ticket matches
    check()
    check(priority="alta")
    ticket_update(ticket=refunds[1], priority="alta")
    check(priority="alta")
    ticket_update(ticket=refunds[1], priority="baixa")
    check(priority="alta")
    assert matching(organization) == 4


@pytest.mark.parametrize("beside", ["assignee_id", "sla_state"])
def test_a_search_beside_a_filter_written_around_the_change_list_is_always_counted(organization, beside):
    """An assignee removed with its user, a hidden custom field's value and the SLA clock change a list without
    moving a ticket (a QuerySet.update() stands for them here): such a search is counted every time."""
    agent = make_agent(organization)
    ticket = make_refund(organization)
    Ticket.objects.filter(pk=ticket.pk).update(assignee=agent, sla_due_at=timezone.now() - timedelta(minutes=1))
    filters = {"search": TERM, beside: {"assignee_id": agent.pk, "sla_state": "violado"}[beside]}

    def total() -> int:
        return selectors.ticket_page(
            organization=organization, filters=filters, page=1, per_page=25, columns=("id",)
        ).total

    assert total() == total() == 1
    Ticket.objects.filter(pk=ticket.pk).update(assignee=None, sla_due_at=None)
    assert total() == 0


def test_a_cache_that_fails_leaves_the_search_exact(partner, organization, monkeypatch):
    make_refund(organization)
    assert searched(partner)["total"] == 1  # kept

    def down(*args, **kwargs):
        raise ConnectionError("cache down")

    monkeypatch.setattr(selectors.cache, "get", down)
    monkeypatch.setattr(selectors.cache, "set", down)
    make_refund(organization)

    assert searched(partner)["total"] == 2
    assert searched(partner)["total"] == 2


def test_a_kept_value_of_another_shape_is_counted_again(partner, organization, monkeypatch):
    """A value another version of the service kept under the same key is not trusted."""
    make_refund(organization)
    monkeypatch.setattr(selectors.cache, "get", lambda key, *args, **kwargs: (1, 2, 3))

    assert searched(partner)["total"] == 1


def test_another_organizations_changes_and_searches_are_its_own(
    partner, other_partner, organization, other_organization
):
    make_refund(organization)
    for _ in range(2):
        make_refund(other_organization)

    assert searched(partner)["total"] == 1
    assert searched(other_partner)["total"] == 2
    make_refund(other_organization)
    assert searched(partner)["total"] == 1
    assert searched(other_partner)["total"] == 3


# --- PostgreSQL: what the statement does, and transactions still running ----------------------------------------


def test_a_kept_total_does_not_run_the_count(postgres_only, partner, organization):
    for _ in range(3):
        make_refund(organization)
    searched(partner)  # counted and kept

    with CaptureQueriesContext(connection) as captured:
        assert searched(partner)["total"] == 3
    (statement,) = [query["sql"] for query in captured.captured_queries if "CASE WHEN" in query["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + statement)
        plan = [row[0] for row in cursor.fetchall()]

    counting = [line for line in plan if "Aggregate" in line]
    assert counting, plan
    assert all("never executed" in line for line in counting), "\n".join(plan)


def test_a_total_is_not_kept_while_an_older_transaction_may_still_commit_a_match(postgres_only, partner, organization):
    """A transaction that began writing before the last change commits after it: its ticket lands below the last
    position, which therefore does not move. A total counted meanwhile must not be kept under that position."""
    make_refund(organization)
    renamed = make_ticket(organization, subject="Outro assunto").requester
    agent = make_agent(organization)
    written, release, failures = threading.Event(), threading.Event(), []

    def slow_writer():
        try:
            with transaction.atomic():
                contact_update(contact=renamed, name="Reembolsos Ltda", actor=Actor.of_agent(agent))
                written.set()
                release.wait(10)
        except Exception as error:  # reported below
            failures.append(error)
            written.set()
        finally:
            connections.close_all()

    writer = threading.Thread(target=slow_writer)
    writer.start()
    assert written.wait(10)
    make_refund(organization)  # a later transaction, committed first: the last position is its
    assert searched(partner)["total"] == 2
    release.set()
    writer.join(10)

    assert not failures, failures
    assert searched(partner)["total"] == 3 == matching(organization)


# --- one count at a time per search (PostgreSQL) ---------------------------------------------------------


def _search_lock(organization) -> int:
    return selectors._search_total_lock(selectors._search_total_key(organization, {"search": TERM}))


def _holding(lock: int, hold, failures: list):
    """Another request counting the search: its lock held by another connection until `hold` is set."""
    taken = threading.Event()

    def run():
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT pg_advisory_lock(%s)", [lock])
                taken.set()
                hold.wait(10)
                cursor.execute("SELECT pg_advisory_unlock(%s)", [lock])
        except Exception as error:  # reported by the test
            failures.append(error)
            taken.set()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    assert taken.wait(10)
    return thread


def _searching(partner, answers: list) -> threading.Thread:
    """The search, asked by another client: its total lands in `answers`."""

    def search():
        try:
            answers.append(searched(partner)["total"])
        finally:
            connections.close_all()

    thread = threading.Thread(target=search)
    thread.start()
    return thread


def test_while_another_request_counts_a_search_it_waits_for_that_total(postgres_only, partner, organization):
    """The other request keeps its total and lets go: this one reads it, and counts nothing itself."""
    for _ in range(2):
        make_refund(organization)
    hold, failures, answers = threading.Event(), [], []
    holder = _holding(_search_lock(organization), hold, failures)
    before = totals_read()
    waiting = _searching(partner, answers)
    waiting.join(0.5)
    assert waiting.is_alive() and answers == []  # it waits, it does not count
    # What the counting request does when it finishes: keeps the total under the generation, then lets go.
    key = selectors._search_total_key(organization, {"search": TERM})
    tickets = Ticket.objects.filter(organization=organization)
    generation, _, _ = selectors._search_total_read(organization, tickets, None, None)
    selectors.cache.set(key, (*generation, 2), 60)
    hold.set()
    holder.join(10)
    waiting.join(10)

    assert not failures, failures
    assert answers == [2]
    after = totals_read()
    assert (after["kept"] - before["kept"], after["counted"] - before["counted"]) == (1, 0)


def test_when_the_one_counting_keeps_nothing_the_waiting_request_counts_itself(postgres_only, partner, organization):
    for _ in range(2):
        make_refund(organization)
    hold, failures, answers = threading.Event(), [], []
    holder = _holding(_search_lock(organization), hold, failures)
    waiting = _searching(partner, answers)
    waiting.join(0.3)
    assert waiting.is_alive()
    hold.set()  # it failed (a timeout, a lost connection): nothing kept
    holder.join(10)
    waiting.join(10)

    assert not failures, failures
    assert answers == [2] == [matching(organization)]
