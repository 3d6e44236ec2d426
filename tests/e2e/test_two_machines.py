"""The two-machine set-up of docs/operations.md, started on one host (issue 11, item 5).

Two "machines", each with a DATA_DIR and a PROMETHEUS_MULTIPROC_DIR of its own, each running the
Procfile's `web:` (gunicorn with gunicorn.conf.py, WEB_CONCURRENCY=2, its own PORT) and `worker:`
(its own WORKER_METRICS_PORT); machine 1 also runs the one `beat:`. Both share one PostgreSQL
database (DATABASE_URL) and one redis-server (REDIS_URL), the same SECRET_KEY, JWT_SIGNING_KEY and
METRICS_TOKEN, as the manual's environment file has them. The test proves what the manual promises
of that set-up: the partner rate limit is one budget across machines, a revoked key fails on the
next request everywhere, every agent reply becomes one delivery received exactly once, and the
metrics of every server add up to what the test sent.

PostgreSQL and Redis only (the embedded default runs one machine): skipped with a reason without
them, a failure when REQUIRE_POSTGRES says they must be there (CI's second run).
"""

import json
import os
import shutil
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.e2e.scrape import scrape, total
from tests.e2e.shipped import NOT_INHERITED, procfile_command
from tests.e2e.stack import ADMIN_PASSWORD, VENV_BIN, Stack, wait_for
from tools.ports import free_port

TOKEN = "two-machines-metrics-token-0123456789abcdef"
RATE_LIMIT = 60
ATTEMPTS = 12
SPREAD = 200  # partner requests over both ports, against a limit of RATE_LIMIT a minute
REPLIES = 500
ROUTE = "/api/v1/atendentes"  # the partner route this test alone calls (the ledger below)
SUCCESS = ("helpdesk_webhook_delivery_attempts_total", "ticket.resposta_publica", "sucesso")

# The variables of the environment file in docs/operations.md that differ from the other harnesses'.
STACK_ONLY = ("WEBHOOK_RETRY_DELAYS", "WEBHOOK_TIMEOUT", "PARTNER_RATE_LIMIT")


def _require_postgres_and_redis() -> None:
    missing = []
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres", "pgsql")):
        missing.append("PostgreSQL (DATABASE_URL)")
    if not os.environ.get("REDIS_URL"):
        missing.append("Redis (REDIS_URL)")
    if not shutil.which("redis-server"):
        missing.append("the redis-server program")
    if not missing:
        return
    reason = f"the two-machine set-up needs {' and '.join(missing)} (CI's PostgreSQL run has them)"
    if os.environ.get("REQUIRE_POSTGRES"):
        pytest.fail(f"REQUIRE_POSTGRES is set but {reason}")
    pytest.skip(reason)


@dataclass
class Machine:
    name: str
    data_dir: object
    web_port: int
    worker_metrics_port: int

    def environment(self) -> dict[str, str]:
        return {
            "DATA_DIR": str(self.data_dir),
            "PROMETHEUS_MULTIPROC_DIR": str(self.data_dir / "metrics"),
            "PORT": str(self.web_port),
            "WORKER_METRICS_PORT": str(self.worker_metrics_port),
        }


