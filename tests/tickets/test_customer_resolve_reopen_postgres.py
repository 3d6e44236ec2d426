"""The customer's resolve and reopen under concurrent requests (issue 21, part 3): the ticket's row lock
makes them run one after the other, each judging the ticket as the previous one left it.

Real concurrency needs a real server: these run on PostgreSQL (CI always provides it).
"""

import threading
import time

import pytest
from django.db import connection, connections, transaction

from helpdesk.models import AuditRecord
from tests.assertions import bearer_client, utc
from tests.factories import make_key, make_organization, make_ticket, status_of
from tests.threads import in_parallel
from tickets.models import StatusCategory, Ticket
from tickets.services import ticket_reopen_by_customer, ticket_resolve_by_customer, ticket_update

THREADS = 16


@pytest.fixture
def org_and_key(postgres_only):
    organization = make_organization("Concorrência")
    return organization, make_key(organization)


def _post(key: str, ticket, action: str):
    return lambda: bearer_client(key).post(f"/api/v1/tickets/{ticket.pk}/{action}")


def _moves(ticket) -> list[dict]:
    records = AuditRecord.objects.filter(action="ticket.status_alterado", resource_id=str(ticket.pk))
    return [record.changes["status"] for record in records.order_by("created_at", "id")]


def _assert_consistent(ticket) -> Ticket:
    ticket = Ticket.objects.select_related("status").get(pk=ticket.pk)
    assert (ticket.resolved_at is not None) == (ticket.status.category == StatusCategory.RESOLVED)
    return ticket


def test_parallel_resolves_resolve_once(org_and_key):
    organization, key = org_and_key
    ticket = make_ticket(organization)
    moves_before = len(_moves(ticket))

    responses = in_parallel([_post(key, ticket, "resolver") for _ in range(THREADS)])

    assert [(r.status_code, r.json()["message"]) for r in responses] == [(200, "Ticket resolvido.")] * THREADS
    ticket = _assert_consistent(ticket)
    assert ticket.status.category == StatusCategory.RESOLVED
    assert _moves(ticket)[moves_before:] == [{"antes": "Aberto", "depois": "Resolvido"}]
    # Every answer shows the one resolution: none stamped resolvido_em again.
    assert {utc(r.json()["data"]["resolvido_em"]) for r in responses} == {ticket.resolved_at}


def test_resolves_racing_reopens_leave_a_ticket_whose_history_is_one_chain(org_and_key):
    organization, key = org_and_key
    ticket = make_ticket(organization)
    ticket_update(ticket=ticket, status=status_of(organization, "aguardando"))
    moves_before = _moves(ticket)

    actions = ["resolver", "reabrir"] * (THREADS // 2)
    responses = in_parallel([_post(key, ticket, action) for action in actions])

    assert all(r.status_code == 200 for r in responses), [r.content for r in responses if r.status_code != 200]
    ticket = _assert_consistent(ticket)
    moves = _moves(ticket)[len(moves_before) :]
    assert moves, "at least the first request moved the ticket"
    # One after the other: each move starts where the previous one ended, and the last is where it is.
    assert moves[0]["antes"] == "Aguardando cliente"
    assert all(current["antes"] == previous["depois"] for previous, current in zip(moves, moves[1:]))
    assert moves[-1]["depois"] == ticket.status.name
    assert all(move["antes"] != move["depois"] for move in moves)  # a no-op records nothing
    # Each answer is a state the ticket really went through, consistent in itself.
    for response in responses:
        data = response.json()["data"]
        assert (data["resolvido_em"] is not None) == (data["status"]["categoria"] == "resolvido")


def _someone_waits_for_a_row_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def _second_waits_for_the_first(first, second):
    """`first` runs in a transaction that holds the ticket's row lock until `second` waits for it."""
    locked, release, result = threading.Event(), threading.Event(), {}

    def holder() -> None:
        try:
            with transaction.atomic():
                first()
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    def waiter() -> None:
        try:
            result["value"] = second()
        except Exception as error:  # the test shows it
            result["value"] = error
        finally:
            connections.close_all()

    holding = threading.Thread(target=holder)
    holding.start()
    assert locked.wait(timeout=30)
    waiting = threading.Thread(target=waiter)
    waiting.start()
    deadline = time.monotonic() + 30
    while not _someone_waits_for_a_row_lock() and time.monotonic() < deadline:
        time.sleep(0.02)
    release.set()
    holding.join(timeout=30)
    waiting.join(timeout=30)
    return result["value"]


AGUARDANDO, ABERTO, RESOLVIDO = "Aguardando cliente", "Aberto", "Resolvido"


@pytest.mark.parametrize(
    ("start", "first", "second", "moves"),
    [
        (
            "aguardando",
            ticket_resolve_by_customer,
            ticket_reopen_by_customer,
            [(AGUARDANDO, RESOLVIDO), (RESOLVIDO, ABERTO)],
        ),
        (
            "resolvido",
            ticket_reopen_by_customer,
            ticket_resolve_by_customer,
            [(RESOLVIDO, ABERTO), (ABERTO, RESOLVIDO)],
        ),
        ("aberto", ticket_resolve_by_customer, ticket_resolve_by_customer, [(ABERTO, RESOLVIDO)]),
    ],
    ids=["reopen-waits-for-resolve", "resolve-waits-for-reopen", "resolve-waits-for-resolve"],
)
def test_a_move_that_waited_for_another_sees_its_result(org_and_key, start, first, second, moves):
    """The waiting read finds the ticket (its status changed under it: tickets.services._locked looks again)
    and judges it as the first move left it."""
    organization, _ = org_and_key
    ticket = make_ticket(organization)
    ticket_update(ticket=ticket, status=status_of(organization, start))
    moves_before = len(_moves(ticket))

    result = _second_waits_for_the_first(
        lambda: first(organization=organization, ticket_id=ticket.pk),
        lambda: second(organization=organization, ticket_id=ticket.pk),
    )

    assert isinstance(result, Ticket), result
    ticket = _assert_consistent(ticket)
    assert result.status == ticket.status
    assert result.resolved_at == ticket.resolved_at
    assert [(move["antes"], move["depois"]) for move in _moves(ticket)[moves_before:]] == moves
