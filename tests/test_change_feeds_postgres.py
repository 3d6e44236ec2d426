"""The change list and the event feed never skip a change, with writers committing out of order, on
PostgreSQL; and their queries are answered by their indexes.

Eight writer threads create tickets and reply as the partner (through the API), and reply, change
status and priority, write internal notes and delete tickets as agents (through the services, sleeping
inside the transaction so that transactions commit in another order than they began). Meanwhile one reader
follows the cursors without pause. When the writers stop, the reader must catch up, with the very
cursor it holds, to exactly the final state: a change it had passed would never come.

CI runs these on PostgreSQL (REQUIRE_POSTGRES makes a missing server a failure, not a skip).
"""

import json
import threading
import time
from datetime import UTC, datetime

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from helpdesk.actors import Actor
from integrations.models import EventKind, WebhookEvent
from tests.assertions import bearer_client
from tests.factories import make_agent, make_agent_reply, make_key, make_organization, make_ticket, status_of
from tests.writers import run_writers
from tickets.models import Ticket, TicketTombstone
from tickets.services import reply_create_by_agent, ticket_delete, ticket_update

WRITERS = 8
WRITE_SECONDS = 4.0
CATCH_UP_SECONDS = 90.0
CHANGES = "/api/v1/tickets/alteracoes"
EVENTS = "/api/v1/eventos"


class Shop:
    """One organization under concurrent writes, and what the writers did."""

    def __init__(self):
        self.organization = make_organization("Concorrência")
        self.key = make_key(self.organization)
        self.agents = [make_agent(self.organization, name=f"Agente {n}") for n in range(3)]
        self.statuses = [status_of(self.organization, c) for c in ("aberto", "em_andamento", "aguardando", "resolvido")]
        self.ticket_ids = [make_ticket(self.organization, subject=f"Inicial {n}").pk for n in range(10)]
        self.lock = threading.Lock()
        self.commits: list[int] = []  # transaction ids of the agents' writes, in the order their commits returned
        self.errors: list[str] = []
        self.writes = 0

    def any_ticket(self, rng):
        with self.lock:
            return rng.choice(self.ticket_ids)

    def committed(self, xid: int) -> None:
        with self.lock:
            self.commits.append(xid)
            self.writes += 1


def _as_agent(shop: Shop, rng, write, ticket_id=None) -> None:
    """One agent action, slow to commit: another transaction begun later may commit first. A ticket
    another writer deleted meanwhile is left alone."""
    with transaction.atomic():
        ticket = Ticket.objects.select_related("status").filter(pk=ticket_id or shop.any_ticket(rng)).first()
        if ticket is None:
            return
        try:
            write(ticket, rng.choice(shop.agents))
        except Ticket.DoesNotExist:
            return
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_xact_id()::text::bigint")
            xid = cursor.fetchone()[0]
        time.sleep(rng.uniform(0, 0.03))
    shop.committed(xid)


def _create(shop, rng, client):
    response = client.post(
        "/api/v1/tickets",
        {"assunto": f"Novo {rng.random()}", "descricao": "x", "solicitante": {"nome": "Cliente"}},
        format="json",
    )
    if response.status_code != 201:
        raise AssertionError(response.content)
    with shop.lock:
        shop.ticket_ids.append(response.json()["data"]["id"])
        shop.writes += 1


def _customer_reply(shop, rng, client):
    response = client.post(f"/api/v1/tickets/{shop.any_ticket(rng)}/respostas", {"mensagem": "Cliente"}, format="json")
    if response.status_code == 404:  # deleted meanwhile
        return
    if response.status_code != 201:
        raise AssertionError(response.content)
    with shop.lock:
        shop.writes += 1


def _agent_reply(shop, rng, client):
    _as_agent(shop, rng, lambda ticket, agent: reply_create_by_agent(ticket=ticket, agent=agent, body="Agente"))


def _note(shop, rng, client):
    _as_agent(shop, rng, lambda t, agent: reply_create_by_agent(ticket=t, agent=agent, body="Nota", internal=True))


def _status(shop, rng, client):
    _as_agent(shop, rng, lambda ticket, agent: ticket_update(ticket=ticket, status=rng.choice(shop.statuses)))


def _priority(shop, rng, client):
    priority = rng.choice(["baixa", "media", "alta", "urgente"])
    _as_agent(shop, rng, lambda ticket, agent: ticket_update(ticket=ticket, priority=priority))


def _delete(shop, rng, client):
    with shop.lock:
        if len(shop.ticket_ids) < 5:
            return
        ticket_id = shop.ticket_ids.pop(rng.randrange(len(shop.ticket_ids)))
    _as_agent(shop, rng, lambda ticket, agent: ticket_delete(ticket=ticket, actor=Actor.of_agent(agent)), ticket_id)


OPERATIONS = [
    (_create, 2),
    (_customer_reply, 2),
    (_agent_reply, 3),
    (_status, 3),
    (_priority, 1),
    (_note, 1),
    (_delete, 1),
]


