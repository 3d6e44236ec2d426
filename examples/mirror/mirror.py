"""Mirror one organization's help-desk tickets into SQLite through the partner API.

An example to copy and adapt: it needs only `requests` and the standard library.
docs/sync.md (in the service's repository) explains the reasoning; in short, each pass:

1. reads the event feed, GET /api/v1/eventos, after the last event id it stored, and
   records each new event once in the `events` table: what your application reacts to
   (tell the customer an agent answered, ...);
2. follows the change list, GET /api/v1/tickets/alteracoes, from the cursor it stored
   until `tem_mais` is false, writing each ticket as GET /api/v1/tickets/{id} shows it
   into the `tickets` table, and deleting those the list says were deleted (`excluidos`).

Events first, then tickets: once a pass ends, every ticket in the mirror is at least as
new as every event recorded, so code reacting to an event can read its ticket here.

    export HELPDESK_BASE_URL=https://helpdesk.example.com HELPDESK_API_KEY=hdk_live_...
    python mirror.py --db mirror.sqlite3 --once    # catch up, then exit (cron, tests)
    python mirror.py --db mirror.sqlite3           # catch up, then again every 30 s

Exit status: 0 caught up (--once), 1 the service answered an error or stayed unreachable,
2 a wrong command line, 3 the API key was refused (401). Python 3.10 or later.
"""

import argparse
import json
import logging
import os
import random
import sqlite3
import sys
import time
from datetime import datetime, timedelta

import requests

log = logging.getLogger("mirror")

CHANGES = "/api/v1/tickets/alteracoes"
EVENTS = "/api/v1/eventos"
PAGE_SIZE = 100  # the largest `limite` both endpoints accept
TIMEOUT = (5, 30)  # seconds to connect, seconds to wait for an answer
MAX_ATTEMPTS = 8  # per request, for answers that may work later (below)
RETRY_STATUSES = {429, 500, 502, 503, 504}  # rate limit, service or proxy briefly unavailable
# After a cursor stops working (see sync_tickets), restart this much before the newest change
# already mirrored: clocks of the service's machines may differ a little, and a ticket that
# comes twice is harmless (the last version wins).
RESTART_MARGIN = timedelta(minutes=10)

SCHEMA = """
CREATE TABLE IF NOT EXISTS tickets (
    id TEXT PRIMARY KEY,          -- TicketPublico.id
    numero INTEGER NOT NULL,
    atualizado_em TEXT NOT NULL,
    body TEXT NOT NULL            -- the whole TicketPublico as JSON, public replies included
);
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY, -- the order events were recorded in (the feed's, when only it writes here)
    id TEXT NOT NULL UNIQUE,      -- the event id, the same as in webhook deliveries
    evento TEXT NOT NULL,
    criado_em TEXT NOT NULL,
    ticket_id TEXT,
    body TEXT NOT NULL            -- the event exactly as the feed (or a webhook) carries it
);
CREATE TABLE IF NOT EXISTS sync_state (
    name TEXT PRIMARY KEY,        -- 'tickets_cursor', 'events_after', 'resync' (while a resync runs)
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS resync_seen (
    id TEXT PRIMARY KEY           -- tickets the running resync received: the others were deleted
);
"""


class ApiError(Exception):
    """An answer other than 200, kept with its envelope."""

    def __init__(self, status: int, body: dict | None):
        self.status = status
        self.body = body or {}
        errors = self.body.get("errors") or {}
        # An error names its field in errors.field; a validation error (422) maps fields to messages.
        self.fields = {errors["field"]} if "field" in errors else set(errors)
        super().__init__(f"HTTP {status}: {self.body.get('message', '(no envelope)')} {json.dumps(errors)}")


class AuthError(ApiError):
    """401: the key is wrong or was revoked. Retrying cannot help; a person has to act."""

    def __str__(self) -> str:
        return (
            f"HTTP 401 {self.body.get('message', '')} The API key was refused (missing, mistyped or revoked): "
            "create a new one in the panel and set HELPDESK_API_KEY."
        )


