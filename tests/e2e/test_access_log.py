"""Partner keys never reach gunicorn's access log (finding 1 of the security review).

gunicorn's default access log format has %(u)s, the HTTP Basic user name, and the contract's
Basic form puts the whole key there (`Authorization: Basic base64(<key>:)`). gunicorn.conf.py
logs without it; these tests fail if it ever comes back, or if an atom that carries the
`Authorization` header does.

The end-to-end test starts the Procfile's `web:` command as it is written (gunicorn with
gunicorn.conf.py), with PORT and DATA_DIR set to temporary values, and nothing else: not the
session `stack` of conftest.py, whose gunicorn gets its own flags. It always runs on the embedded
default (SQLite file in DATA_DIR, SQLite broker), also in CI's PostgreSQL run: DATABASE_URL,
REDIS_URL and CELERY_BROKER_URL are removed from the child's environment. The access log is
written by gunicorn around the application, whatever database answers the request, so a database
of its own on PostgreSQL would add seconds and a clean-up and prove nothing more. REDIS_URL would
also switch gunicorn.conf.py to sync workers; those write the access log through the same
`Logger.access`, which the unit tests below exercise directly with the shipped format.
"""

import base64
import json
import os
import re
import runpy
import shlex
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import timedelta
from types import SimpleNamespace

import pytest
from gunicorn.config import Config
from gunicorn.glogging import Logger

from integrations.keys import DISPLAY_PREFIX_LENGTH, KEY_PREFIX, generate_key
from tests.e2e.stack import ROOT, VENV_BIN, free_port, wait_for

# Variables that would make the child something other than the shipped web process: another
# database or broker (see the module docstring), or gunicorn settings other than gunicorn.conf.py's
# defaults (GUNICORN_CMD_ARGS is read by gunicorn itself and could set its own access_log_format).
NOT_INHERITED = (
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "REQUIRE_POSTGRES",
    "GUNICORN_CMD_ARGS",
    "WEB_ACCESS_LOG",
    "WEB_CONCURRENCY",
    "WEB_THREADS",
)
# Request headers whose value is a credential: a partner key, a panel token, an admin session.
CREDENTIAL_HEADERS = {"authorization", "proxy-authorization", "cookie"}
# A %-style atom as gunicorn formats it: %(name)s, also with flags, width or another conversion.
ATOM = re.compile(r"%\(([^)]*)\)[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]")
TICKETS = "/api/v1/tickets"


@pytest.fixture(autouse=True)
def _print_logs_on_failure():
    """Replaces tests/e2e/conftest.py's fixture of this name, which would start the session stack."""
    yield


# --- the shipped web process ---------------------------------------------------------------------


def procfile_web_command() -> list[str]:
    for line in (ROOT / "Procfile").read_text().splitlines():
        name, separator, command = line.partition(":")
        if separator and name.strip() == "web":
            return shlex.split(command)
    raise AssertionError("the Procfile has no web: process")


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


class WebProcess:
    """The Procfile's `web:` on a DATA_DIR of its own, migrated, with one organization and key."""

    def __init__(self, workdir):
        self.port = free_port()
        self.output = workdir / "web.log"
        self.env = {name: value for name, value in os.environ.items() if name not in NOT_INHERITED}
        self.env.update(
            DATA_DIR=str(workdir / "data"),
            PORT=str(self.port),
            # As `make run` starts the runner: the virtualenv's gunicorn first on PATH.
            PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            DJANGO_SETTINGS_MODULE="config.settings",
            PYTHONUNBUFFERED="1",
        )
        self.process = None

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

    def create_key(self) -> str:
        organization = json.loads(
            self.manage(
                "create_organization",
                "--name",
                "Access log",
                "--admin-email",
                "admin@access-log.test",
                "--admin-password",
                "Access-log-Senha-forte-123",
                "--json",
            )
        )["organization_id"]
        return json.loads(
            self.manage("create_api_key", "--organization", organization, "--name", "access log", "--json")
        )["key"]

    def start(self) -> None:
        command = procfile_web_command()
        assert command == ["gunicorn", "config.wsgi", "--config", "gunicorn.conf.py"], (
            f"the Procfile's web command changed ({command}): check that this test still starts it as shipped"
        )
        with open(self.output, "wb") as output:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_for(lambda: self._ready(), timeout=30, message="gunicorn answering /api/health")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"gunicorn exited with {self.process.returncode}:\n{self.read()}")
        return status_of(self.port, "/api/health") == 200

    def stop(self) -> str:
        """Stops gunicorn (its log is complete once it has exited) and returns stdout + stderr."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        return self.read()

    def read(self) -> str:
        return self.output.read_text(errors="replace")


@pytest.fixture
def web(tmp_path):
    process = WebProcess(tmp_path)
    process.manage("migrate", "--noinput")
    yield process
    process.stop()


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


def test_partner_keys_never_reach_the_access_log_of_the_shipped_web_process(web):
    key = web.create_key()
    wrong_key = generate_key()  # well-formed (checksum included), looked up, unknown
    web.start()

    assert status_of(web.port, TICKETS, basic(key)) == 200
    assert status_of(web.port, TICKETS, f"Bearer {key}") == 200
    assert status_of(web.port, TICKETS, basic(wrong_key)) == 401
    output = web.stop()

    # The access log is on and has these three requests: the test cannot pass with logging off.
    statuses = sorted(re.findall(rf'"GET {re.escape(TICKETS)} HTTP/1\.1" (\d{{3}})', output))
    assert statuses == ["200", "200", "401"], f"the access log lacks the partner requests:\n{output}"
    for secret in (key, wrong_key):
        assert leaked_forms(output, secret) == [], f"a key reached gunicorn's output:\n{output}"


# --- the configuration module --------------------------------------------------------------------


@pytest.fixture
def shipped_config(monkeypatch) -> dict:
    """gunicorn.conf.py's settings with no variable of the environment overriding them."""
    for name in NOT_INHERITED:
        monkeypatch.delenv(name, raising=False)
    return runpy.run_path(str(ROOT / "gunicorn.conf.py"))


