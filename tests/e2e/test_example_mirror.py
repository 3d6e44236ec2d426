"""The example client of docs/sync.md (examples/mirror/mirror.py) against the running service.

Run again and again as a separate program, and now and then killed in the middle of a pass,
while two threads change an organization's tickets through the partner API and the agent panel
API (new tickets, customer and agent replies and their edits, status and priority changes,
internal notes, and deletions), its SQLite mirror ends, after one last run, equal to what
GET /api/v1/tickets/{id} answers for every ticket of the organization (the deleted ones gone), and
its events to the event feed, each once.
"""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import pytest

from tests.e2e.stack import ADMIN_PASSWORD, ROOT

MIRROR = ROOT / "examples" / "mirror" / "mirror.py"
WRITERS = 2
WRITE_SECONDS = 8.0
NOTE = "NOTA-INTERNA"


@dataclass
class Shop:
    """An organization of its own (the session's stack is shared), and what the writers did to it."""

    stack: object
    key: str
    token: str
    statuses: list = field(default_factory=list)
    tickets: list = field(default_factory=list)
    replies: list = field(default_factory=list)  # (ticket id, reply id, "cliente" or "agente")
    deleted: list = field(default_factory=list)  # ids of the tickets deleted from the panel
    done: dict = field(default_factory=dict)  # operation name -> how many succeeded
    errors: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def partner(self, method, path, body=None):
        return self.stack.request(method, path, body, key=self.key)

    def panel(self, method, path, body=None):
        return self.stack.request(method, path, body, token=self.token)

    def count(self, name: str) -> None:
        with self.lock:
            self.done[name] = self.done.get(name, 0) + 1


@pytest.fixture(scope="module")
def shop(stack) -> Shop:
    organization = json.loads(
        stack.manage(
            "create_organization",
            "--name",
            "Espelho",
            "--admin-email",
            "admin@espelho.test",
            "--admin-password",
            ADMIN_PASSWORD,
            "--json",
        )
    )["organization_id"]
    key = json.loads(stack.manage("create_api_key", "--organization", organization, "--name", "espelho", "--json"))
    status, body = stack.request("POST", "/api/auth/login", {"email": "admin@espelho.test", "senha": ADMIN_PASSWORD})
    assert status == 200, body
    shop = Shop(stack=stack, key=key["key"], token=body["data"]["access_token"])
    status, body = shop.panel("GET", "/api/ticket-status")
    assert status == 200, body
    shop.statuses = [item["id"] for item in body["data"]]
    return shop


def mirror_command(shop: Shop, db, *args: str) -> tuple[list[str], dict]:
    # A clean environment and another directory: the example needs nothing of the project.
    environment = {
        "PATH": os.environ["PATH"],
        "HELPDESK_BASE_URL": shop.stack.base_url,
        "HELPDESK_API_KEY": shop.key,
    }
    return [sys.executable, str(MIRROR), "--db", str(db), *args], environment


def run_mirror(shop: Shop, db, *args: str) -> subprocess.CompletedProcess:
    command, environment = mirror_command(shop, db, "--once", *args)
    return subprocess.run(command, env=environment, cwd=db.parent, capture_output=True, text=True, timeout=120)


# --- what the writers do ---------------------------------------------------------------------------


def _create(shop: Shop, rng: random.Random) -> None:
    n = rng.randrange(10**9)
    status, body = shop.partner(
        "POST",
        "/api/v1/tickets",
        {"assunto": f"Pedido {n}", "descricao": "Atrasado", "solicitante": {"nome": f"Cliente {n % 7}"}},
    )
    assert status == 201, body
    with shop.lock:
        shop.tickets.append(body["data"]["id"])


def _any_ticket(shop: Shop, rng: random.Random) -> str:
    with shop.lock:
        return rng.choice(shop.tickets)


def _gone(status: int, body: dict) -> bool:
    """The other writer deleted the ticket meanwhile: 404 Ticket não encontrado."""
    return status == 404 and body["errors"]["field"] == "id"


def _customer_reply(shop: Shop, rng: random.Random) -> None:
    ticket = _any_ticket(shop, rng)
    status, body = shop.partner("POST", f"/api/v1/tickets/{ticket}/respostas", {"mensagem": "Alguma novidade?"})
    if (status == 409 and body["errors"]["field"] == "status") or _gone(status, body):
        return  # Ticket fechado.: the customer cannot reply any more
    assert status == 201, body
    with shop.lock:
        shop.replies.append((ticket, body["data"]["id"], "cliente"))


