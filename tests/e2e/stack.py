"""A running service for end-to-end tests: web (gunicorn), Celery worker and beat
as real processes, on their own database and broker, and an HTTP receiver.

Embedded default: a file SQLite database and the SQLite broker (foundation/broker.py)
under a temporary DATA_DIR. With DATABASE_URL (PostgreSQL) the stack gets a
database of its own on that server; with REDIS_URL it starts a redis-server of
its own, so a test can stop the broker without touching anything else.
"""

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tools.ports import free_port, port_open

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
ADMIN_PASSWORD = "e2e-Senha-forte-123"


def wait_for(predicate, timeout: float = 20.0, interval: float = 0.1, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


# --- receiver -----------------------------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes
    at: float


@dataclass
class Receiver:
    """Records every request; answers per path from a script of responses.

    A script item is a status code, ("sleep", seconds, status) or ("redirect", status, location).
    The last item repeats.
    """

    requests: list = field(default_factory=list)
    scripts: dict = field(default_factory=dict)

    def start(self) -> "Receiver":
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                receiver.requests.append(Received(self.path, dict(self.headers.items()), body, time.time()))
                script = receiver.scripts.get(self.path, [200])
                item = script.pop(0) if len(script) > 1 else script[0]
                location = None
                if isinstance(item, tuple) and item[0] == "sleep":
                    time.sleep(item[1])
                    item = item[2]
                elif isinstance(item, tuple) and item[0] == "redirect":
                    item, location = item[1], item[2]
                self.send_response(item)
                if location:
                    self.send_header("Location", location)
                payload = b'{"ok": true}'
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def new_path(self, *script) -> str:
        path = f"/hook/{uuid.uuid4().hex}"
        self.scripts[path] = list(script) or [200]
        return path

    def at(self, path: str) -> list[Received]:
        return [request for request in self.requests if request.path == path]

    def stop(self) -> None:
        self.server.shutdown()


# --- the service ------------------------------------------------------------


class Stack:
    def __init__(self, workdir: Path, *, database_prefix: str = "helpdesk_e2e_", wsgi: str = "config.wsgi"):
        self.workdir = workdir
        self.database_prefix = database_prefix
        self.wsgi = wsgi
        self.data_dir = workdir / "data"
        self.data_dir.mkdir(parents=True)
        self.logs = workdir / "logs"
        self.logs.mkdir()
        self.port = free_port()
        self.processes: dict[str, subprocess.Popen] = {}
        self._database_name = None
        self._redis_port = None
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATA_DIR": str(self.data_dir),
            "WEBHOOK_ALLOW_INSECURE_URLS": "true",
            # The receiver listens on this machine, over http: allowed here on purpose.
            "SILENCED_SYSTEM_CHECKS": "integrations.E002",
            # Keys from the environment, as production has them (helpdesk.E001 with a shared database).
            "SECRET_KEY": secrets.token_urlsafe(50),
            "JWT_SIGNING_KEY": secrets.token_urlsafe(50),
            "WEBHOOK_RETRY_DELAYS": "1,1,1,1",
            "WEBHOOK_TIMEOUT": "2",
            # Leases, the dispatcher's interval and the requeue delay are the production defaults:
            # the fault tests measure recovery as an operator would see it.
            "PARTNER_RATE_LIMIT": "100000/m",
            "PARTNER_MAX_CONCURRENT_REQUESTS": "0",
            "PARTNER_UNAUTHENTICATED_RATE_LIMIT": "100000/m",
            "LOGIN_RATE_LIMIT": "100000/m",
            "PANEL_RATE_LIMIT": "100000/m",
            # The fault tests ask /api/health every 50 ms for as long as they run.
            "HEALTH_RATE_LIMIT": "100000/m",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("REQUIRE_POSTGRES", None)

    # -- lifecycle
    def start(self) -> "Stack":
        if os.environ.get("DATABASE_URL", "").startswith(("postgres", "pgsql")):
            self._create_database()
        if os.environ.get("REDIS_URL"):
            self.start_redis()
        self.manage("migrate", "--noinput")
        self.manage("collectstatic", "--noinput", "--verbosity", "0")
        result = json.loads(
            self.manage(
                "create_organization",
                "--name",
                "E2E",
                "--admin-email",
                "admin@e2e.test",
                "--admin-password",
                ADMIN_PASSWORD,
                "--json",
            )
        )
        self.organization_id = result["organization_id"]
        credential = json.loads(
            self.manage("create_api_key", "--organization", self.organization_id, "--name", "e2e", "--json")
        )
        self.api_key, self.api_key_id = credential["key"], credential["id"]
        self.start_processes()
        self.token = self.login()
        return self

    def start_processes(self) -> None:
        self.start_web()
        self.start_worker()
        self.start_beat()

    def stop(self) -> None:
        for name in list(self.processes):
            self.kill(name, signal.SIGTERM)
        self.stop_redis()
        if self._database_name:
            self._drop_database()

    def manage(self, *args: str, **environment: str) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env={**self.env, **environment},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} failed:\n{result.stderr}")
        return result.stdout

    def _spawn(self, name: str, command: list[str]) -> None:
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 (kept open for the process)
        self.processes[name] = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def _web_command(self) -> list[str]:
        return [
            str(VENV_BIN / "gunicorn"),
            self.wsgi,
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            "1",
            "--threads",
            "4",
            "--timeout",
            "60",
        ]

    def start_web(self) -> None:
        self._spawn("web", self._web_command())
        wait_for(lambda: self._web_status() == 200, timeout=30, message="the web server")

    @contextlib.contextmanager
    def web_with(self, **environment: str):
        """The web process restarted with `environment` for the block, then as it was."""
        saved = dict(self.env)
        self.kill("web", signal.SIGTERM)
        self.env.update(environment)
        try:
            self.start_web()
            yield self
        finally:
            self.env = saved
            self.kill("web", signal.SIGTERM)
            self.start_web()

    def start_worker(self) -> None:
        self._spawn("worker", self._worker_command("--concurrency", "2"))
        self._wait_until_ready("worker")

    def _worker_command(self, *options: str) -> list[str]:
        """A Celery worker that takes one task at a time; without gossip, mingle and heartbeat it starts
        at once and sends nothing to other workers."""
        return [
            str(VENV_BIN / "celery"),
            "-A",
            "config",
            "worker",
            *options,
            "--prefetch-multiplier",
            "1",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]

    def _wait_until_ready(self, worker: str, timeout: float = 30) -> None:
        wait_for(
            lambda: b"ready." in (self.logs / f"{worker}.log").read_bytes(), timeout=timeout, message=f"{worker} ready"
        )

    def start_beat(self, name: str = "beat") -> None:
        """A beat process; another `name` starts one more (its own schedule file), as a mistaken second beat."""
        self._spawn(
            name,
            [
                str(VENV_BIN / "celery"),
                "-A",
                "config",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(self.data_dir / ("celerybeat-schedule" if name == "beat" else f"celerybeat-schedule-{name}")),
            ],
        )

    def kill(self, name: str, sig=signal.SIGKILL) -> None:
        """SIGKILL takes the whole process group (a crash, pool children included); any other
        signal goes to the main process only, as supervisord, Docker and Kubernetes send it.
        Celery's pool children, signalled themselves, die under the parent's warm shutdown,
        which then replaces them and waits on them until the SIGKILL below."""
        process = self.processes.pop(name)
        try:
            if sig == signal.SIGKILL:
                os.killpg(process.pid, sig)
            else:
                os.kill(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # nothing of the group outlives its main process

    def _web_status(self) -> int | None:
        try:
            with urllib.request.urlopen(f"{self.base_url}/api/health", timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code
        except (urllib.error.URLError, ConnectionError, OSError):
            return None

    # -- broker
    @property
    def uses_redis(self) -> bool:
        return self._redis_port is not None

    def start_redis(self) -> None:
        if self._redis_port is None:
            self._redis_port = free_port()
            self.env["REDIS_URL"] = f"redis://127.0.0.1:{self._redis_port}/0"
        self._redis = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self._redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: port_open(self._redis_port), timeout=10, message="redis-server")

    def stop_redis(self) -> None:
        if self._redis_port is not None and self._redis.poll() is None:
            self._redis.terminate()
            self._redis.wait(timeout=10)

    def broker_down(self) -> None:
        """The web process cannot publish until broker_up().

        With Redis the broker itself stops (worker and beat lose it too). The
        embedded broker is a file on the same disk as the database, with no
        outage of its own to simulate, so the web process alone is restarted
        against a broker address where nothing listens.
        """
        if self.uses_redis:
            self.stop_redis()
            return
        self.kill("web", signal.SIGTERM)
        self.env["CELERY_BROKER_URL"] = f"redis://127.0.0.1:{free_port()}/0"
        try:
            self._spawn("web", self._web_command())
            wait_for(lambda: self._web_status() == 503, timeout=30, message="the web server without its broker")
        finally:
            del self.env["CELERY_BROKER_URL"]

    def broker_up(self) -> None:
        if self.uses_redis:
            self.start_redis()
            return
        self.kill("web", signal.SIGTERM)
        self.start_web()

    # -- database
    def _admin_dsn(self) -> str:
        parts = urlsplit(os.environ["DATABASE_URL"])
        return urlunsplit(parts._replace(path="/postgres"))

    def _create_database(self) -> None:
        import psycopg

        self._database_name = f"{self.database_prefix}{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self._admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self._database_name}"')
        parts = urlsplit(os.environ["DATABASE_URL"])
        self.env["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{self._database_name}"))

    def _drop_database(self) -> None:
        import psycopg

        with psycopg.connect(self._admin_dsn(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self._database_name}" WITH (FORCE)')

    # -- HTTP
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, body=None, token: str | None = None, key: str | None = None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def timed(self, method: str, path: str, body=None, credential: str | None = None):
        """(status, headers, json, seconds) of one request, however it ends: for the database fault tests,
        which time every answer."""
        headers = {"Content-Type": "application/json"}
        if credential:
            headers["Authorization"] = f"Bearer {credential}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, headers, raw = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, headers, raw = error.code, error.headers, error.read()
        return status, headers, json.loads(raw), time.monotonic() - started

    def login(self) -> str:
        status, body = self.request("POST", "/api/auth/login", {"email": "admin@e2e.test", "senha": ADMIN_PASSWORD})
        assert status == 200, body
        return body["data"]["access_token"]

    def panel(self, method: str, path: str, body=None):
        return self.request(method, path, body, token=self.token)

    def partner(self, method: str, path: str, body=None):
        return self.request(method, path, body, key=self.api_key)

    # -- scenario helpers
    def create_webhook(
        self, url: str, events=("ticket.resposta_publica", "ticket.resposta_editada", "ticket.resolvido")
    ):
        status, body = self.panel("POST", "/api/webhooks", {"nome": "E2E", "url": url, "eventos": list(events)})
        assert status == 200, body
        return body["data"]

    def create_ticket(self) -> dict:
        status, body = self.partner(
            "POST",
            "/api/v1/tickets",
            {"assunto": "Pedido atrasado", "descricao": "Pedido 1234", "solicitante": {"nome": "Maria"}},
        )
        assert status == 201, body
        return body["data"]

    def agent_reply(self, ticket_id: str, message: str, internal: bool = False) -> dict:
        status, body = self.panel(
            "POST", f"/api/tickets/{ticket_id}/respostas", {"mensagem": message, "interna": internal}
        )
        assert status == 201, body
        return body["data"]

    def deliveries(self, webhook_id: str) -> list[dict]:
        status, body = self.panel("GET", f"/api/webhooks/{webhook_id}/entregas?por_pagina=100")
        assert status == 200, body
        return body["data"]["data"]


class RunnerStack(Stack):
    """The service as `make run` runs it: the runner of the Makefile (tools.runner) starts the
    Procfile's processes under supervisord. Database and broker as for Stack: the embedded
    default, or PostgreSQL and a redis-server of its own when this test run uses them."""

    def __init__(self, workdir: Path):
        super().__init__(workdir)
        self.env.update(PORT=str(self.port), CELERY_CONCURRENCY="2", WEB_ACCESS_LOG="false")
        self.log = self.logs / "runner.log"
        self.config = self.data_dir / "run" / "supervisord.conf"

    def start_processes(self) -> None:
        if self.uses_redis:
            self.env["WEB_CONCURRENCY"] = "2"  # not 2 x cores + 1 on a shared CI machine
        self._spawn("runner", [sys.executable, "-m", "tools.runner"])
        wait_for(lambda: self._web_status() == 200, timeout=60, message="the web server under the runner")
        for name in ("web", "worker", "beat"):
            wait_for(lambda name=name: self.running_pid(name), timeout=30, message=f"{name} RUNNING")

    def stop(self) -> None:
        runner = self.processes.pop("runner", None)
        if runner is not None:
            runner.terminate()  # supervisord stops every process it runs, then exits
            try:
                runner.wait(timeout=90)
            except subprocess.TimeoutExpired:
                runner.kill()
                runner.wait(timeout=10)
        super().stop()

    def supervisorctl(self, *args: str) -> str:
        result = subprocess.run(
            [str(VENV_BIN / "supervisorctl"), "-c", str(self.config), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return result.stdout

    def running_pid(self, name: str) -> int | None:
        """The pid of `name` once supervisord counts it as started (RUNNING), else None."""
        fields = self.supervisorctl("status", name).split()
        if len(fields) >= 4 and fields[1] == "RUNNING" and fields[2] == "pid":
            return int(fields[3].rstrip(","))
        return None

    def output(self) -> str:
        return self.log.read_text(errors="replace")


class DatabaseProxy:
    """A TCP relay in front of PostgreSQL that fails the way real outages do.

    down():   the server is stopped: connections are reset and new ones refused.
    freeze(): the server (or the network) stops answering without an error:
              connections are accepted and nothing is ever forwarded.
    restore(): a fresh server again, as after a restart.
    """

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.port = free_port()
        self.frozen = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listen()

    def url_for(self, database_url: str) -> str:
        parts = urlsplit(database_url)
        credentials = parts.netloc.rpartition("@")[0]
        return urlunsplit(parts._replace(netloc=f"{credentials}@127.0.0.1:{self.port}"))

    def down(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        self._listener.close()
        self._reset_all()

    def freeze(self) -> None:
        self.frozen = True

    def restore(self) -> None:
        """Back to normal; connections held while frozen are reset. A no-op when nothing is broken."""
        if self.frozen:
            self.frozen = False
            self._reset_all()
        if self._listener.fileno() == -1:
            self._listen()

    def stop(self) -> None:
        self.down()

    def _listen(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed: down()
            self._keep(client)
            if self.frozen:
                continue  # accepted by the kernel, never answered
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self._keep(upstream)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        while True:
            try:
                data = source.recv(65536)
                while self.frozen and data:
                    time.sleep(0.05)  # the bytes go nowhere until restore() resets the connection
                if not data:
                    break
                target.sendall(data)
            except OSError:
                break
        for sock in (source, target):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _keep(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)

    def _reset_all(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST, not FIN
                sock.close()
