"""A worker's metrics port listens on this machine only unless the operator opens it (issue 19, item 12),
and METRICS_TOKEN, the only guard of every metrics endpoint, is long enough in production."""

import socket
import urllib.request

import pytest
from django.core import checks

from foundation.metrics import worker
from tests.metrics import TOKEN
from tools.ports import free_port


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a TCP socket listening on `port`, as the kernel lists them."""
    addresses = set()
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                addresses.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return addresses


@pytest.fixture
def served(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.WORKER_METRICS_PORT = free_port()
    servers = []
    yield lambda: servers.append(worker._serve()) or settings.WORKER_METRICS_PORT
    for server in servers:
        if server is not None:
            server.shutdown()
            server.server_close()


def test_a_workers_metrics_listen_on_this_machine_only_by_default(served):
    port = served()

    assert listening_addresses(port) == {"127.0.0.1"}
    scrape = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(scrape, timeout=10) as answer:
        assert answer.status == 200


def test_the_operator_opens_them_to_prometheus_with_worker_metrics_address(served, settings):
    settings.WORKER_METRICS_ADDRESS = "0.0.0.0"  # what the operator sets behind a firewall

    port = served()

    assert listening_addresses(port) == {"0.0.0.0"}


def errors_of(identifier: str) -> list[checks.CheckMessage]:
    return [message for message in checks.run_checks() if message.id == identifier]


@pytest.mark.parametrize("token", ["metrics", "0123456789abcdef0123456789abcde"])
def test_a_short_metrics_token_stops_the_service(settings, token):
    settings.METRICS_TOKEN = token

    [error] = errors_of("helpdesk.E002")

    assert error.is_serious()
    assert error.msg == f"METRICS_TOKEN has {len(token)} characters; at least 32 are needed."


@pytest.mark.parametrize(("token", "debug"), [("", False), ("0123456789abcdef0123456789abcdef", False), ("dev", True)])
def test_no_token_a_long_one_or_development_passes(settings, token, debug):
    settings.METRICS_TOKEN, settings.DEBUG = token, debug

    assert errors_of("helpdesk.E002") == []
