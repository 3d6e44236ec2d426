"""What gunicorn refuses before Django sees a request (a request line or headers over its limits,
a malformed request) is answered in the API's JSON envelope, never an HTML page (found by contract
fuzzing: a long query string got gunicorn's HTML 414)."""

import json
import socket

import pytest

from tests.e2e.shipped import ShippedProcesses


@pytest.fixture(autouse=True)
def _print_logs_on_failure():
    """Replaces tests/e2e/conftest.py's fixture of this name, which would start the session stack."""
    yield


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    processes = ShippedProcesses(tmp_path_factory.mktemp("refusals"))
    processes.manage("migrate", "--noinput")
    processes.start()
    yield processes
    processes.stop()


def raw_request(port: int, request: bytes) -> tuple[int, dict, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in header_lines)}
    return int(status_line.split()[1]), headers, body


CASES = {
    "request-line-too-long": (
        b"GET /api/v1/tickets?busca=" + b"a" * 6000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        414,
        "URI muito longa.",
        "path",
    ),
    "header-too-large": (
        b"GET /api/v1/tickets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Grande: " + b"a" * 9000 + b"\r\n\r\n",
        431,
        "Cabeçalhos muito grandes.",
        "headers",
    ),
    "malformed-request-line": (b"GET\r\n\r\n", 400, "Requisição inválida.", "request"),
}


@pytest.mark.parametrize(("request_bytes", "status", "message", "field"), CASES.values(), ids=CASES.keys())
def test_the_web_servers_own_refusals_are_in_the_envelope(web, request_bytes, status, message, field):
    answered, headers, body = raw_request(web.port, request_bytes)

    assert answered == status
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    envelope = json.loads(body)
    assert envelope["success"] is False
    assert (envelope["status"], envelope["message"], envelope["data"]) == (status, message, None)
    assert envelope["errors"]["field"] == field
    assert b"<html" not in body.lower()
