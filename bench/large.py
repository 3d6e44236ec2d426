"""The bench's "large" section: one organization measured at 1,000 tickets, grown (set-based,
bench.bulk) to 1,000,000, and to 10,000,000 with --huge, and measured again at each size.

The organization is its own (created with the operator commands), so the other sections' numbers do
not move. Each row is the product alone under wrk at 16 connections: the targets are ratios of the
product to itself at another size (docs/performance.md, "Big organizations").
"""

import http.client
import json
import secrets
import time

import psycopg

from bench.loadgen import Client, Endpoint, run_wrk
from bench.stack import log

SIZES = (1_000, 1_000_000)
HUGE = 10_000_000
CONNECTIONS = 16
DEEP_PAGE = 20_000
PER_PAGE = 25
# ~10% of the bulk tickets hold it (bench.seed.SUBJECTS: one subject and one description in 20); the
# rare term is one bulk ticket's subject (and its number).
COMMON_TERM = "reembolso"
RARE_TERM = "200777"
# Each row against the same row at 1,000 tickets (or, for the deep page, page 2 at the same size).
TARGETS = {
    "plain": 0.8,
    "prioridade": 0.8,
    "status": 0.8,
    "external_id": 0.8,
    "busca_10": 0.3,
}
DEEP_OVER_PAGE_2_MIN = 0.8
FIRST_REQUEST_TIMEOUT = 120  # seconds; longer than any statement may run (the server's own limits answer first)
NEIGHBOUR_ROWS = {"neighbour_busca"}  # asked with the seeded organization's key, not the grown one's


