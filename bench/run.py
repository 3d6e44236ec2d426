"""`make bench`: the service as production runs it, under wrk, against a bare Django reference.

    .venv/bin/python -m bench.run [--strict] [--duration S]

Installs PostgreSQL, Redis and wrk from Debian when missing, starts its own
PostgreSQL (pg_stat_statements) and Redis on free ports, seeds them with the
product's operator commands and services, runs the Procfile's web, worker and
beat lines with production settings and the reference app with the same web
command line, then measures: wrk at 16 and 64 connections (reference and
product back to back, reads before writes), SQL statements per request (quiet,
one request at a time), webhook latency and drain, and busca and the lookups by
the partner's ids at 100,000 tickets. Prints one report and writes
var/bench/latest.json and var/bench/latest.md. See docs/performance.md.
"""

import argparse
import atexit
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from bench import report
from bench.large import large
from bench.loadgen import Client, Endpoint, StatementCounter, run_wrk, sql_per_request
from bench.neighbours import api_burst, noisy_neighbour
from bench.stack import (
    ROOT,
    STARTED,
    VENV_BIN,
    PostgreSQL,
    Supervisor,
    ensure_packages,
    http_status,
    log,
    reference_web_command,
    start_redis,
    wait_until,
)
from bench.webhooks import Receiver, burst, steady
from tools.ports import free_port, port_open
from tools.runner import read_procfile

ROLES = {
    "admin": "bench_admin",  # migrations, seeding, the bench's own queries
    "web": "bench_web",  # the product's web process: the SQL counted per request
    "reference": "bench_ref",  # the reference's web process
    "worker": "bench_worker",
    "beat": "bench_beat",
}
UNLIMITED = "1000000000/m"
CONNECTIONS = (16, 64)
BULK_TICKETS = 100_000
MANY_ORGANIZATIONS = (100, 10_000)
# The 5,000-event burst goes to this many webhooks in turn: one webhook's attempts in flight are capped
# (WEBHOOK_MAX_IN_FLIGHT), so a single one measures its cap, not the service.
BURST_WEBHOOKS = 8
OUT_DIR = ROOT / "var" / "bench"
# What a run measures (--only picks some): the endpoints under wrk and their SQL, webhook latency and drain,
# many tenants (a slow partner, an API burst), busca and the lookups (external_id=, solicitante_external_id=) at
# 100,000 tickets, an organization grown to 1,000,000 (10,000,000 with --huge), beat's periodic work at 100 and
# at 10,000 organizations.
SECTIONS = ("endpoints", "webhooks", "tenants", "busca", "large", "orgs")
# Settings the bench sets itself; the rest of the environment (WEB_CONCURRENCY, ...) passes through.
OWN_VARIABLES = {
    "PORT",
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "DATA_DIR",
    "DEBUG",
    "ALLOWED_HOSTS",
    "SECRET_KEY",
    "JWT_SIGNING_KEY",
    "PARTNER_RATE_LIMIT",
    "PANEL_RATE_LIMIT",
    "LOGIN_RATE_LIMIT",
    "WEBHOOK_ALLOW_INSECURE_URLS",
}


