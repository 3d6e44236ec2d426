"""The example client of docs/sync.md (examples/mirror/mirror.py) on the paths a running stack
rarely takes: a `depois_de` past the retention (410), a cursor the service stopped accepting
(SECRET_KEY rotated), 429 and 503 with Retry-After, a lost connection and a refused key.

The client speaks HTTP through `requests`; here a transport adapter hands each request to Django's
test client, so the answers are the real views' answers, in the test's database.
tests/e2e/test_example_mirror.py runs it against the running service while tickets change.
"""

import ast
import importlib.util
import json
import logging
import re
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
import requests
from django.core import signing
from django.test import Client
from django.utils import timezone
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

from helpdesk.actors import Actor
from integrations.models import WebhookEvent
from integrations.retention import events_purge_expired
from integrations.services import credential_revoke
from integrations.signing import signed_headers
from tests.api_framework.test_database_outage import database_down
from tests.factories import credential_of, make_agent_reply, make_ticket, status_of
from tickets.models import Ticket, TicketTombstone
from tickets.services import ticket_delete, ticket_update

MIRROR = Path(__file__).resolve().parent.parent / "examples" / "mirror" / "mirror.py"
BASE_URL = "http://testserver"


def _load_mirror():
    spec = importlib.util.spec_from_file_location("example_mirror", MIRROR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mirror = _load_mirror()


class DjangoAdapter(BaseAdapter):
    """requests -> Django's test client -> requests.Response. `down` requests in a row first meet
    a database that refuses connections; `unreachable` ones a connection that cannot be made."""

    def __init__(self):
        super().__init__()
        self.client = Client(raise_request_exception=False)  # as a server: the handler answers
        self.down = self.unreachable = 0
        self.answers: list[tuple[int, str | None]] = []  # (status, Retry-After) of each answer

    def send(self, request, **kwargs):
        if len(self.answers) > 100:
            raise AssertionError("the client keeps asking the same thing: a loop")
        if self.unreachable:
            self.unreachable -= 1
            raise requests.ConnectionError("Connection refused")
        url = urlsplit(request.url)
        headers = {name: value for name, value in request.headers.items() if name.lower() != "content-length"}
        call = lambda: self.client.generic(request.method, f"{url.path}?{url.query}", headers=headers)  # noqa: E731
        if self.down:
            self.down -= 1
            with database_down():
                answer = call()
        else:
            answer = call()
        self.answers.append((answer.status_code, answer.headers.get("Retry-After")))
        response = requests.Response()
        response.status_code, response._content = answer.status_code, answer.content
        response.headers, response.url, response.request = CaseInsensitiveDict(answer.headers), request.url, request
        return response

    def close(self):
        pass


@pytest.fixture
def service():
    """The example's Api and SQLite mirror, talking to this test's service; `waits` is every sleep."""
    adapter = DjangoAdapter()
    session = requests.Session()
    session.mount(BASE_URL, adapter)
    waits: list[float] = []
    return SimpleNamespace(adapter=adapter, session=session, waits=waits, db=mirror.open_mirror(":memory:"))


def client_for(service, key: str, sleep=None):
    return mirror.Api(BASE_URL, key, session=service.session, sleep=sleep or service.waits.append)


def api_tickets(partner) -> dict[str, dict]:
    listed = partner.get("/api/v1/tickets", {"por_pagina": 100}).json()["data"]["data"]
    return {ticket["id"]: partner.get(f"/api/v1/tickets/{ticket['id']}").json()["data"] for ticket in listed}


def mirrored_tickets(db) -> dict[str, dict]:
    return {ticket_id: json.loads(body) for ticket_id, body in db.execute("SELECT id, body FROM tickets")}


def mirrored_event_ids(db) -> list[str]:
    return [event_id for (event_id,) in db.execute("SELECT id FROM events ORDER BY position")]


def feed_ids(organization) -> list[str]:
    events = WebhookEvent.objects.filter(organization=organization).order_by("change_tx", "change_seq")
    return [str(pk) for pk in events.values_list("pk", flat=True)]


def test_the_example_needs_only_requests_and_the_standard_library():
    tree = ast.parse(MIRROR.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}

    assert "requests" in imported and "sqlite3" in imported
    assert imported - {"requests"} <= sys.stdlib_module_names, imported


@pytest.fixture
def history(organization, agent):
    """Two tickets, three agent replies and a resolution: four feed events."""
    tickets = [make_ticket(organization), make_ticket(organization)]
    for number in range(3):
        make_agent_reply(tickets[number % 2], agent, body=f"Resposta {number}")
    ticket_update(ticket=tickets[0], status=status_of(organization, "resolvido"))
    return SimpleNamespace(tickets=tickets, events=feed_ids(organization))


@pytest.mark.parametrize("purged", [False, True], ids=["before-the-purge", "after-the-purge"])
def test_a_depois_de_past_the_retention_reads_the_feed_again_and_records_each_event_once(
    service, api_key, partner, organization, agent, history, purged, caplog
):
    api = client_for(service, api_key)
    mirror.sync(api, service.db)
    assert mirrored_event_ids(service.db) == history.events
    WebhookEvent.objects.filter(pk__in=history.events).update(created_at=timezone.now() - timedelta(days=31))
    if purged:
        assert events_purge_expired() == len(history.events)
    make_agent_reply(history.tickets[1], agent, body="Depois da volta")
    caplog.set_level(logging.WARNING, logger="mirror")

    mirror.sync(api, service.db)

    assert (410, None) in service.adapter.answers
    assert "event feed answered 410 (Evento fora da retenção.): reading it again from its start" in caplog.text
    assert mirrored_event_ids(service.db) == [*history.events, feed_ids(organization)[-1]]
    assert mirror.state_get(service.db, "events_after") == feed_ids(organization)[-1]
    assert mirrored_tickets(service.db) == api_tickets(partner)
    assert service.waits == []


def test_after_a_410_the_feed_starts_within_the_retention_and_the_new_events_come_at_once(
    service, api_key, partner, organization, agent, history, caplog
):
    """Expired events the purge has not removed yet are not at the feed's start: the page read
    after a 410 never ends on an id that is a 410 in turn, so one pass catches up."""
    api = client_for(service, api_key)
    mirror.sync(api, service.db)
    WebhookEvent.objects.filter(pk__in=history.events).update(created_at=timezone.now() - timedelta(days=31))
    reply = make_agent_reply(history.tickets[1], agent, body="Depois da volta")
    caplog.set_level(logging.WARNING, logger="mirror")

    mirror.sync(api, service.db, limit=2)

    assert [status for status, _ in service.adapter.answers].count(410) == 1
    assert "a 410 again" not in caplog.text
    assert mirrored_event_ids(service.db) == [*history.events, feed_ids(organization)[-1]]
    assert mirror.state_get(service.db, "events_after") == feed_ids(organization)[-1]
    assert mirrored_tickets(service.db) == api_tickets(partner)
    assert "Depois da volta" in json.dumps(mirrored_tickets(service.db)[str(reply.ticket_id)])


def test_a_cursor_the_service_no_longer_accepts_restarts_from_the_newest_mirrored_change(
    transactional_db, service, api_key, partner, organization, agent, settings, caplog
):
    # transactional_db: on PostgreSQL a start from a moment never passes a transaction still
    # running, and under `db` the whole test is one.
    tickets = [make_ticket(organization) for _ in range(3)]
    # Two tickets last changed yesterday: a restart "from a moment" leaves them out.
    Ticket.objects.filter(pk__in=[t.pk for t in tickets[:2]]).update(updated_at=timezone.now() - timedelta(days=1))
    api = client_for(service, api_key)
    mirror.sync(api, service.db)
    settings.SECRET_KEY = "rotated-" + settings.SECRET_KEY  # the stored cursor was signed with the old one
    make_agent_reply(tickets[2], agent, body="Depois da troca")
    caplog.set_level(logging.WARNING, logger="mirror")

    written = mirror.sync_tickets(api, service.db)

    assert (422, None) in service.adapter.answers
    assert "change list: cursor refused; starting again from" in caplog.text
    assert written == 1
    assert mirrored_tickets(service.db) == api_tickets(partner)
    cursor = mirror.state_get(service.db, "tickets_cursor")
    assert partner.get("/api/v1/tickets/alteracoes", {"desde": cursor}).status_code == 200


def test_tickets_deleted_from_the_panel_are_deleted_from_the_mirror(service, api_key, partner, organization, agent):
    tickets = [make_ticket(organization) for _ in range(4)]
    api = client_for(service, api_key)
    mirror.sync(api, service.db)
    assert len(mirrored_tickets(service.db)) == 4

    ticket_delete(ticket=tickets[1], actor=Actor.of_agent(agent))
    make_agent_reply(tickets[2], agent, body="Depois")
    ticket_delete(ticket=tickets[3], actor=Actor.of_agent(agent))
    mirror.sync(api, service.db, limit=1)

    assert set(mirrored_tickets(service.db)) == {str(tickets[0].pk), str(tickets[2].pk)}
    assert mirrored_tickets(service.db) == api_tickets(partner)
    deleted_events = service.db.execute("SELECT ticket_id FROM events WHERE evento = 'ticket.excluido'").fetchall()
    assert sorted(ticket_id for (ticket_id,) in deleted_events) == sorted([str(tickets[1].pk), str(tickets[3].pk)])


def test_a_cursor_past_the_retention_resynchronises_and_drops_what_is_gone(
    service, api_key, partner, organization, agent, monkeypatch, settings, caplog
):
    tickets = [make_ticket(organization) for _ in range(3)]
    api = client_for(service, api_key)
    mirror.sync(api, service.db)
    # Away for longer than the retention: a deletion whose tombstone is already purged, a new ticket.
    ticket_delete(ticket=tickets[0], actor=Actor.of_agent(agent))
    TicketTombstone.objects.all().delete()
    new = make_ticket(organization)
    later = signing.time.time() + timedelta(days=settings.EVENT_RETENTION_DAYS + 1).total_seconds()
    monkeypatch.setattr(signing.time, "time", lambda: later)
    caplog.set_level(logging.WARNING, logger="mirror")

    mirror.sync_tickets(api, service.db, limit=1)

    assert (410, None) in service.adapter.answers
    assert "change list answered 410 (Cursor fora da retenção.): resynchronising" in caplog.text
    assert set(mirrored_tickets(service.db)) == {str(tickets[1].pk), str(tickets[2].pk), str(new.pk)}
    assert mirrored_tickets(service.db) == api_tickets(partner)
    assert mirror.state_get(service.db, "resync") is None
    assert service.db.execute("SELECT COUNT(*) FROM resync_seen").fetchone() == (0,)


def test_429_waits_exactly_what_retry_after_says_then_carries_on(
    service, api_key, partner, organization, settings, frozen_rate_limit_clock
):
    settings.PARTNER_RATE_LIMIT = "3/m"
    for _ in range(5):
        make_ticket(organization)

    def sleep(seconds):  # the rate limit's clock moves as the client waits
        service.waits.append(seconds)
        frozen_rate_limit_clock.value += seconds

    mirror.sync(client_for(service, api_key, sleep=sleep), service.db, limit=1)

    limited = [float(retry_after) for status, retry_after in service.adapter.answers if status == 429]
    assert limited and service.waits == limited
    settings.PARTNER_RATE_LIMIT = "1000/m"
    assert mirrored_tickets(service.db) == api_tickets(partner)


def test_503_waits_for_retry_after_and_a_lost_connection_backs_off(
    transactional_db, service, api_key, partner, organization
):
    # transactional_db: the 503 rolls back the transaction it happened in, which under `db` is the test's.
    make_ticket(organization)
    service.adapter.down, service.adapter.unreachable = 1, 1

    mirror.sync(client_for(service, api_key), service.db)

    assert service.adapter.answers[0] == (503, "5")
    assert len(service.waits) == 2 and 0.5 <= service.waits[0] <= 1.0 and service.waits[1] == 5.0
    assert mirrored_tickets(service.db) == api_tickets(partner)


def test_a_revoked_key_fails_at_once_and_stores_nothing(service, api_key, organization):
    make_ticket(organization)
    credential_revoke(credential=credential_of(api_key))

    with pytest.raises(mirror.AuthError) as raised:
        mirror.sync(client_for(service, api_key), service.db)

    assert raised.value.status == 401 and raised.value.fields == {"api_key"}
    assert str(raised.value).startswith("HTTP 401 Não autenticado. The API key was refused")
    assert service.adapter.answers == [(401, None)] and service.waits == []
    assert service.db.execute("SELECT COUNT(*) FROM sync_state").fetchone() == (0,)


def _python_block(guide: Path, defines: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), re.S)
    return next(block for block in blocks if f"def {defines}(" in block)


