"""The ticket counters under concurrent writers on PostgreSQL: creates through the API, deletes,
status and priority moves and customer reopens from eight threads, each transaction slow to commit.
Afterwards every counter equals its rows, the recount finds nothing to correct, and no writer met a
deadlock (the triggers lock counter rows in one order). CI runs this on PostgreSQL."""

import random
import threading
import time

import pytest
from django.db import transaction

from helpdesk.actors import Actor
from tests.factories import make_agent, make_key, make_organization, make_ticket, status_of
from tests.writers import run_writers
from tickets.counts import ticket_counts_recount
from tickets.models import Ticket, TicketCount
from tickets.services import reply_create_by_customer, ticket_delete, ticket_update

WRITERS = 8
WRITE_SECONDS = 4.0


class Counted:
    def __init__(self):
        self.organization = make_organization("Contadores")
        self.key = make_key(self.organization)
        self.agent = make_agent(self.organization)
        self.statuses = [status_of(self.organization, c) for c in ("aberto", "em_andamento", "aguardando", "resolvido")]
        self.ids = [make_ticket(self.organization).pk for _ in range(20)]
        self.lock = threading.Lock()
        self.errors: list[str] = []
        self.done = {"create": 0, "delete": 0, "move": 0, "reopen": 0}

    def pick(self, rng, remove=False):
        with self.lock:
            if remove:
                return self.ids.pop(rng.randrange(len(self.ids))) if len(self.ids) > 5 else None
            return rng.choice(self.ids)

    def did(self, what: str) -> None:
        with self.lock:
            self.done[what] += 1


def _slowly(write):
    with transaction.atomic():
        result = write()
        time.sleep(random.uniform(0, 0.02))
    return result


def _create(shop, rng, client):
    body = {"assunto": "Novo", "descricao": "x", "solicitante": {"nome": "C"}}
    body["prioridade"] = rng.choice(["baixa", "media", "alta", "urgente"])
    response = client.post("/api/v1/tickets", body, format="json")
    assert response.status_code == 201, response.content
    with shop.lock:
        shop.ids.append(response.json()["data"]["id"])
    shop.did("create")


def _delete(shop, rng, client):
    ticket_id = shop.pick(rng, remove=True)
    if ticket_id is not None:
        ticket = Ticket.objects.get(pk=ticket_id)
        _slowly(lambda: ticket_delete(ticket=ticket, actor=Actor.of_agent(shop.agent)))
        shop.did("delete")


def _move(shop, rng, client):
    ticket = Ticket.objects.filter(pk=shop.pick(rng)).select_related("status").first()
    if ticket is None:
        return
    change = rng.choice([{"status": rng.choice(shop.statuses)}, {"priority": rng.choice(["baixa", "alta", "urgente"])}])
    try:
        _slowly(lambda: ticket_update(ticket=ticket, **change))
    except Ticket.DoesNotExist:  # deleted meanwhile
        return
    shop.did("move")


def _reopen(shop, rng, client):
    try:
        _slowly(lambda: reply_create_by_customer(organization=shop.organization, ticket_id=shop.pick(rng), body="Oi"))
    except Exception as error:  # a deleted or closed ticket is an expected answer
        if type(error).__name__ not in {"TicketNotFound", "TicketClosed"}:
            raise
        return
    shop.did("reopen")


OPERATIONS = [(_create, 3), (_delete, 1), (_move, 4), (_reopen, 2)]


@pytest.fixture
def shop(postgres_only, settings) -> Counted:
    settings.PARTNER_RATE_LIMIT = "100000/m"
    return Counted()


def test_counters_never_drift_under_concurrent_creates_deletes_and_moves(shop):
    run_writers(shop, OPERATIONS, writers=WRITERS, seconds=WRITE_SECONDS)

    assert not shop.errors, shop.errors  # a deadlock would be one
    real = Ticket.objects.filter(organization=shop.organization)
    stored = {
        (priority, status): tickets
        for priority, status, tickets in TicketCount.objects.filter(organization=shop.organization)
        .exclude(tickets=0)
        .values_list("priority", "status_id", "tickets")
    }
    rows = {}
    for priority, status in real.values_list("priority", "status_id"):
        rows[(priority, status)] = rows.get((priority, status), 0) + 1
    assert stored == rows
    recount = ticket_counts_recount(batch=1000)
    assert (recount.added, recount.removed, recount.skipped) == (0, 0, 0)
    assert all(count >= 10 for count in shop.done.values()), shop.done  # every kind of write did happen
    print(shop.done, sum(rows.values()), "tickets")


# --- what answers the list at size, on PostgreSQL ---------------------------------------------------


def _plan(sql: str, params) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.fixture
def grown(postgres_only):
    """20,000 tickets in number order, as a real organization's: the planner weighs indexes as it would."""
    from django.db import connection

    organization = make_organization("Grande")
    first = make_ticket(organization)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO tickets_ticket (id, organization_id, number, subject, description, priority, channel,
                source_system, status_id, requester_id, external_id, created_at, updated_at)
            SELECT gen_random_uuid(), t.organization_id, 1 + g, 'Assunto ' || g, 'x',
                (ARRAY['baixa', 'media', 'alta', 'urgente'])[1 + g %% 4], 'api', 'api', t.status_id, t.requester_id,
                'pedido-' || g, t.created_at + g * interval '1 second', t.created_at + g * interval '1 second'
            FROM generate_series(1, 20000) g CROSS JOIN tickets_ticket t WHERE t.id = %s
            """,
            [first.pk],
        )
        cursor.execute(
            "UPDATE tickets_ticketsequence SET last_number = 20001 WHERE organization_id = %s", [organization.pk]
        )
        cursor.execute("ANALYZE")
    return organization


def test_totals_deep_pages_and_external_id_are_answered_by_indexes(grown):
    from django.db import connection
    from django.db.models import Sum
    from django.test.utils import CaptureQueriesContext

    from tickets import selectors
    from tickets.models import TicketSequence
    from tickets.payloads import TICKET_COLUMNS

    assert TicketCount.objects.filter(organization=grown).aggregate(n=Sum("tickets"))["n"] == 20001
    assert TicketSequence.objects.get(organization=grown).numbered_in_order
    with CaptureQueriesContext(connection) as captured:
        page = selectors.ticket_page(
            organization=grown, filters={"priority": "alta"}, page=1, per_page=25, columns=TICKET_COLUMNS
        )
    assert page.total == 5000 and len(page.items) == 25
    assert not [query["sql"] for query in captured if "COUNT(" in query["sql"].upper()]  # no row is counted
    start = selectors._nth_newest_number(grown, 15_000, 20001)
    assert start == 20001 - 15_000
    deep = Ticket.objects.filter(organization=grown, number__lte=start).order_by("-number")[:25]
    assert "ticket_org_number_unique" in _plan(*deep.query.sql_with_params())
    by_external_id = Ticket.objects.filter(organization=grown, external_id="pedido-777")
    assert "ticket_org_external_id_unique" in _plan(*by_external_id.query.sql_with_params())


def test_a_rare_busca_collects_its_matches_instead_of_walking_the_whole_list(grown):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tickets import selectors

    with CaptureQueriesContext(connection) as captured:
        page = selectors.ticket_page(
            organization=grown, filters={"search": "Assunto 17777"}, page=1, per_page=25, columns=("number",)
        )

    assert page.total == 1 and page.items == [(17778,)]  # 1 + g for g = 17777
    page_sql = captured.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + page_sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "ticket_org_newest" not in plan, plan  # collected where they are, then sorted
