"""Partner keys never reach gunicorn's access log (finding 1 of the security review).

gunicorn's default access log format has %(u)s, the HTTP Basic user name, and the contract's
Basic form puts the whole key there (`Authorization: Basic base64(<key>:)`). The application logs
one line per request itself (foundation/request_log.py), so gunicorn.conf.py leaves the access log off
unless WEB_ACCESS_LOG turns it on, and then logs without %(u)s; these tests fail if it is ever on by
default, if %(u)s comes back, or if an atom that carries the `Authorization` header does.

The end-to-end test starts the Procfile's `web:` command as it is written (gunicorn with
gunicorn.conf.py) with the access log turned on, on the embedded default (tests/e2e/shipped.py).
"""

import os
import re
import runpy
from datetime import timedelta
from types import SimpleNamespace

import pytest
from gunicorn.config import Config
from gunicorn.glogging import Logger

from integrations.keys import generate_key
from tests.e2e.shipped import NOT_INHERITED, ShippedProcesses, basic, leaked_forms, status_of
from tests.e2e.stack import ROOT

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


@pytest.fixture
def web(tmp_path):
    processes = ShippedProcesses(tmp_path, WEB_ACCESS_LOG="true")
    processes.manage("migrate", "--noinput")
    yield processes
    processes.stop()


def test_partner_keys_never_reach_the_access_log_of_the_shipped_web_process(web):
    key = web.create_key()
    wrong_key = generate_key()  # well-formed (checksum included), looked up, unknown
    web.start()

    assert status_of(web.port, TICKETS, basic(key)) == 200
    assert status_of(web.port, TICKETS, f"Bearer {key}") == 200
    assert status_of(web.port, TICKETS, basic(wrong_key)) == 401
    output = web.stop()

    # The access log (turned on here) has these three requests: the test cannot pass with it off.
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


def test_the_access_log_is_off_by_default_and_on_only_when_asked(shipped_config, monkeypatch):
    assert shipped_config["accesslog"] is None
    for value, accesslog in (("true", "-"), ("1", "-"), ("false", None)):
        monkeypatch.setenv("WEB_ACCESS_LOG", value)
        assert runpy.run_path(str(ROOT / "gunicorn.conf.py"))["accesslog"] == accesslog


def test_the_access_log_format_has_no_credential_atom(shipped_config):
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


def access_line(shipped_config, tmp_path, path: str, authorization: str) -> str:
    """What the shipped logger class writes, in the shipped format, for a GET of `path`."""
    config = Config()
    config.set("accesslog", str(tmp_path / "access.log"))
    config.set("errorlog", os.devnull)
    config.set("access_log_format", shipped_config["access_log_format"])
    logger = shipped_config["logger_class"](config)
    assert isinstance(logger, Logger)
    try:
        logger.access(
            SimpleNamespace(status="200 OK", sent=2, headers=[("Content-Type", "application/json")]),
            SimpleNamespace(headers=[("HOST", "127.0.0.1"), ("AUTHORIZATION", authorization)]),
            {
                "REQUEST_METHOD": "GET",
                "RAW_URI": path,
                "PATH_INFO": path,
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
    return (tmp_path / "access.log").read_text()


@pytest.mark.parametrize("scheme", ["basic", "bearer"])
def test_gunicorns_own_logger_writes_no_key_with_the_shipped_format(shipped_config, tmp_path, scheme):
    """The shipped format rendered by the shipped logger class's access() for a partner request."""
    key = generate_key()
    authorization = basic(key) if scheme == "basic" else f"Bearer {key}"

    written = access_line(shipped_config, tmp_path, TICKETS, authorization)

    assert f'"GET {TICKETS} HTTP/1.1" 200' in written
    assert leaked_forms(written, key) == [], written


def test_a_signed_photo_url_is_logged_without_its_token(shipped_config, tmp_path):
    """The token of /api/v1/atendentes/avatar/<token> is a credential, valid for 30 minutes."""
    token = ".eJwNyjsSwjAMBcC7qEbEH0WWuM2zbNNlGGBoGO5Ott4vgW4UrUzkapzKChadha1oZVftrbWRo4MudJwVH7zx:1xVEOw:Jqapfov"

    written = access_line(shipped_config, tmp_path, f"/api/v1/atendentes/avatar/{token}", "")

    assert '"GET /api/v1/atendentes/avatar/{token} HTTP/1.1" 200' in written
    for part in token.split(":"):
        assert part not in written


def test_a_signed_attachment_url_is_logged_without_its_token(shipped_config, tmp_path):
    """The token of /api/v1/anexos/<token> opens a file for 30 minutes."""
    token = ".eJwNyrsNwDAIBcBdqINkLAyPbOMfbQaIsnt89b3U6SZgLmtZuPairNOTATeWULQwTBOhi55Tm:1xVGdI:ZujC0Hul8gb09CeM96w4lh3"

    written = access_line(shipped_config, tmp_path, f"/api/v1/anexos/{token}", "")

    assert '"GET /api/v1/anexos/{token} HTTP/1.1" 200' in written
    for part in token.split(":"):
        assert part not in written