def test_the_guides_webhook_receiver_and_the_feed_record_each_event_once(service, api_key, partner, history):
    """docs/sync.md's receiver writes into the example's `events` table: whichever way an event
    comes first (a delivery, its retry, the feed), it is recorded and acted upon once."""
    docs = MIRROR.parents[2] / "docs"
    woken: list[bool] = []
    namespace = {"json": json, "wake_up_the_sync": lambda: woken.append(True)}
    exec(_python_block(docs / "webhooks.md", "verify_signature"), namespace)  # the guides' own code
    exec(_python_block(docs / "sync.md", "receive"), namespace)
    event = partner.get("/api/v1/eventos", {"limite": 1}).json()["data"]["itens"][0]
    body, secret = json.dumps(event).encode(), "whsec_" + "A" * 44

    def delivered(raw: bytes) -> int:
        headers = signed_headers(
            secrets=[secret],
            delivery_id=str(uuid.uuid4()),
            event_kind=event["evento"],
            timestamp=int(time.time()),
            body=body,
        )
        return namespace["receive"](service.db, secret, raw, headers)

    assert delivered(body) == 200
    assert delivered(body) == 200  # a retry
    assert delivered(body.replace(b"ticket", b"tickex")) == 401  # not what was signed
    recorded = mirror.sync_events(client_for(service, api_key), service.db)

    assert woken == [True]
    assert recorded == len(history.events) - 1
    assert mirrored_event_ids(service.db) == history.events