class Api:
    """GET requests to the partner API: the key, the envelope, and waiting out 429 and 503."""

    def __init__(self, base_url: str, api_key: str, *, session=None, sleep=time.sleep):
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {api_key}"
        self.sleep = sleep

    def get(self, path: str, params: dict) -> dict:
        """The envelope's `data` of a 200; ApiError for anything else once retrying is pointless."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                response = self.session.get(self.base_url + path, params=params, timeout=TIMEOUT)
            except (requests.ConnectionError, requests.Timeout) as error:
                if attempt == MAX_ATTEMPTS:
                    raise
                wait, reason = backoff(attempt), type(error).__name__
            else:
                if response.status_code == 200:
                    return response.json()["data"]
                error = (AuthError if response.status_code == 401 else ApiError)(response.status_code, _json(response))
                if response.status_code not in RETRY_STATUSES or attempt == MAX_ATTEMPTS:
                    raise error
                # 429 and 503 say when to come back; asking sooner only spends the budget again.
                wait, reason = retry_after(response) or backoff(attempt), f"HTTP {response.status_code}"
            log.warning("%s on %s, attempt %d of %d: waiting %.1f s", reason, path, attempt, MAX_ATTEMPTS, wait)
            self.sleep(wait)
        raise AssertionError("unreachable")


def _json(response) -> dict | None:
    try:
        return response.json()
    except ValueError:  # a proxy's HTML error page, say
        return None


def retry_after(response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None


def backoff(attempt: int) -> float:
    """1, 2, 4... up to 60 seconds, with jitter so that many clients do not come back together."""
    return min(60.0, 2.0 ** (attempt - 1)) * random.uniform(0.5, 1.0)  # noqa: S311 (not for security)


# --- the mirror ----------------------------------------------------------------------------------


def open_mirror(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30)
    db.executescript(SCHEMA)
    return db


def state_get(db: sqlite3.Connection, name: str) -> str | None:
    row = db.execute("SELECT value FROM sync_state WHERE name = ?", (name,)).fetchone()
    return row[0] if row else None


def state_set(db: sqlite3.Connection, name: str, value: str) -> None:
    db.execute(
        "INSERT INTO sync_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (name, value),
    )


def sync_events(api: Api, db: sqlite3.Connection, *, limit: int = PAGE_SIZE) -> int:
    """Record the events after the last one stored; how many were new."""
    after = state_get(db, "events_after")
    recorded = 0
    restarted = False
    while True:
        params = {"limite": limit, **({"depois_de": after} if after else {})}
        try:
            page = api.get(EVENTS, params)
        except ApiError as error:
            if error.status != 410 or not after:
                raise
            if restarted:
                # The service keeps every event it lists valid as depois_de for an hour, so a
                # second 410 right after reading from the start should not happen: if it does,
                # end this pass rather than loop, and try again next pass.
                log.warning("event feed: a 410 again after reading from its start; trying again next pass")
                return recorded
            # "Evento fora da retenção.": our last event is older than the service keeps
            # (EVENT_RETENTION_DAYS, 30), so events after it may be gone. Read the feed again
            # from its start (events already recorded are skipped by id); the tickets those lost
            # events were about still come through the change list, which sync_tickets follows next.
            log.warning("event feed answered 410 (%s): reading it again from its start", error.body.get("message"))
            after, restarted = None, True
            continue
        with db:  # the events and the place after them, in one transaction
            for event in page["itens"]:
                ticket_id = (event["data"].get("ticket") or {}).get("id")
                inserted = db.execute(
                    "INSERT OR IGNORE INTO events (id, evento, criado_em, ticket_id, body) VALUES (?, ?, ?, ?, ?)",
                    (event["id"], event["evento"], event["criado_em"], ticket_id, json.dumps(event)),
                )
                recorded += inserted.rowcount
            if page["proximo"]:  # null only while the feed has no event at all
                state_set(db, "events_after", page["proximo"])
        after = page["proximo"]
        if not page["tem_mais"]:
            return recorded


def sync_tickets(api: Api, db: sqlite3.Connection, *, limit: int = PAGE_SIZE) -> int:
    """Follow the change list until it has nothing more; how many ticket versions were written."""
    cursor = state_get(db, "tickets_cursor")  # None the first time: every ticket
    written = 0
    restarted = False
    while True:
        params = {"limite": limit, **({"desde": cursor} if cursor else {})}
        try:
            page = api.get(CHANGES, params)
        except ApiError as error:
            if error.status == 410 and "desde" in error.fields:
                # "Cursor fora da retenção.": we were away longer than the service keeps deleted
                # tickets (EVENT_RETENTION_DAYS, 30), so some deletions may never come. Read every
                # ticket again from the start, then delete what that full pass did not bring.
                log.warning("change list answered 410 (%s): resynchronising", error.body.get("message"))
                with db:
                    db.execute("DELETE FROM resync_seen")
                    state_set(db, "resync", "1")
                    db.execute("DELETE FROM sync_state WHERE name = 'tickets_cursor'")
                cursor = None
                continue
            if error.status == 422 and "desde" in error.fields and cursor and not restarted:
                # The service no longer accepts our cursor (cursors are signed with its
                # SECRET_KEY, and an operator rotated it): start again from a moment instead.
                cursor, restarted = restart_point(db), True
                log.warning("change list: cursor refused; starting again from %s", cursor or "the beginning")
                continue
            raise
        resyncing = state_get(db, "resync") is not None
        with db:  # the tickets, the deletions and the cursor after them, in one transaction: a crash never skips
            for ticket in page["itens"]:
                # At least once: a ticket may come again in this page or a later one. The
                # change list is in order, so the version received last is the current one.
                db.execute(
                    "INSERT INTO tickets (id, numero, atualizado_em, body) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET numero = excluded.numero, "
                    "atualizado_em = excluded.atualizado_em, body = excluded.body",
                    (ticket["id"], ticket["numero"], ticket["atualizado_em"], json.dumps(ticket)),
                )
                if resyncing:
                    db.execute("INSERT OR IGNORE INTO resync_seen (id) VALUES (?)", (ticket["id"],))
            for deleted in page["excluidos"]:  # a deleted ticket never comes back
                db.execute("DELETE FROM tickets WHERE id = ?", (deleted["id"],))
            if resyncing and not page["tem_mais"]:
                db.execute("DELETE FROM tickets WHERE id NOT IN (SELECT id FROM resync_seen)")
                db.execute("DELETE FROM resync_seen")
                db.execute("DELETE FROM sync_state WHERE name = 'resync'")
            state_set(db, "tickets_cursor", page["proximo_cursor"])
        written += len(page["itens"])
        cursor = page["proximo_cursor"]
        if not page["tem_mais"]:
            return written


def restart_point(db: sqlite3.Connection) -> str | None:
    """A moment a little before the newest change mirrored (None, from the start, when empty)."""
    newest = db.execute("SELECT MAX(atualizado_em) FROM tickets").fetchone()[0]
    if newest is None:
        return None
    moment = datetime.fromisoformat(newest.replace("Z", "+00:00")) - RESTART_MARGIN  # 3.10 reads no "Z"
    return moment.isoformat()


def sync(api: Api, db: sqlite3.Connection, *, limit: int = PAGE_SIZE) -> None:
    """One pass: events first, then tickets (see the top of this file)."""
    events = sync_events(api, db, limit=limit)
    tickets = sync_tickets(api, db, limit=limit)
    log.info("caught up: %d new events, %d ticket versions written", events, tickets)


# --- command line --------------------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Mirror an organization's help-desk tickets into SQLite.")
    parser.add_argument("--base-url", default=os.environ.get("HELPDESK_BASE_URL"), help="or HELPDESK_BASE_URL")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("HELPDESK_API_KEY"),
        help="or HELPDESK_API_KEY (better: a command line is visible to other users of the machine)",
    )
    parser.add_argument("--db", default="mirror.sqlite3", help="the SQLite file (default: mirror.sqlite3)")
    parser.add_argument("--once", action="store_true", help="catch up, then exit")
    parser.add_argument("--interval", type=float, default=30.0, help="seconds between passes (default: 30)")
    parser.add_argument("--limit", type=int, default=PAGE_SIZE, help=f"page size, 1..{PAGE_SIZE}")
    args = parser.parse_args(argv)
    if not args.base_url or not args.api_key:
        parser.error("set --base-url and --api-key (or HELPDESK_BASE_URL and HELPDESK_API_KEY)")
    return args


def main(argv=None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args(argv)
    api, db = Api(args.base_url, args.api_key), open_mirror(args.db)
    while True:
        try:
            sync(api, db, limit=args.limit)
        except AuthError as error:
            log.error("%s", error)
            return 3
        except (ApiError, requests.RequestException) as error:
            if args.once:
                log.error("%s", error)
                return 1
            # Nothing is lost: the next pass starts from what the last transaction stored.
            log.error("pass failed, trying again in %.0f s: %s", args.interval, error)
        if args.once:
            return 0
        time.sleep(args.interval)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C between or during passes: what was committed stays
        sys.exit(130)