class TwoMachines(Stack):
    """Stack's database and redis-server of its own, migrations and organization; the processes
    are the Procfile's, started per machine as docs/operations.md describes."""

    def __init__(self, workdir):
        super().__init__(workdir, database_prefix="helpdesk_two_machines_")
        for name in (*STACK_ONLY, *NOT_INHERITED):
            if name not in ("DATABASE_URL", "REDIS_URL"):
                self.env.pop(name, None)
        self.env.update(
            PARTNER_RATE_LIMIT=f"{RATE_LIMIT}/m",
            METRICS_TOKEN=TOKEN,
            WEB_CONCURRENCY="2",
            # Two processes per worker on this shared 2-core host (the default is cores + 1).
            CELERY_CONCURRENCY="2",
            # The Procfile's `gunicorn` and `celery` are the virtualenv's, as `make run` puts them first.
            PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        )
        self.machines = []
        for number in (1, 2):
            data_dir = workdir / f"machine-{number}"
            data_dir.mkdir()
            self.machines.append(Machine(f"machine-{number}", data_dir, free_port(), free_port()))
        # manage.py (migrate, the organization) runs from machine 1, as the manual's step 6 does.
        self.data_dir = self.machines[0].data_dir
        self.env["DATA_DIR"] = str(self.data_dir)
        self.port = self.machines[0].web_port
        self.hooks: list[str] = []  # the receiver's paths of this test's webhooks

    def start_processes(self) -> None:
        # collectstatic on every web machine (the first ran in Stack.start, on machine 1's DATA_DIR).
        self.manage("collectstatic", "--noinput", "--verbosity", "0", DATA_DIR=str(self.machines[1].data_dir))
        for machine in self.machines:
            self._spawn_on(machine, "web", procfile_command("web"))
            # On one host the two workers would share the node name `celery@<host>`; two machines have two.
            self._spawn_on(machine, "worker", [*procfile_command("worker"), "--hostname", f"{machine.name}@%h"])
        self._spawn_on(self.machines[0], "beat", procfile_command("beat"))
        for machine in self.machines:
            wait_for(
                lambda machine=machine: self._health(machine.web_port) == 200,
                timeout=60,
                message=f"the web server of {machine.name}",
            )
            # gunicorn.conf.py with WEB_CONCURRENCY=2: two processes behind each port.
            wait_for(
                lambda machine=machine: self.output(machine, "web").count("Booting worker with pid") == 2,
                timeout=30,
                message=f"two gunicorn processes on {machine.name}",
            )
            wait_for(
                lambda machine=machine: "ready." in self.output(machine, "worker"),
                timeout=60,
                message=f"the worker of {machine.name}",
            )

    def _spawn_on(self, machine: Machine, process: str, command: list[str]) -> None:
        name = f"{machine.name}-{process}"
        shared = self.env
        self.env = {**shared, **machine.environment()}
        try:
            self._spawn(name, command)
        finally:
            self.env = shared

    def output(self, machine: Machine, process: str) -> str:
        path = self.logs / f"{machine.name}-{process}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _health(self, port: int) -> int | None:
        return call(port, "GET", "/api/health")[0]

    @property
    def ports(self) -> list[int]:
        return [machine.web_port for machine in self.machines]


def call(port: int, method: str, path: str, authorization: str | None = None, body=None):
    """(status, JSON body, headers) of one request to the web server on `port`."""
    headers = {"Authorization": authorization} if authorization else {}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), error.headers
    except OSError:
        return None, None, {}


class Ledger:
    """Every partner request this test sends to ROUTE: (port, status) -> count."""

    def __init__(self):
        self.sent = Counter()

    def partner(self, port: int, key: str):
        status, body, headers = call(port, "GET", ROUTE, f"Bearer {key}")
        assert status is not None, f"no answer from the web server on {port}"
        self.sent[port, status] += 1
        return status, headers


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    _require_postgres_and_redis()
    running = TwoMachines(tmp_path_factory.mktemp("two-machines"))
    try:
        running.start()
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def ledger():
    return Ledger()