def _agent_reply(shop: Shop, rng: random.Random) -> None:
    ticket = _any_ticket(shop, rng)
    status, body = shop.panel("POST", f"/api/tickets/{ticket}/respostas", {"mensagem": "Estamos vendo."})
    if _gone(status, body):
        return
    assert status == 201, body
    with shop.lock:
        shop.replies.append((ticket, body["data"]["id"], "agente"))


def _edit_reply(shop: Shop, rng: random.Random) -> None:
    with shop.lock:
        if not shop.replies:
            return
        ticket, reply, author = rng.choice(shop.replies)
    text = {"mensagem": f"Editada {rng.randrange(1000)}"}
    if author == "cliente":
        status, body = shop.partner("PATCH", f"/api/v1/tickets/{ticket}/respostas/{reply}", text)
    else:
        status, body = shop.panel("PATCH", f"/api/tickets/{ticket}/respostas/{reply}", text)
    assert status == 200 or _gone(status, body), body


def _internal_note(shop: Shop, rng: random.Random) -> None:
    ticket = _any_ticket(shop, rng)
    status, body = shop.panel("POST", f"/api/tickets/{ticket}/respostas", {"mensagem": NOTE, "interna": True})
    assert status == 201 or _gone(status, body), body


def _status(shop: Shop, rng: random.Random) -> None:
    status, body = shop.panel(
        "PATCH", f"/api/tickets/{_any_ticket(shop, rng)}", {"status_id": rng.choice(shop.statuses)}
    )
    assert status == 200 or _gone(status, body), body


def _priority(shop: Shop, rng: random.Random) -> None:
    priority = rng.choice(["baixa", "media", "alta", "urgente"])
    status, body = shop.panel("PATCH", f"/api/tickets/{_any_ticket(shop, rng)}", {"prioridade": priority})
    assert status == 200 or _gone(status, body), body


def _delete(shop: Shop, rng: random.Random) -> None:
    with shop.lock:
        if len(shop.tickets) < 5:
            return
        ticket = shop.tickets.pop(rng.randrange(len(shop.tickets)))
    status, body = shop.panel("DELETE", f"/api/tickets/{ticket}")
    assert status == 200, body
    with shop.lock:
        shop.deleted.append(ticket)


OPERATIONS = [
    (_create, 2),
    (_customer_reply, 2),
    (_agent_reply, 3),
    (_edit_reply, 2),
    (_internal_note, 2),
    (_status, 2),
    (_priority, 1),
    (_delete, 1),
]


def _write(shop: Shop, seed: int, deadline: float) -> None:
    rng = random.Random(seed)
    operations, weights = zip(*OPERATIONS, strict=True)
    try:
        while time.monotonic() < deadline:
            operation = rng.choices(operations, weights)[0]
            operation(shop, rng)
            shop.count(operation.__name__)
    except Exception as error:  # reported by the test
        shop.errors.append(f"writer {seed}: {error!r}")


# --- what the API answers and what the mirror holds ------------------------------------------------


def api_tickets(shop: Shop) -> dict[str, dict]:
    """Every ticket of the organization, each as GET /api/v1/tickets/{id} answers it."""
    ids, page = [], 1
    while True:
        status, body = shop.partner("GET", f"/api/v1/tickets?por_pagina=100&page={page}")
        assert status == 200, body
        ids += [ticket["id"] for ticket in body["data"]["data"]]
        if page >= body["data"]["ultima_pagina"]:
            break
        page += 1
    tickets = {}
    for ticket_id in ids:
        status, body = shop.partner("GET", f"/api/v1/tickets/{ticket_id}")
        assert status == 200, body
        tickets[ticket_id] = body["data"]
    return tickets


def api_events(shop: Shop) -> list[dict]:
    """The whole event feed, in order."""
    events, after = [], ""
    while True:
        status, body = shop.partner("GET", f"/api/v1/eventos?limite=100{after}")
        assert status == 200, body
        events += body["data"]["itens"]
        if not body["data"]["tem_mais"]:
            return events
        after = f"&depois_de={body['data']['proximo']}"