class Reader(threading.Thread):
    """Follows one feed's cursor without pause until told to stop; keeps everything it saw."""

    def __init__(self, key: str, path: str, start: dict, cursor_name: str, param_name: str):
        super().__init__()
        self.key, self.path, self.params = key, path, {**start, "limite": 50}
        self.cursor_name, self.param_name = cursor_name, param_name
        self.items: list[dict] = []
        self.deleted: list[dict] = []
        self.pages = 0
        self.stop = threading.Event()
        self.error: str | None = None

    def run(self) -> None:
        client = bearer_client(self.key)
        try:
            while True:
                response = client.get(self.path, self.params)
                if response.status_code != 200:
                    raise AssertionError(response.content)
                data = response.json()["data"]
                self.items += data["itens"]
                self.deleted += data.get("excluidos", [])
                self.pages += 1
                if data[self.cursor_name] is not None:
                    self.params[self.param_name] = data[self.cursor_name]
                if not data["tem_mais"]:
                    if self.stop.is_set():
                        return
                    time.sleep(0.005)
        except Exception as error:  # reported by the test
            self.error = repr(error)
        finally:
            connections.close_all()


def _run(shop: Shop, reader: Reader, caught_up) -> None:
    """Writers for WRITE_SECONDS with the reader running; then the reader keeps its cursor until
    caught_up() says it has everything, or CATCH_UP_SECONDS pass."""
    reader.start()
    run_writers(shop, OPERATIONS, writers=WRITERS, seconds=WRITE_SECONDS)
    give_up = time.monotonic() + CATCH_UP_SECONDS
    while time.monotonic() < give_up and reader.is_alive() and not caught_up():
        time.sleep(0.05)
    reader.stop.set()
    reader.join(timeout=60)
    assert not shop.errors, shop.errors
    assert reader.error is None, reader.error


def _commits_out_of_order(commits: list[int]) -> int:
    """How many commits returned after a commit of a younger transaction: the case a naive cursor skips."""
    youngest, out_of_order = 0, 0
    for xid in commits:
        out_of_order += xid < youngest
        youngest = max(youngest, xid)
    return out_of_order


@pytest.fixture
def shop(postgres_only, settings) -> Shop:
    settings.PARTNER_RATE_LIMIT = "100000/m"
    return Shop()


def test_the_change_list_followed_under_concurrent_writes_ends_at_every_tickets_final_state(shop):
    started = datetime.now(UTC)
    reader = Reader(shop.key, CHANGES, {"desde": started.isoformat()}, "proximo_cursor", "desde")
    client = bearer_client(shop.key)

    def final_states() -> dict[str, dict]:
        changed = Ticket.objects.filter(organization=shop.organization, updated_at__gte=started)
        return {
            str(pk): client.get(f"/api/v1/tickets/{pk}").json()["data"] for pk in changed.values_list("pk", flat=True)
        }

    def last_seen() -> dict[str, dict]:
        return {item["id"]: item for item in list(reader.items)}

    def deleted() -> set[str]:
        tombstones = TicketTombstone.objects.filter(organization=shop.organization, deleted_at__gte=started)
        return {str(pk) for pk in tombstones.values_list("pk", flat=True)}

    final: dict[str, dict] = {}
    gone: set[str] = set()

    def caught_up() -> bool:
        nonlocal final, gone
        final, gone = final or final_states(), gone or deleted()
        seen = last_seen()
        seen_deleted = {item["id"] for item in list(reader.deleted)}
        return all(seen.get(pk) == state for pk, state in final.items()) and gone <= seen_deleted

    _run(shop, reader, caught_up)

    final, seen, gone = final_states(), last_seen(), deleted()
    behind = {pk: (seen.get(pk), state) for pk, state in final.items() if seen.get(pk) != state}
    assert not behind, f"{len(behind)} of {len(final)} tickets not seen in their final state: {list(behind)[:5]}"
    seen_deleted = [item["id"] for item in reader.deleted]
    assert set(seen_deleted) == gone, f"deletions missed: {gone - set(seen_deleted)}"
    assert len(seen_deleted) == len(set(seen_deleted)), "a deletion came twice"
    # Tickets exercised: those still there and those deleted (how many survive depends on the machine's speed).
    exercised = len(final) + len(gone)
    assert exercised >= 20 and shop.writes >= 50 and len(gone) >= 3, (len(final), shop.writes, len(gone))
    assert _commits_out_of_order(shop.commits) > 0, "no transaction committed after a younger one: nothing was proven"
    print(
        f"{shop.writes} writes, {len(final)} tickets, {len(gone)} deleted, {len(reader.items)} items in "
        f"{reader.pages} pages, "
        f"{_commits_out_of_order(shop.commits)} commits out of order"
    )


def test_the_event_feed_followed_under_concurrent_writes_sees_every_event_once_in_order(shop):
    reader = Reader(shop.key, EVENTS, {}, "proximo", "depois_de")

    def table() -> list[dict]:
        events = WebhookEvent.objects.filter(organization=shop.organization).exclude(kind=EventKind.TEST)
        return [json.loads(body) for body in events.order_by("change_tx", "change_seq").values_list("body", flat=True)]

    _run(shop, reader, lambda: len(reader.items) >= len(table()))

    stored = table()
    seen_ids = [item["id"] for item in reader.items]
    assert len(seen_ids) == len(set(seen_ids)), "an event came twice"
    assert reader.items == stored, f"{len(reader.items)} events seen, {len(stored)} stored"
    assert len(stored) >= 30, len(stored)
    assert _commits_out_of_order(shop.commits) > 0, "no transaction committed after a younger one: nothing was proven"
    print(f"{shop.writes} writes, {len(stored)} events in {reader.pages} pages")


