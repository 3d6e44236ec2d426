"""Load with wrk (a process of its own) and SQL statements per request from pg_stat_statements."""

import http.client
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg

WRK_DIR = Path(__file__).resolve().parent / "wrk"
WRK_THREADS = 2


@dataclass(frozen=True)
class Endpoint:
    """One row of the table: how to load it with wrk and how to send it once from Python."""

    key: str
    label: str
    method: str
    path: str  # the URL path wrk is pointed at; scripts may choose their own paths
    script: str = "get.lua"
    args: tuple[str, ...] = ()
    panel: bool = False  # panel JWT instead of the partner key
    body: dict | None = None  # for the one-by-one SQL count
    paths: tuple[str, ...] = ()  # paths to rotate over in the SQL count
    sql_fresh_body: bool = False  # a new external_id per request in the SQL count


def run_wrk(*, port: int, endpoint: Endpoint, connections: int, duration: float, token: str, tag: str) -> dict:
    args = [*endpoint.args]
    if endpoint.script == "post_ticket.lua":
        args = [tag, *endpoint.args]  # the run's tag, then what the body adds (tags)
    command = [
        "wrk",
        f"-t{min(WRK_THREADS, connections)}",
        f"-c{connections}",
        f"-d{duration:g}s",
        "--timeout",
        "10s",
        "-s",
        str(WRK_DIR / endpoint.script),
        "-H",
        f"Authorization: Bearer {token}",
        f"http://127.0.0.1:{port}{endpoint.path}",
    ]
    if args:
        command += ["--", *args]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "BENCH_WRK_DIR": str(WRK_DIR)},
        timeout=duration + 60,
    )
    line = next((line for line in result.stdout.splitlines() if line.startswith("BENCH_JSON ")), None)
    if result.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    raw = json.loads(line.removeprefix("BENCH_JSON "))
    seconds = raw["duration_us"] / 1e6
    errors = raw["connect"] + raw["read"] + raw["write"] + raw["timeout"] + raw["non2xx"]
    return {
        "requests": raw["requests"],
        "rps": raw["requests"] / seconds if seconds else 0.0,
        "p50_ms": raw["p50_us"] / 1000,
        "p90_ms": raw["p90_us"] / 1000,
        "p99_ms": raw["p99_us"] / 1000,
        "max_ms": raw["max_us"] / 1000,
        "errors": errors,
        "error_detail": {
            k: raw[k] for k in ("connect", "read", "write", "timeout", "non2xx", "first_bad_status") if raw[k]
        },
    }


class Client:
    """Sequential HTTP/1.1 requests on one kept-alive connection."""

    def __init__(self, port: int):
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def request(self, method: str, path: str, body=None, token: str | None = None) -> tuple[int, dict | None]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = json.dumps(body).encode() if body is not None else None
        try:
            self.connection.request(method, path, body=payload, headers=headers)
            response = self.connection.getresponse()
        except (http.client.HTTPException, OSError):
            self.connection.close()  # the server closed a kept-alive connection: once more on a new one
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            self.connection.request(method, path, body=payload, headers=headers)
            response = self.connection.getresponse()
        raw = response.read()
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = None
        return response.status, data

    def close(self) -> None:
        self.connection.close()


class StatementCounter:
    """Statements run by one database role, transaction control and SET included (track_utility=on)."""

    def __init__(self, admin_url: str):
        self.connection = psycopg.connect(admin_url, autocommit=True)

    def reset(self) -> None:
        self.connection.execute("SELECT pg_stat_statements_reset()")

    def calls(self, role: str) -> int:
        row = self.connection.execute(
            "SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid"
            " WHERE r.rolname = %s",
            [role],
        ).fetchone()
        return int(row[0])

    def by_statement(self, role: str, limit: int = 40) -> list[tuple[int, str]]:
        # Savepoint names are unique (Django numbers them), so PostgreSQL keeps one entry per name.
        rows = self.connection.execute(
            "SELECT sum(s.calls) AS calls, regexp_replace(s.query, '\"s[0-9]+_x[0-9]+\"', '<name>') AS statement"
            " FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = %s"
            " GROUP BY statement ORDER BY calls DESC, statement LIMIT %s",
            [role, limit],
        ).fetchall()
        return [(int(calls), query) for calls, query in rows]

    def heaviest(self, role: str, limit: int = 12) -> list[dict]:
        """The role's statements by total execution time: where its database time went."""
        rows = self.connection.execute(
            "SELECT s.calls, s.total_exec_time, s.mean_exec_time, left(s.query, 300)"
            " FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = %s"
            " ORDER BY s.total_exec_time DESC LIMIT %s",
            [role, limit],
        ).fetchall()
        return [
            {"calls": int(calls), "total_ms": round(total, 1), "mean_ms": round(mean, 3), "query": query}
            for calls, total, mean, query in rows
        ]

    def close(self) -> None:
        self.connection.close()


WARM_UP_REQUESTS = 30


def sql_per_request(
    *, counter: StatementCounter, role: str, client: Client, endpoint: Endpoint, token: str, requests: int, tag: str
) -> tuple[float, list[tuple[int, str]]]:
    """Sends `requests` requests one by one after a warm-up; statements of `role` per request."""

    def send(n: int) -> None:
        body = endpoint.body
        if endpoint.sql_fresh_body:
            body = {**body, "external_id": f"sql-{tag}-{n}"}
        path = endpoint.paths[n % len(endpoint.paths)] if endpoint.paths else endpoint.path
        status, data = client.request(endpoint.method, path, body, token=token)
        if not 200 <= status < 300:
            raise RuntimeError(f"{endpoint.method} {path} answered {status}: {str(data)[:300]}")

    # Enough warm-up requests that every web process has served one: a database connection idle for
    # longer than DB_HEALTH_CHECK_GRACE is health-checked (one SELECT 1) before its next request.
    for n in range(WARM_UP_REQUESTS):
        send(-1 - n)
    counter.reset()
    for n in range(requests):
        send(n)
    return counter.calls(role) / requests, counter.by_statement(role)