def mirrored(db) -> tuple[dict[str, dict], list[dict]]:
    with sqlite3.connect(db) as connection:
        tickets = {
            ticket_id: json.loads(body) for ticket_id, body in connection.execute("SELECT id, body FROM tickets")
        }
        events = [json.loads(body) for (body,) in connection.execute("SELECT body FROM events ORDER BY position")]
    return tickets, events


# --- the tests -------------------------------------------------------------------------------------


def test_the_example_mirror_run_while_tickets_change_ends_equal_to_the_api(shop, tmp_path):
    db = tmp_path / "mirror.sqlite3"
    for _ in range(5):
        _create(shop, random.Random())
    first = run_mirror(shop, db)
    assert first.returncode == 0, first.stderr
    assert set(mirrored(db)[0]) == set(shop.tickets)

    deadline = time.monotonic() + WRITE_SECONDS
    writers = [threading.Thread(target=_write, args=(shop, seed, deadline)) for seed in range(WRITERS)]
    for writer in writers:
        writer.start()
    rng, runs, killed = random.Random(7), 0, 0
    while time.monotonic() < deadline:
        # Small pages, so that a pass spans many requests and transactions; every other pass is
        # killed (SIGKILL) at a random moment, as a crash would stop it.
        command, environment = mirror_command(shop, db, "--once", "--limit", str(rng.choice([2, 5, 100])))
        process = subprocess.Popen(
            command, env=environment, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        if runs % 2:
            time.sleep(rng.uniform(0.1, 0.6))
            process.send_signal(signal.SIGKILL)
        _, stderr = process.communicate(timeout=120)
        if process.returncode == -signal.SIGKILL:
            killed += 1
        else:
            assert process.returncode == 0, stderr
        runs += 1
    for writer in writers:
        writer.join(timeout=60)
    assert not shop.errors, shop.errors

    last = run_mirror(shop, db)

    assert last.returncode == 0, last.stderr
    tickets, events = mirrored(db)
    expected = api_tickets(shop)
    assert set(tickets) == set(expected), "the mirror has missing or extra tickets"
    assert shop.deleted and not set(shop.deleted) & set(tickets), "a deleted ticket is still in the mirror"
    different = [ticket_id for ticket_id in expected if tickets[ticket_id] != expected[ticket_id]]
    assert not different, f"{len(different)} of {len(expected)} tickets differ from the API, e.g. {different[:3]}"
    feed = api_events(shop)
    assert [event["id"] for event in events] == [event["id"] for event in feed], "events missing, repeated or moved"
    assert events == feed
    assert NOTE not in db.read_bytes().decode("utf-8", "replace")
    # The run proved something: it overlapped writes of every kind, and some passes died midway.
    assert runs >= 4 and killed >= 1, (runs, killed)
    assert {operation.__name__ for operation, _ in OPERATIONS} <= set(shop.done), shop.done
    assert len(expected) >= 10 and len(feed) >= 10, (len(expected), len(feed))
    print(f"{runs} runs ({killed} killed), {sum(shop.done.values())} writes {shop.done}, {len(feed)} events")


def test_an_internal_note_changes_nothing_in_the_mirror(shop, tmp_path):
    db = tmp_path / "mirror.sqlite3"
    _create(shop, random.Random())
    assert run_mirror(shop, db).returncode == 0
    before = mirrored(db)

    _internal_note(shop, random.Random())
    again = run_mirror(shop, db)

    assert again.returncode == 0, again.stderr
    assert "caught up: 0 new events, 0 ticket versions written" in again.stderr
    assert mirrored(db) == before


def test_a_refused_key_stops_the_client_at_once_with_a_clear_message(shop, tmp_path):
    db = tmp_path / "mirror.sqlite3"
    command, environment = mirror_command(shop, db, "--once")
    environment["HELPDESK_API_KEY"] = "hdk_live_" + "x" * 40

    started = time.monotonic()
    result = subprocess.run(command, env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=60)

    assert result.returncode == 3
    assert "HTTP 401 Não autenticado. The API key was refused" in result.stderr
    assert "Traceback" not in result.stderr
    assert time.monotonic() - started < 10  # not retried
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM sync_state").fetchone() == (0,)