class LargeOrganization:
    def __init__(self, bench):
        self.bench = bench
        self.email = "grande@bench.example"
        self.password = "Bench-" + secrets.token_urlsafe(16)

    def command(self, *args: str) -> dict:
        return json.loads(self.bench.python("manage.py", *args, "--json"))

    def create(self) -> None:
        created = self.command(
            "create_organization",
            "--name",
            "Bench Grande",
            "--admin-email",
            self.email,
            "--admin-password",
            self.password,
        )
        self.organization_id = created["organization_id"]
        self.api_key = self.command("create_api_key", "--organization", self.organization_id, "--name", "grande")["key"]
        for n in range(3):
            self.command(
                "create_agent",
                "--organization",
                self.organization_id,
                "--name",
                f"Atendente {n}",
                "--email",
                f"grande{n}@bench.example",
            )

    def login(self) -> tuple[str, str]:
        client = Client(self.bench.web_port)
        status, data = client.request("POST", "/api/auth/login", {"email": self.email, "senha": self.password})
        if status != 200:
            raise RuntimeError(f"panel login answered {status}: {data}")
        token = data["data"]["access_token"]
        status, data = client.request("GET", "/api/ticket-status", token=token)
        client.close()
        if status != 200:
            raise RuntimeError(f"the status list answered {status}: {data}")
        in_progress = next(item["id"] for item in data["data"] if item["categoria"] == "em_andamento")
        return token, in_progress

    def grow(self, tickets: int) -> float:
        log(f"large: growing its organization to {tickets:,} tickets (generate_series)")
        started = time.monotonic()
        self.bench.python(
            "-m", "bench.bulk", "--organization", self.organization_id, "--tickets", str(tickets), timeout=7200
        )
        seconds = time.monotonic() - started
        log(f"  done in {seconds:.1f} s")
        return seconds

    def endpoints(self, in_progress: str) -> list[Endpoint]:
        tickets = f"/api/v1/tickets?por_pagina={PER_PAGE}"
        return [
            Endpoint("plain", "plain list", "GET", tickets),
            Endpoint("prioridade", "prioridade=alta", "GET", f"{tickets}&prioridade=alta"),
            Endpoint(
                "status",
                "status=<em andamento> (panel)",
                "GET",
                f"/api/tickets?por_pagina={PER_PAGE}&status={in_progress}",
                panel=True,
            ),
            Endpoint("external_id", "external_id=bulk-500", "GET", f"{tickets}&external_id=bulk-500"),
            Endpoint("busca_10", f"busca={COMMON_TERM} (10%)", "GET", f"{tickets}&busca={COMMON_TERM}"),
            Endpoint("busca_rare", f"busca={RARE_TERM} (rare)", "GET", f"{tickets}&busca={RARE_TERM}"),
            Endpoint("page_2", "page=2", "GET", f"{tickets}&page=2"),
            Endpoint("page_deep", f"page={DEEP_PAGE:,}", "GET", f"{tickets}&page={DEEP_PAGE}"),
            # The bench's seeded organization (1,000 tickets) searching beside the grown one: what another
            # tenant's rows cost a small organization's search (the trigram indexes are not per organization).
            Endpoint(
                "neighbour_busca",
                f"busca={COMMON_TERM}, an organization of 1,000 beside it",
                "GET",
                f"{tickets}&busca={COMMON_TERM}",
            ),
        ]

    def key_for(self, endpoint: Endpoint) -> str:
        return self.bench.seed_data["api_key"] if endpoint.key in NEIGHBOUR_ROWS else self.api_key

    def warm_up(self) -> None:
        """The web processes have just started: wrk on every row first, unrecorded, so the first size's rows
        are not measured on cold workers (a run measured its first row at 1,000 tickets at 0.6 of its
        warm rate). Once, before the first size: each size's own first request stays cold."""
        log(f"large: warming up the web processes ({self.bench.options.warmup:g} s of wrk per row)")
        token, in_progress = self.login()
        for endpoint in self.endpoints(in_progress):
            run_wrk(
                port=self.bench.web_port,
                endpoint=endpoint,
                connections=CONNECTIONS,
                duration=self.bench.options.warmup,
                token=token if endpoint.panel else self.key_for(endpoint),
                tag=f"large-warm-up-{endpoint.key}",
            )
            self.bench.wait_idle(self.bench.web_port)

    def measure(self, size: int) -> dict:
        token, in_progress = self.login()
        rows = {}
        for endpoint in self.endpoints(in_progress):
            credential = token if endpoint.panel else self.key_for(endpoint)
            recounted_before = self.counts_checked_at()
            first = self.first_request(endpoint, credential)
            result = run_wrk(
                port=self.bench.web_port,
                endpoint=endpoint,
                connections=CONNECTIONS,
                duration=self.bench.options.duration,
                token=credential,
                tag=f"large-{size}-{endpoint.key}",
            )
            self.bench.wait_idle(self.bench.web_port)
            recounted = self.counts_checked_at() != recounted_before
            rows[endpoint.key] = {"label": endpoint.label, **result, **first, "beat_recounted": recounted}
            log(
                f"  {size:>10,} tickets  {endpoint.label:<32} {result['rps']:7.0f} req/s "
                f"(p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, errors {result['errors']}; "
                f"first request {first['first_ms']:.0f} ms, {first['first_status']}"
                f"{'; beat recounted the organization meanwhile' if recounted else ''})"
            )
        return rows

    def first_request(self, endpoint: Endpoint, credential: str) -> dict:
        """One request alone before wrk, timed: what the first caller pays on pages not yet read (a search's
        total is counted here, once, and wrk then measures it kept, as it stays while nothing changes)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.bench.web_port, timeout=FIRST_REQUEST_TIMEOUT)
        started = time.monotonic()
        try:
            connection.request(endpoint.method, endpoint.path, headers={"Authorization": f"Bearer {credential}"})
            response = connection.getresponse()
            response.read()
            status = response.status
        except TimeoutError:
            status = None  # no answer in FIRST_REQUEST_TIMEOUT; the request is not sent again
        finally:
            connection.close()
        return {"first_ms": (time.monotonic() - started) * 1000, "first_status": status}

    def counts_checked_at(self):
        """When beat last recounted the grown organization (tickets.counts): a recount reads every ticket of
        it, so a row measured while one ran says so."""
        with psycopg.connect(self.bench.pg.url("postgres"), autocommit=True) as connection:
            row = connection.execute(
                "SELECT counts_checked_at FROM tickets_ticketsequence WHERE organization_id = %s::uuid",
                [self.organization_id],
            ).fetchone()
        return row[0] if row else None


def large(bench, *, huge: bool) -> dict:
    """Rows at each size, and the ratios the targets read."""
    organization = LargeOrganization(bench)
    log("large: an organization of its own (operator commands)")
    organization.create()
    sizes = (*SIZES, HUGE) if huge else SIZES
    measured, grown = {}, {}
    for size in sizes:
        grown[size] = organization.grow(size)
        if size == sizes[0]:
            organization.warm_up()
        measured[size] = organization.measure(size)
    base = measured[SIZES[0]]
    ratios = {}
    for size in sizes[1:]:
        rows = measured[size]
        ratios[size] = {
            key: _ratio(rows[key], base[key]) for key in (*TARGETS, "busca_rare", "page_2", *NEIGHBOUR_ROWS)
        }
        ratios[size]["deep_over_page_2"] = _ratio(rows["page_deep"], rows["page_2"])
    return {
        "sizes": list(sizes),
        "rows": {str(size): rows for size, rows in measured.items()},
        "grow_seconds": {str(size): round(seconds, 1) for size, seconds in grown.items()},
        "ratios": {str(size): values for size, values in ratios.items()},
    }


def _ratio(a: dict, b: dict) -> float | None:
    return a["rps"] / b["rps"] if b["rps"] else None