def credential_atoms(log_format: str) -> list[str]:
    """Atoms of an access log format that can print a credential of the request."""
    found = []
    for atom in ATOM.findall(log_format):
        name = atom.lower()
        header = re.fullmatch(r"\{(.+)\}([ie])", name)
        if atom == "u":
            found.append(atom)  # the HTTP Basic user name: the whole key
        elif header and header[2] == "i" and header[1] in CREDENTIAL_HEADERS:
            found.append(atom)  # a request header
        elif header and header[2] == "e" and header[1] in {f"http_{h.replace('-', '_')}" for h in CREDENTIAL_HEADERS}:
            found.append(atom)  # the same header through the WSGI environ
    return found


def test_the_access_log_is_on_with_a_format_that_has_no_credential_atom(shipped_config):
    assert shipped_config["accesslog"] == "-"
    log_format = shipped_config["access_log_format"]
    assert ATOM.findall(log_format), "the access log format has no atom at all"
    assert credential_atoms(log_format) == []


@pytest.mark.parametrize(
    "log_format",
    [
        '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"',  # gunicorn's default
        "%(h)s %(u)-20s",
        "%(h)s %({Authorization}i)s",
        "%(h)s %({cookie}i)s",
        "%(h)s %({HTTP_AUTHORIZATION}e)s",
    ],
)
def test_the_credential_atom_check_catches_the_user_and_the_authorization_header(log_format):
    assert credential_atoms(log_format) != []


@pytest.mark.parametrize("scheme", ["basic", "bearer"])
def test_gunicorns_own_logger_writes_no_key_with_the_shipped_format(shipped_config, tmp_path, scheme):
    """The shipped format rendered by gunicorn's Logger.access for a partner request."""
    key = generate_key()
    authorization = basic(key) if scheme == "basic" else f"Bearer {key}"
    config = Config()
    config.set("accesslog", str(tmp_path / "access.log"))
    config.set("errorlog", os.devnull)
    config.set("access_log_format", shipped_config["access_log_format"])
    logger = Logger(config)
    try:
        logger.access(
            SimpleNamespace(status="200 OK", sent=2, headers=[("Content-Type", "application/json")]),
            SimpleNamespace(headers=[("HOST", "127.0.0.1"), ("AUTHORIZATION", authorization)]),
            {
                "REQUEST_METHOD": "GET",
                "RAW_URI": TICKETS,
                "PATH_INFO": TICKETS,
                "QUERY_STRING": "",
                "SERVER_PROTOCOL": "HTTP/1.1",
                "REMOTE_ADDR": "127.0.0.1",
                "HTTP_AUTHORIZATION": authorization,
            },
            timedelta(milliseconds=3),
        )
    finally:
        for log in (logger.access_log, logger.error_log):
            for handler in [handler for handler in log.handlers if getattr(handler, "_gunicorn", False)]:
                log.removeHandler(handler)
                handler.close()
    written = (tmp_path / "access.log").read_text()
    assert f'"GET {TICKETS} HTTP/1.1" 200' in written
    assert leaked_forms(written, key) == [], written