class Bench:
    def __init__(self, supervisor: Supervisor, options):
        self.supervisor = supervisor
        self.options = options
        self.workdir = supervisor.workdir
        self.secret_key = secrets.token_urlsafe(50)
        self.jwt_key = secrets.token_urlsafe(50)
        # Read as `make run` reads it.
        self.procfile = read_procfile(ROOT / "Procfile")
        for name in ("web", "worker"):
            if name not in self.procfile:
                raise RuntimeError(f"the Procfile has no {name}: line")

    # --- environment and processes ---------------------------------------------

    def env(self, role: str, **extra: str) -> dict:
        env = {name: value for name, value in os.environ.items() if name not in OWN_VARIABLES}
        env.update(
            PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
            DJANGO_SETTINGS_MODULE="config.settings",
            DATA_DIR=str(self.workdir / "data"),
            DATABASE_URL=self.pg.url(ROLES[role]),
            REDIS_URL=f"redis://127.0.0.1:{self.redis_port}/0",
            DEBUG="false",
            ALLOWED_HOSTS="127.0.0.1,localhost",
            SECRET_KEY=self.secret_key,
            JWT_SIGNING_KEY=self.jwt_key,
            PARTNER_RATE_LIMIT=UNLIMITED,
            # One partner at 16 and 64 connections is what the endpoint rows measure; the many-tenants
            # section restarts the web server with the production default for its API burst.
            PARTNER_MAX_CONCURRENT_REQUESTS="0",
            PANEL_RATE_LIMIT=UNLIMITED,
            LOGIN_RATE_LIMIT=UNLIMITED,
            WEBHOOK_ALLOW_INSECURE_URLS="true",
            # The bench's receiver listens on this machine, over http: allowed here on purpose.
            SILENCED_SYSTEM_CHECKS="integrations.E002",
        )
        env.update(extra)
        return env

    def python(self, *args: str, role: str = "admin", timeout: float = 900) -> str:
        result = subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=self.env(role), capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
        return result.stdout

    def start_worker(self) -> None:
        self.supervisor.spawn_shell("worker", self.procfile["worker"], self.env("worker"))
        log_path = self.supervisor.log_path("worker")
        mark = log_path.stat().st_size if log_path.exists() else 0

        def ready() -> bool:
            with open(log_path, "rb") as handle:
                handle.seek(mark)
                return b" ready." in handle.read()

        wait_until(ready, timeout=60, what="the Celery worker", alive=lambda: self.supervisor.check_alive("worker"))

    # --- phases ------------------------------------------------------------------

    def start_databases(self) -> None:
        log("starting PostgreSQL (pg_stat_statements, track_utility on) and Redis on free ports")
        self.pg = PostgreSQL(self.supervisor)
        self.pg.start()
        with psycopg.connect(self.pg.url("postgres", "postgres"), autocommit=True) as conn:
            for role in ROLES.values():
                # Roles only tell the servers' statements apart; this cluster lives for one run.
                conn.execute(f"CREATE ROLE {role} LOGIN SUPERUSER")
            conn.execute(f"CREATE DATABASE helpdesk OWNER {ROLES['admin']}")
        with psycopg.connect(self.pg.url("postgres"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION pg_stat_statements")
        self.redis_port = start_redis(self.supervisor)
        self.receiver = Receiver(free_port())
        self.supervisor.spawn(
            "receiver", [sys.executable, "-m", "bench.receiver", "--port", str(self.receiver.port)], self.env("admin")
        )
        wait_until(
            lambda: port_open(self.receiver.port),
            timeout=15,
            what="the webhook receiver",
            alive=lambda: self.supervisor.check_alive("receiver"),
        )

    def seed(self) -> None:
        log("migrating")
        self.python("manage.py", "migrate", "--noinput")
        log("seeding: organization, API key and 30 agents (operator commands), 1,000 tickets (services)")
        seed_file = self.workdir / "seed.json"
        self.python("-m", "bench.seed", "--out", str(seed_file), "--workdir", str(self.workdir))
        self.seed_data = json.loads(seed_file.read_text())

    def start_web(self, **extra: str) -> None:
        self.supervisor.spawn_shell("web", self.procfile["web"], self.env("web", PORT=str(self.web_port), **extra))
        wait_until(
            lambda: http_status(f"http://127.0.0.1:{self.web_port}/api/health") == 200,
            timeout=60,
            what="the web server's /api/health",
            alive=lambda: self.supervisor.check_alive("web"),
        )

    def restart_web(self, **extra: str) -> None:
        self.supervisor.stop("web")
        self.start_web(**extra)

    def start_servers(self) -> None:
        self.web_port, self.ref_port = free_port(), free_port()
        web = self.procfile["web"]
        log(f"starting web (Procfile): {web}")
        self.supervisor.spawn_shell("web", web, self.env("web", PORT=str(self.web_port)))
        log("starting the reference with the same command line, bench.reference.wsgi in place of config.wsgi")
        self.supervisor.spawn_shell(
            "reference",
            reference_web_command(web),
            self.env(
                "reference",
                PORT=str(self.ref_port),
                DJANGO_SETTINGS_MODULE="bench.reference.settings",
                BENCH_ORGANIZATION_ID=self.seed_data["organization_id"],
            ),
        )
        log(f"starting worker (Procfile): {self.procfile['worker']}")
        self.start_worker()
        if "beat" in self.procfile:
            log(f"starting beat (Procfile): {self.procfile['beat']}")
            self.supervisor.spawn_shell("beat", self.procfile["beat"], self.env("beat"))
        wait_until(
            lambda: http_status(f"http://127.0.0.1:{self.web_port}/api/health") == 200,
            timeout=60,
            what="the web server's /api/health",
            alive=lambda: self.supervisor.check_alive("web"),
        )
        wait_until(
            lambda: http_status(f"http://127.0.0.1:{self.ref_port}/api/v1/atendentes") == 200,
            timeout=60,
            what="the reference server",
            alive=lambda: self.supervisor.check_alive("reference"),
        )

    def login(self) -> str:
        client = Client(self.web_port)
        status, data = client.request(
            "POST",
            "/api/auth/login",
            {"email": self.seed_data["admin_email"], "senha": self.seed_data["admin_password"]},
        )
        client.close()
        if status != 200:
            raise RuntimeError(f"panel login answered {status}: {data}")
        return data["data"]["access_token"]

    def define_endpoints(self) -> list[Endpoint]:
        seed = self.seed_data
        term = seed["search_term"]
        detail_paths = tuple(f"/api/v1/tickets/{ticket}" for ticket in seed["read_ids"])
        reply_paths = tuple(f"/api/v1/tickets/{ticket}/respostas" for ticket in seed["reply_ids"])
        new_ticket = {
            "assunto": "Pedido atrasado",
            "descricao": "O pedido não chegou no prazo combinado.",
            "prioridade": "media",
            "solicitante": {"nome": "Cliente SQL", "email": "cliente-sql@bench.example", "external_id": "bench-sql"},
        }
        repeated = {
            "assunto": "Pedido repetido",
            "descricao": "Mesmo pedido, enviado de novo.",
            "external_id": seed["repeated_external_id"],
            "solicitante": {"nome": "Cliente Repetido", "external_id": "bench-repeat-customer"},
        }
        # Issue 22: the same create with 5 tags and a value of each of the 5 custom fields (bench/seed.py). The lua
        # script appends this JSON fragment to its body.
        tags = ["Cliente VIP", "loja-centro", "erp", "Urgente", "primeira compra"]
        fields = {"pedido": "PED-12345", "loja": "loja-7", "valor": "199.90", "entrega": "2026-12-01", "vip": True}
        labelled = "," + json.dumps({"tags": tags, "campos": fields}, ensure_ascii=False)[1:-1]
        return [
            Endpoint("list_25", "GET /api/v1/tickets?por_pagina=25", "GET", "/api/v1/tickets?por_pagina=25"),
            Endpoint("list_100", "GET /api/v1/tickets?por_pagina=100", "GET", "/api/v1/tickets?por_pagina=100"),
            Endpoint(
                "search",
                f"GET /api/v1/tickets?busca={term}&por_pagina=25",
                "GET",
                f"/api/v1/tickets?busca={term}&por_pagina=25",
            ),
            Endpoint(
                "detail", "GET /api/v1/tickets/{id}", "GET", detail_paths[0], args=detail_paths, paths=detail_paths
            ),
            Endpoint("agents", "GET /api/v1/atendentes", "GET", "/api/v1/atendentes"),
            Endpoint(
                "panel_list", "GET /api/tickets?por_pagina=25 (panel)", "GET", "/api/tickets?por_pagina=25", panel=True
            ),
            Endpoint(
                "create",
                "POST /api/v1/tickets (new)",
                "POST",
                "/api/v1/tickets",
                script="post_ticket.lua",
                body=new_ticket,
                sql_fresh_body=True,
            ),
            Endpoint(
                "create_tags_fields",
                "POST /api/v1/tickets (new, 5 tags, 5 fields)",
                "POST",
                "/api/v1/tickets",
                script="post_ticket.lua",
                args=(labelled,),
                body={**new_ticket, "tags": tags, "campos": fields},
                sql_fresh_body=True,
            ),
            Endpoint(
                "repeat",
                "POST /api/v1/tickets (repeated external_id)",
                "POST",
                "/api/v1/tickets",
                script="post_repeat.lua",
                args=(seed["repeated_external_id"],),
                body=repeated,
            ),
            Endpoint(
                "reply",
                "POST /api/v1/tickets/{id}/respostas",
                "POST",
                reply_paths[0],
                script="post_reply.lua",
                args=tuple(seed["reply_ids"]),
                body={"mensagem": "Alguma novidade?"},
                paths=reply_paths,
            ),
        ]

    def token_for(self, endpoint: Endpoint) -> str:
        return self.panel_token if endpoint.panel else self.seed_data["api_key"]

    def sides(self):
        return {"product": self.web_port, "reference": self.ref_port}

    def wait_idle(self, port: int) -> None:
        """wrk stops with requests still queued in the server: the next run must not inherit them.

        A health request queues behind them, so its answer means the backlog is gone."""
        status = http_status(f"http://127.0.0.1:{port}/api/health", timeout=120)
        if status != 200:
            raise RuntimeError(f"the server on port {port} answered /api/health with {status} after a run")

    def warm_up(self, endpoints: list[Endpoint]) -> None:
        log(f"warming up both servers ({self.options.warmup:g} s of wrk per endpoint)")
        self.panel_token = self.login()
        for endpoint in endpoints:
            for side, port in self.sides().items():
                result = run_wrk(
                    port=port,
                    endpoint=endpoint,
                    connections=16,
                    duration=self.options.warmup,
                    token=self.token_for(endpoint),
                    tag=f"warm-{endpoint.key}-{side}",
                )
                self.wait_idle(port)
                if result["errors"]:
                    log(
                        f"  warning: {side} {endpoint.label}: {result['errors']} errors in warm-up "
                        f"{result['error_detail']}"
                    )

    def count_sql(self) -> tuple[dict, dict]:
        n = self.options.sql_requests
        log(f"SQL statements per request: {n} sequential requests per endpoint, pg_stat_statements by role")
        counter = StatementCounter(self.pg.url("postgres"))
        sql, detail = {}, {}
        try:
            for endpoint in self.endpoints:
                sql[endpoint.key], detail[endpoint.key] = {}, {}
                for side, port in self.sides().items():
                    client = Client(port)
                    role = ROLES["web" if side == "product" else "reference"]
                    per_request, statements = sql_per_request(
                        counter=counter,
                        role=role,
                        client=client,
                        endpoint=endpoint,
                        token=self.token_for(endpoint),
                        requests=n,
                        tag=f"{endpoint.key}-{side}",
                    )
                    client.close()
                    sql[endpoint.key][side] = per_request
                    detail[endpoint.key][side] = [
                        {"calls_per_request": round(calls / n, 2), "query": query[:300]} for calls, query in statements
                    ]
                log(
                    f"  {endpoint.label}: product {sql[endpoint.key]['product']:.1f}, "
                    f"reference {sql[endpoint.key]['reference']:.1f}"
                )
        finally:
            counter.close()
        return sql, detail

    def pair(self, endpoint: Endpoint, connections: int, order: int, tag: str) -> dict:
        """Reference and product back to back (the order alternates), so drift hits both."""
        sides = list(self.sides().items())
        if order % 2:
            sides.reverse()
        runs = {}
        for side, port in sides:
            runs[side] = run_wrk(
                port=port,
                endpoint=endpoint,
                connections=connections,
                duration=self.options.duration,
                token=self.token_for(endpoint),
                tag=f"{tag}-{endpoint.key}-{side[:3]}-{connections}",
            )
            self.wait_idle(port)
        product, reference = runs["product"], runs["reference"]
        ratio = _ratio(product, reference)
        log(
            f"  {endpoint.label} @{connections}: product {product['rps']:.0f} req/s "
            f"(p50 {product['p50_ms']:.1f} ms, p99 {product['p99_ms']:.1f} ms, errors {product['errors']}), "
            f"reference {reference['rps']:.0f} req/s, ratio {report.fmt(ratio, 2)}"
        )
        for side, result in runs.items():
            if result["errors"]:
                log(f"    {side} errors: {result['error_detail']}")
        return {"product": product, "reference": reference, "ratio": ratio}

    def load(self) -> list[dict]:
        """Reads at every connection count, then writes: every read sees the seeded 1,000 tickets."""
        rows = []
        for kind, endpoints in (
            ("reads", [endpoint for endpoint in self.endpoints if endpoint.method == "GET"]),
            ("writes", [endpoint for endpoint in self.endpoints if endpoint.method != "GET"]),
        ):
            self.warm_up(endpoints)
            for connections in CONNECTIONS:
                log(
                    f"wrk, {kind} at {connections} connections, {self.options.duration:g} s per run, "
                    "reference and product back to back"
                )
                self.panel_token = self.login()
                for order, endpoint in enumerate(endpoints):
                    runs = self.pair(endpoint, connections, order, "load")
                    rows.append({"key": endpoint.key, "label": endpoint.label, "connections": connections, **runs})
        position = {endpoint.key: n for n, endpoint in enumerate(self.endpoints)}
        return sorted(rows, key=lambda row: (row["connections"], position[row["key"]]))

    def webhooks(self) -> dict:
        log("webhooks: one webhook on the organization, pointing at the local receiver")
        token = self.login()
        client = Client(self.web_port)
        status, data = client.request(
            "POST",
            "/api/webhooks",
            {"nome": "Bench", "url": self.receiver.url, "eventos": ["ticket.resposta_publica"]},
            token=token,
        )
        client.close()
        if status not in (200, 201):
            raise RuntimeError(f"creating the webhook answered {status}: {data}")
        ids = self.seed_data["all_ticket_ids"]
        rate, seconds = self.options.webhook_rate, self.options.webhook_seconds
        log(f"  steady: {rate:g} agent replies/s for {seconds:g} s (panel API)")
        steady_result = steady(
            web_port=self.web_port,
            token=token,
            receiver=self.receiver,
            ticket_ids=ids[200:400],
            rate=rate,
            seconds=seconds,
        )
        log(
            f"  steady: {steady_result['delivered']} delivered, event -> receiver "
            f"p50 {steady_result['latency_p50_s'] or 0:.3f} s, p95 {steady_result['latency_p95_s'] or 0:.3f} s, "
            f"p99 {steady_result['latency_p99_s'] or 0:.3f} s"
        )
        ticket_file = self.workdir / "burst-tickets.json"
        ticket_file.write_text(json.dumps(ids[400:]))
        webhooks_file = self.workdir / "burst-webhooks.json"
        webhooks_file.write_text(json.dumps([data["data"]["id"], *self.more_webhooks(token, BURST_WEBHOOKS - 1)]))
        log(f"  burst: {self.options.burst} events over {BURST_WEBHOOKS} webhooks (their receivers on one server)")
        counter = StatementCounter(self.pg.url("postgres"))
        counter.reset()
        burst_result = burst(
            supervisor=self.supervisor,
            start_worker=self.start_worker,
            env=self.env("admin"),
            receiver=self.receiver,
            ticket_file=ticket_file,
            count=self.options.burst,
            drain_cap=self.options.drain_cap,
            webhooks_file=webhooks_file,
        )
        # What the worker's database work per delivery is (the writers of the burst run as another role).
        burst_result["worker_statements_per_delivery"] = counter.calls(ROLES["worker"]) / max(
            1, burst_result["delivered_unique"]
        )
        burst_result["worker_heaviest_statements"] = counter.heaviest(ROLES["worker"])
        counter.close()
        if burst_result["drained"]:
            log(
                f"  burst: {burst_result['events']} deliveries in {burst_result['drain_seconds']:.1f} s "
                f"({burst_result['deliveries_per_second']:.0f}/s)"
            )
        else:
            log(
                f"  burst: NOT drained, {burst_result['delivered_unique']} of {burst_result['events']} "
                f"in {burst_result['drain_cap_seconds']:g} s"
            )
        return {"steady": steady_result, "burst": burst_result}

    def neighbours(self) -> dict:
        log("many tenants: a slow and a timing-out partner beside a healthy one; one organization's API burst")
        noisy = noisy_neighbour(python=self.python, web_port=self.web_port, receiver=self.receiver)
        # The environment's value when given (to try another), else the production default.
        default = os.environ.get("PARTNER_MAX_CONCURRENT_REQUESTS") or settings_default(
            "PARTNER_MAX_CONCURRENT_REQUESTS"
        )
        log(f"  the web server again, with PARTNER_MAX_CONCURRENT_REQUESTS={default}")
        self.restart_web(PARTNER_MAX_CONCURRENT_REQUESTS=default)
        burst_result = api_burst(python=self.python, web_port=self.web_port)
        self.restart_web()
        # The web server's own default (config/settings.py): the machine's cores.
        cores = int(os.environ.get("PARTNER_CONCURRENT_REQUESTS") or os.cpu_count() or 1)
        api_burst_result = {**burst_result, "max_concurrent_requests": int(default), "concurrent_requests": cores}
        return {"noisy_neighbour": noisy, "api_burst": api_burst_result}

    def more_webhooks(self, token: str, count: int) -> list[str]:
        """`count` more webhooks of the organization (their own paths on the receiver), as other partners."""
        client, ids = Client(self.web_port), []
        for n in range(count):
            status, data = client.request(
                "POST",
                "/api/webhooks",
                {"nome": f"Bench {n}", "url": f"{self.receiver.url}/{n}", "eventos": ["ticket.resposta_publica"]},
                token=token,
            )
            if status not in (200, 201):
                raise RuntimeError(f"creating a webhook answered {status}: {data}")
            ids.append(data["data"]["id"])
        client.close()
        return ids

    def many_organizations(self) -> dict:
        """Beat's periodic tasks, each run in process, at 100 organizations and at 10,000 (bench.many_orgs)."""
        runs = []
        for count in MANY_ORGANIZATIONS:
            log(f"many organizations: {count:,} (one webhook and three tickets each), beat's tasks timed")
            result = json.loads(self.python("-m", "bench.many_orgs", "--organizations", str(count)).splitlines()[-1])
            log(f"  one run of every beat task: {result['run_ms']:.1f} ms ({result['tasks_ms']})")
            runs.append(result)
        return {"runs": runs, "ratio": runs[-1]["run_ms"] / runs[0]["run_ms"] if runs[0]["run_ms"] else None}

    def busca_100k(self, rows: list[dict]) -> tuple[list[dict], dict]:
        by_key = {(row["key"], row["connections"]): row for row in rows}
        endpoints = {endpoint.key: endpoint for endpoint in self.endpoints}
        if ("list_25", 16) not in by_key:  # the endpoints section did not run: measure the 1,000 here
            self.warm_up([endpoints["list_25"], endpoints["search"]])
            by_key[("list_25", 16)] = self.pair(endpoints["list_25"], 16, 0, "1k")
            by_key[("search", 16)] = self.pair(endpoints["search"], 16, 1, "1k")
        list_1k, search_1k = by_key[("list_25", 16)], by_key[("search", 16)]
        busca = [
            {"label": "plain list (por_pagina=25)", "tickets": 1000, **_runs(list_1k), "vs_list": 1.0},
            {
                "label": f"busca={self.seed_data['search_term']}",
                "tickets": 1000,
                **_runs(search_1k),
                "vs_list": _ratio(search_1k["product"], list_1k["product"]),
            },
        ]
        log(f"growing the organization to {BULK_TICKETS:,} tickets (generate_series)")
        started = time.monotonic()
        output = self.python(
            "-m", "bench.bulk", "--organization", self.seed_data["organization_id"], "--tickets", str(BULK_TICKETS)
        )
        log(f"  done in {time.monotonic() - started:.1f} s")
        self.panel_token = self.login()
        plain = self.pair(endpoints["list_25"], 16, 0, "100k")
        search = self.pair(endpoints["search"], 16, 1, "100k")
        busca += [
            {"label": "plain list (por_pagina=25)", "tickets": BULK_TICKETS, **plain, "vs_list": 1.0},
            {
                "label": f"busca={self.seed_data['search_term']}",
                "tickets": BULK_TICKETS,
                **search,
                "vs_list": _ratio(search["product"], plain["product"]),
            },
        ]
        ratios = {"search_over_list_1k": busca[1]["vs_list"], "search_over_list_100k": busca[3]["vs_list"]}
        # The partner's lookups by its own ids (issue 21): a bulk ticket from the middle of the backlog, and its
        # customer's tickets (about ten).
        sample = json.loads(output.strip().splitlines()[-1])
        for order, (key, parameter, value) in enumerate(
            (
                ("external_id", "external_id", sample["external_id"]),
                ("requester_external_id", "solicitante_external_id", sample["requester_external_id"]),
                # Issue 22: a tag on 1% of the tickets (the GIN index counts them; the page walks the newest).
                ("tag", "tag", sample["tag"]),
                # And a custom field's value on 1% of them (the typed values' btree index).
                ("field", "campo.loja", sample["store"]),
                # Issue 23: tickets with a breached SLA target, 1% of them (a partial index).
                ("sla", "sla", "violado"),
            ),
            start=2,
        ):
            path = f"/api/v1/tickets?{parameter}={value}&por_pagina=25"
            lookup = self.pair(Endpoint(f"lookup_{key}", f"GET {path}", "GET", path), 16, order, "100k")
            vs_list = _ratio(lookup["product"], plain["product"])
            busca.append({"label": f"{parameter}={value}", "tickets": BULK_TICKETS, **lookup, "vs_list": vs_list})
            ratios[f"{key}_over_list_100k"] = vs_list
        if ("list_100", 64) in by_key:
            ratios["page_100_over_25"] = _ratio(by_key[("list_100", 16)]["product"], list_1k["product"])
            ratios["page_100_over_25_at_64"] = _ratio(
                by_key[("list_100", 64)]["product"], by_key[("list_25", 64)]["product"]
            )
        return busca, ratios

    def run(self) -> dict:
        started_at = datetime.now(UTC)
        self.load_before = [round(x, 2) for x in os.getloadavg()]
        if self.load_before[0] > 0.5:
            log(
                f"note: load average {self.load_before[0]:.2f} before the run: other processes share the CPU, "
                "absolute numbers suffer more than ratios"
            )
        only = self.options.only
        self.start_databases()
        self.seed()
        self.start_servers()
        self.endpoints = self.define_endpoints()
        self.panel_token = self.login()
        rows = self.load() if "endpoints" in only else []
        sql, sql_detail = self.count_sql() if "endpoints" in only else ({}, {})
        hooks = self.webhooks() if "webhooks" in only else {}
        neighbours = self.neighbours() if "tenants" in only else {}
        busca, ratios = self.busca_100k(rows) if "busca" in only else ([], {})
        ratios |= _create_ratios(rows)
        big = large(self, huge=self.options.huge) if "large" in only else {}
        organizations = self.many_organizations() if "orgs" in only else {}
        return {
            "sections": sorted(only, key=SECTIONS.index),
            "meta": {
                "started_at": started_at.isoformat(timespec="seconds"),
                "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "seconds": round(time.monotonic() - STARTED, 1),
                "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, {platform.system()}",
                "python": platform.python_version(),
                "commit": _commit(),
                "web_command": self.procfile["web"],
                "reference_command": reference_web_command(self.procfile["web"]),
                "worker_command": self.procfile["worker"],
                "beat_command": self.procfile.get("beat"),
                "duration_s": self.options.duration,
                "connections": list(CONNECTIONS),
                "sql_requests": self.options.sql_requests,
                "load_average_before": self.load_before,
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
            },
            "rows": rows,
            "sql": sql,
            "sql_detail": sql_detail,
            "busca": busca,
            "ratios": ratios,
            "webhooks": hooks,
            "neighbours": neighbours,
            "large": big,
            "orgs": organizations,
        }


def settings_default(name: str) -> str:
    """A setting's default as config/settings.py reads it (`env.<type>("NAME", default=...)`)."""
    import re

    text = (ROOT / "config" / "settings.py").read_text()
    match = re.search(rf'env\.\w+\("{name}", default=([^)]+)\)', text)
    if match is None:
        raise RuntimeError(f"no default for {name} in config/settings.py")
    return match.group(1).strip().strip('"')


def _create_ratios(rows: list[dict]) -> dict:
    """The create with 5 tags and 5 fields against the plain create, product req/s, at each connection count
    (issue 22)."""
    by_key = {(row["key"], row["connections"]): row for row in rows}
    ratios = {}
    for connections in CONNECTIONS:
        plain, labelled = by_key.get(("create", connections)), by_key.get(("create_tags_fields", connections))
        if plain and labelled:
            suffix = "" if connections == CONNECTIONS[0] else f"_at_{connections}"
            ratios[f"create_tags_fields_over_create{suffix}"] = _ratio(labelled["product"], plain["product"])
    return ratios


def _runs(row: dict) -> dict:
    return {"product": row["product"], "reference": row["reference"], "ratio": row["ratio"]}


def _ratio(a: dict, b: dict) -> float | None:
    return a["rps"] / b["rps"] if b["rps"] else None


def _commit() -> str:
    def git(*args: str) -> str:
        result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return result.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def _parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="make bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--duration", type=int, default=5, help="seconds of each measured wrk run (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of wrk warm-up per endpoint and server")
    parser.add_argument("--sql-requests", type=int, default=50, help="requests per endpoint in the SQL count")
    parser.add_argument("--webhook-rate", type=float, default=20, help="steady agent replies per second")
    parser.add_argument("--webhook-seconds", type=float, default=10, help="seconds of steady agent replies")
    parser.add_argument("--burst", type=int, default=5000, help="events in the webhook burst")
    parser.add_argument("--drain-cap", type=float, default=70, help="give up on the burst after this many seconds")
    parser.add_argument(
        "--huge", action="store_true", help="grow the large section's organization to 10,000,000 tickets too"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs) for inspection")
    parser.add_argument(
        "--only",
        type=_sections,
        default=SECTIONS,
        help=f"run these sections only, comma-separated, of {','.join(SECTIONS)} (default: all)",
    )
    return parser.parse_args(argv)


def _sections(value: str) -> tuple[str, ...]:
    chosen = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [part for part in chosen if part not in SECTIONS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"sections are {', '.join(SECTIONS)}; not {', '.join(unknown) or 'none'}")
    return chosen


def main(argv=None) -> int:
    options = _parse(argv)
    ensure_packages()
    workdir = Path(tempfile.mkdtemp(prefix="helpdesk-bench-"))
    supervisor = Supervisor(workdir)
    if options.keep:
        log(f"work directory kept: {workdir}")
    else:
        supervisor.on_close(lambda: shutil.rmtree(workdir, ignore_errors=True))
    atexit.register(supervisor.close)

    def stop(signum, frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
    try:
        results = Bench(supervisor, options).run()
    except KeyboardInterrupt:
        log("interrupted: stopping everything")
        return 130
    except Exception:
        log("failed; the last lines of each log:")
        for name in ("web", "reference", "worker", "beat"):
            if supervisor.log_path(name).exists():
                print(f"----- {name} -----\n{supervisor.tail(name, 15)}", file=sys.stderr)
        raise
    finally:
        log("stopping every process the bench started")
        supervisor.close()

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "latest.json").write_text(json.dumps(report.as_json(results), indent=2, ensure_ascii=False))
    (OUT_DIR / "latest.md").write_text(report.render_markdown(results))
    print()
    print(report.render_text(results))
    print(f"\nWritten: {OUT_DIR / 'latest.json'} and {OUT_DIR / 'latest.md'} ({results['meta']['seconds']:.0f} s)")
    if options.strict and report.missed(results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