@pytest.fixture(autouse=True)
def _print_logs_on_failure(request):
    """Replaces tests/e2e/conftest.py's fixture of this name (which knows only the session stacks)."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and "machines" in request.fixturenames:
        for log in sorted(request.getfixturevalue("machines").logs.glob("*.log")):
            print(f"----- {log.name} (last 40 lines) -----")
            print("\n".join(log.read_text(errors="replace").splitlines()[-40:]))


def panel(machines: TwoMachines, port: int, method: str, path: str, body=None):
    status, answer, _ = call(port, method, path, f"Bearer {machines.token}", body)
    return status, answer


def new_key(machines: TwoMachines, name: str) -> dict:
    status, answer = panel(machines, machines.ports[0], "POST", "/api/api-keys", {"nome": name})
    assert status == 201, answer
    return answer["data"]


def test_the_partner_rate_limit_is_one_budget_across_both_machines(machines, ledger):
    """200 requests of one key spread over both ports (four processes) in one window: exactly 60 pass.

    A window of the limiter is a fixed minute per key (django-ratelimit). The test keeps only a run
    that fits in one window, which every answer's X-RateLimit-Reset says; a key whose window ends
    too soon, or a run that straddled two windows on a very busy machine, is set aside for a new key.
    """
    ports = machines.ports
    # A key's window ends at a moment of its own (django-ratelimit offsets it by the key): about one key
    # in three has too little left, and on a loaded machine a run can straddle two windows; keys are cheap.
    for attempt in range(ATTEMPTS):
        key = new_key(machines, f"limite {attempt}")["chave"]
        status, headers = ledger.partner(ports[0], key)
        assert status == 200
        if int(headers["X-RateLimit-Reset"]) - time.time() < 20:
            continue  # too little of this key's window left for the whole run
        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(lambda n: ledger.partner(ports[n % 2], key), range(1, SPREAD)))
        answers.append((status, headers))
        if len({headers["X-RateLimit-Reset"] for _, headers in answers}) > 1:
            continue  # the run straddled two windows
        statuses = Counter(status for status, _ in answers)
        assert statuses == {200: RATE_LIMIT, 429: SPREAD - RATE_LIMIT}, statuses
        refused = [headers for status, headers in answers if status == 429]
        assert all(int(headers["Retry-After"]) >= 1 for headers in refused)
        return
    pytest.fail(f"no run of 200 requests fitted in one rate-limit window in {ATTEMPTS} tries")


def test_a_revoked_key_fails_on_the_next_request_on_both_machines(machines, ledger):
    credential = new_key(machines, "revogada")
    key = credential["chave"]
    for port in machines.ports:
        for _ in range(4):  # every process of both servers has served the key
            assert ledger.partner(port, key)[0] == 200

    status, answer = panel(machines, machines.ports[1], "DELETE", f"/api/api-keys/{credential['id']}")
    assert status == 200, answer

    for port in machines.ports:
        for _ in range(4):
            assert ledger.partner(port, key)[0] == 401


def test_500_agent_replies_are_500_deliveries_each_received_exactly_once(machines, receiver):
    hook = receiver.new_path(200)
    machines.hooks.append(hook)
    status, answer = panel(
        machines,
        machines.ports[1],
        "POST",
        "/api/webhooks",
        {"nome": "Duas máquinas", "url": receiver.base_url + hook, "eventos": ["ticket.resposta_publica"]},
    )
    assert status == 200, answer
    ticket = machines.create_ticket()

    # Agent replies through the service the panel API and the admin call, one transaction each
    # (faster than 500 HTTP requests on this host); each queues its delivery when it commits.
    machines.manage(
        "shell",
        "-c",
        "from helpdesk.models import Agent\n"
        "from tickets.models import Ticket\n"
        "from tickets.services import reply_create_by_agent\n"
        f"ticket = Ticket.objects.get(pk='{ticket['id']}')\n"
        "agent = Agent.objects.get(user__email='admin@e2e.test')\n"
        f"for n in range({REPLIES}):\n"
        "    reply_create_by_agent(ticket=ticket, agent=agent, body=f'Resposta {n}')\n",
    )

    def delivered() -> int:
        return len({request.headers["X-Service-Delivery"] for request in receiver.at(hook)})

    wait_for(lambda: delivered() == REPLIES, timeout=60, interval=0.5, message=f"{REPLIES} deliveries")
    workers = [machine.worker_metrics_port for machine in machines.machines]
    wait_for(
        lambda: total([scrape(port, TOKEN) for port in workers], SUCCESS) == REPLIES,
        timeout=30,
        message=f"{REPLIES} successful attempts counted by the workers",
    )
    wait_for(
        lambda: scrape(machines.ports[0], TOKEN).get(("helpdesk_webhook_deliveries_pending", "pendente")) == 0,
        timeout=30,
        message="no delivery pending",
    )

    received = receiver.at(hook)
    assert len(received) == REPLIES  # each exactly once: no delivery arrived twice
    bodies = [json.loads(request.body) for request in received]
    assert sorted(body["data"]["resposta"]["mensagem"] for body in bodies) == sorted(
        f"Resposta {n}" for n in range(REPLIES)
    )


def test_the_metrics_of_both_machines_add_up_to_what_the_test_sent(machines, ledger, receiver):
    key = new_key(machines, "métricas")["chave"]
    for port, count in zip(machines.ports, (7, 5), strict=True):
        for _ in range(count):
            assert ledger.partner(port, key)[0] == 200

    webs = {port: scrape(port, TOKEN) for port in machines.ports}
    workers = [scrape(machine.worker_metrics_port, TOKEN) for machine in machines.machines]
    for port, samples in webs.items():
        sent = {status: count for (to, status), count in ledger.sent.items() if to == port}
        counted = {
            int(labels[-1]): value
            for labels, value in samples.items()
            if labels[:3] == ("helpdesk_http_requests_total", "GET", ROUTE)
        }
        # Each server counts exactly the requests it answered: the other's are not in its scrape.
        assert counted == sent
        assert samples[("helpdesk_http_request_duration_seconds_count", "GET", ROUTE)] == sum(sent.values())
    everything = sum(ledger.sent.values())
    assert total(webs.values(), ("helpdesk_http_request_duration_seconds_count", "GET", ROUTE)) == everything
    refused = sum(count for (_, status), count in ledger.sent.items() if status == 429)
    assert total(webs.values(), ("helpdesk_rate_limit_rejections_total", "parceiro")) == refused

    # Deliveries: the two workers' attempts add up to what the receiver got, nothing counted twice,
    # and the web servers, which read the queue from the shared database, agree it is empty.
    received = sum(len(receiver.at(path)) for path in machines.hooks)
    attempts = sum(value for samples in workers for key, value in samples.items() if key[0] == SUCCESS[0])
    assert attempts == received
    for samples in webs.values():
        assert not [key for key in samples if key[0] == SUCCESS[0]]
        assert samples[("helpdesk_webhook_deliveries_pending", "pendente")] == 0
        assert samples[("helpdesk_webhook_queue_lag_seconds",)] == 0
    # Each machine's metrics directory holds exactly its own servers, one directory each (beat's stays
    # empty): web-<gunicorn master's pid>, celery-<worker's pid>, celery-<beat's pid> on machine 1.
    for machine in machines.machines:
        found = {path.name for path in (machine.data_dir / "metrics").iterdir() if path.is_dir()}
        expected = {
            f"{'web' if process == 'web' else 'celery'}-{machines.processes[f'{machine.name}-{process}'].pid}"
            for process in ("web", "worker", "beat")
            if f"{machine.name}-{process}" in machines.processes
        }
        assert found == expected


def test_a_panel_login_on_one_machine_works_on_the_other(machines):
    """Panel tokens are signed with the shared JWT_SIGNING_KEY: one issued by machine 1 works on machine 2."""
    status, answer, _ = call(
        machines.ports[1], "POST", "/api/auth/login", body={"email": "admin@e2e.test", "senha": ADMIN_PASSWORD}
    )
    assert status == 200, answer
    token = answer["data"]["access_token"]
    status, answer, _ = call(machines.ports[0], "GET", "/api/webhooks", f"Bearer {token}")
    assert status == 200, answer
