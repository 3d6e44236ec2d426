"""The Procfile's processes started as shipped (gunicorn with gunicorn.conf.py, the Celery worker), on a
DATA_DIR of their own, and the forms of a partner key to look for in what they write.

Not the session `stack` of conftest.py, whose gunicorn gets its own flags. It runs on the embedded
default (SQLite file in DATA_DIR, SQLite broker), also in CI's PostgreSQL run: DATABASE_URL,
REDIS_URL and CELERY_BROKER_URL are removed from the children's environment. What a process writes to
its log does not depend on the database that answers, so a database of its own on PostgreSQL would add
seconds and a clean-up and prove nothing more. REDIS_URL would also switch gunicorn.conf.py to sync
workers; those write the access log through the same `Logger.access` (tests/e2e/test_access_log.py).
"""

import base64
import json
import os
import shlex
import signal
import subprocess
import sys
import urllib.error
import urllib.request

from integrations.keys import DISPLAY_PREFIX_LENGTH, KEY_PREFIX
from tests.e2e.stack import ROOT, VENV_BIN, wait_for
from tools.ports import free_port
from tools.runner import read_procfile

# Variables that would make a child something other than the shipped process: another database or
# broker (see the module docstring), gunicorn settings other than gunicorn.conf.py's defaults
# (GUNICORN_CMD_ARGS is read by gunicorn itself and could set its own access_log_format), or another
# log format or level than production's.
NOT_INHERITED = (
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "REQUIRE_POSTGRES",
    "GUNICORN_CMD_ARGS",
    "WEB_ACCESS_LOG",
    "WEB_CONCURRENCY",
    "WEB_THREADS",
    "LOG_FORMAT",
    "LOG_LEVEL",
    "LOG_STREAM",
)


def procfile_command(name: str) -> list[str]:
    """The Procfile's line for `name`, read as `make run` reads it."""
    processes = read_procfile(ROOT / "Procfile")
    assert name in processes, f"the Procfile has no {name}: process"
    return shlex.split(processes[name])


def basic(key: str) -> str:
    """The contract's Basic form: the key as user name, an empty password."""
    return "Basic " + base64.b64encode(f"{key}:".encode()).decode()


def status_of(port: int, path: str, authorization: str | None = None) -> int | None:
    headers = {"Authorization": authorization} if authorization else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, ConnectionError, OSError):
        return None


class ShippedProcesses:
    """The Procfile's `web:` (and, on request, `worker:`) on a DATA_DIR of their own, migrated.

    `environment` adds variables on top of the inherited ones (less NOT_INHERITED)."""

    def __init__(self, workdir, **environment: str):
        self.workdir = workdir
        self.port = free_port()
        self.env = {name: value for name, value in os.environ.items() if name not in NOT_INHERITED}
        self.env.update(
            DATA_DIR=str(workdir / "data"),
            PORT=str(self.port),
            # As `make run` starts the runner: the virtualenv's gunicorn and celery first on PATH.
            PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            DJANGO_SETTINGS_MODULE="config.settings",
            PYTHONUNBUFFERED="1",
            **environment,
        )
        self.processes: dict[str, subprocess.Popen] = {}

    @property
    def output(self):
        """gunicorn's stdout and stderr (its access log, its own log and the application's lines)."""
        return self.workdir / "web.log"

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, f"manage.py {' '.join(args)} failed:\n{result.stderr}"
        return result.stdout

    def create_organization(self, name: str, email: str, password: str) -> str:
        return json.loads(
            self.manage(
                "create_organization", "--name", name, "--admin-email", email, "--admin-password", password, "--json"
            )
        )["organization_id"]

    def create_key(self) -> str:
        organization = self.create_organization("Access log", "admin@access-log.test", "Access-log-Senha-forte-123")
        return json.loads(
            self.manage("create_api_key", "--organization", organization, "--name", "access log", "--json")
        )["key"]

    def _spawn(self, name: str, command: list[str]) -> None:
        with open(self.workdir / f"{name}.log", "wb") as output:
            self.processes[name] = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
            )

    def start(self) -> None:
        """The web process, as the Procfile writes it; returns once it answers /api/health."""
        command = procfile_command("web")
        assert command == ["gunicorn", "config.wsgi", "--config", "gunicorn.conf.py"], (
            f"the Procfile's web command changed ({command}): check that this test still starts it as shipped"
        )
        self._spawn("web", command)
        wait_for(lambda: self._ready(), timeout=30, message="gunicorn answering /api/health")

    def start_worker(self) -> None:
        """The Celery worker, as the Procfile writes it; returns at once (see wait_for_worker)."""
        self._spawn("worker", procfile_command("worker"))

    def wait_for_worker(self) -> None:
        def ready() -> bool:
            if self.processes["worker"].poll() is not None:
                raise AssertionError(f"the worker exited:\n{self.read('worker')}")
            return "ready." in self.read("worker")

        wait_for(ready, timeout=30, message="the Celery worker")

    def _ready(self) -> bool:
        if self.processes["web"].poll() is not None:
            raise AssertionError(f"gunicorn exited with {self.processes['web'].returncode}:\n{self.read()}")
        return status_of(self.port, "/api/health") == 200

    def stop(self) -> str:
        """Stops every process (their logs are complete once they have exited); returns the web output."""
        for process in self.processes.values():
            if process.poll() is None:
                # To the main process, as a process manager does: it stops its own children.
                os.kill(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        return self.read()

    def read(self, name: str = "web") -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


def leaked_forms(output: str, key: str) -> list[str]:
    """The forms of `key` found in `output`: whole, its secret part, 12 characters of that part
    in a row (a truncated key), the base64 of the Basic credential (padded or not)."""
    secret = key[DISPLAY_PREFIX_LENGTH:]  # the 12-character prefix is stored and listed, the rest is not
    credential = base64.b64encode(f"{key}:".encode()).decode()
    forms = {
        "the whole key": key in output,
        f"the part after {KEY_PREFIX}": key[len(KEY_PREFIX) :] in output,
        "the secret part after the stored prefix": secret in output,
        "12 characters of the secret part": any(secret[i : i + 12] in output for i in range(len(secret) - 11)),
        "base64 of key:": credential in output,
        "base64 of key: without padding": credential.rstrip("=") in output,
    }
    return [name for name, found in forms.items() if found]
