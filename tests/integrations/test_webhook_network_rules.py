"""Deliveries go straight to the receiver (no proxy from the environment), and unsafe settings cannot
reach production."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.checks import run_checks

from integrations import delivery as delivery_module
from tests.factories import make_test_delivery, make_webhook


@pytest.fixture
def receiver():
    received: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], received
    server.shutdown()


def test_a_proxy_in_the_environment_does_not_carry_deliveries(organization, settings, receiver, monkeypatch):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    port, received = receiver
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    delivery_module._session_for.cache_clear()
    delivery = make_test_delivery(make_webhook(organization, url=f"http://127.0.0.1:{port}/hook"))

    outcome = delivery_module.delivery_send(delivery)

    assert outcome.status_code == 200, outcome.error
    assert len(received) == 1


def test_private_networks_with_debug_off_stop_the_service(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE = True
    settings.DEBUG = False

    errors = [message for message in run_checks() if message.id == "integrations.E001"]

    assert len(errors) == 1
    assert errors[0].is_serious()


def test_private_networks_in_development_pass_the_checks(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE = True
    settings.DEBUG = True

    assert [message for message in run_checks() if message.id == "integrations.E001"] == []