# --- the indexes answer the feeds ---------------------------------------------------------------


def _plan_of(client, path: str, params: dict, table: str) -> str:
    """EXPLAIN of the statement a request ran on `table`'s feed (ordered by its position)."""
    assert client.get(path, params).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path, params).status_code == 200
    statements = [
        q["sql"] for q in captured.captured_queries if f'FROM "{table}"' in q["sql"] and "change_tx" in q["sql"]
    ]
    assert statements, [q["sql"] for q in captured.captured_queries]
    with connection.cursor() as cursor:
        plans = []
        for statement in statements:
            cursor.execute("EXPLAIN " + statement)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return "\n\n".join(plans)


@pytest.fixture
def many(postgres_only, organization, agent):
    """20,000 tickets and 20,000 events of the organization beside 20,000 of another, through bulk SQL:
    the planner weighs the indexes as on a real organization."""
    ticket = make_ticket(organization)
    make_agent_reply(ticket, agent)
    other = make_organization("Outra")
    with connection.cursor() as cursor:
        for org in (organization, other):
            cursor.execute(
                """
                INSERT INTO tickets_ticket (id, organization_id, number, subject, description, priority, channel,
                    source_system, status_id, requester_id, created_at, updated_at)
                SELECT gen_random_uuid(), %s, 1000 + g, 'Assunto', 'Texto', 'media', 'api', 'api', t.status_id,
                    t.requester_id, now() - interval '1 day', now() - (g || ' seconds')::interval
                FROM generate_series(1, 20000) g CROSS JOIN (SELECT * FROM tickets_ticket WHERE id = %s) t
                """,
                [org.pk, ticket.pk],
            )
            cursor.execute(
                """
                INSERT INTO integrations_webhookevent (id, organization_id, kind, body, created_at)
                SELECT gen_random_uuid(), %s, 'ticket.resolvido', '{}', now() FROM generate_series(1, 20000) g
                """,
                [org.pk],
            )
            # Tombstones too: an empty table's statistics (left by whatever autovacuum saw last) made the
            # planner read it whole and sort it, and the plan tests depended on the order tests ran in.
            cursor.execute(
                """
                INSERT INTO tickets_tickettombstone (id, organization_id, number, deleted_at)
                SELECT gen_random_uuid(), %s, 100000 + g, now() - interval '2 days' FROM generate_series(1, 20000) g
                """,
                [org.pk],
            )
        cursor.execute("ANALYZE tickets_ticket")
        cursor.execute("ANALYZE integrations_webhookevent")
        cursor.execute("ANALYZE tickets_tickettombstone")
    return organization


def _nodes(plan: str) -> list[str]:
    """The plan's node names (`Seq Scan on tickets_ticket`, `Sort`...), without their details."""
    return [line.strip().removeprefix("->").strip().split("  (")[0] for line in plan.splitlines() if "(cost=" in line]


def test_a_change_list_page_is_a_range_of_the_position_index(many, partner):
    """Tickets and tombstones each a range of their position index, merged in order: nothing sorted."""
    cursor = partner.get(CHANGES, {"limite": 100}).json()["data"]["proximo_cursor"]

    plan = _plan_of(partner, CHANGES, {"desde": cursor, "limite": 100}, "tickets_ticket")

    nodes = _nodes(plan)
    assert "Index Scan using ticket_org_change_position on tickets_ticket" in nodes, plan
    assert "Index Scan using tombstone_org_change_position on tickets_tickettombstone" in nodes, plan
    assert "Seq Scan on tickets_ticket" not in nodes and "Sort" not in nodes, plan


def test_a_change_list_from_a_timestamp_finds_its_start_through_an_index(many, partner):
    plan = _plan_of(partner, CHANGES, {"desde": "2000-01-01T00:00:00Z", "limite": 100}, "tickets_ticket")

    assert "Seq Scan on tickets_ticket" not in _nodes(plan), plan
    recent = _plan_of(partner, CHANGES, {"desde": datetime.now(UTC).isoformat(), "limite": 100}, "tickets_ticket")
    assert "Seq Scan on tickets_ticket" not in _nodes(recent), recent
    assert "ticket_org_updated" in recent or "ticket_org_change_position" in recent, recent


def test_an_event_feed_page_is_a_range_of_the_position_index(many, partner):
    first = partner.get(EVENTS, {"limite": 1}).json()["data"]["proximo"]

    plan = _plan_of(partner, EVENTS, {"depois_de": first, "limite": 100}, "integrations_webhookevent")

    assert "event_org_feed_position" in plan, plan
    assert "Seq Scan on integrations_webhookevent" not in plan and "Sort" not in plan, plan
