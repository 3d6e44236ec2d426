"""Metrics add up across processes and servers: two gunicorn servers on two ports (two processes
each, recycled every few requests, so dead processes' counts must survive) and two Celery workers
(each with its own metrics port), on one machine and one DATA_DIR, as docs/operations.md sets
them up. Every server is a scrape target of its own; their sums are what the test sent."""

import urllib.error
import urllib.request

import pytest

from tests.e2e.scrape import scrape, total
from tests.e2e.stack import VENV_BIN, Stack, wait_for
from tools.ports import free_port

TOKEN = "e2e-metrics-token-0123456789abcdef"
RECYCLE_AFTER = 8  # requests a gunicorn process serves before it exits and is replaced
SUCCESS = ("helpdesk_webhook_delivery_attempts_total", "ticket.resposta_publica", "sucesso")


class MetricsStack(Stack):
    def __init__(self, workdir):
        super().__init__(workdir)
        self.env["METRICS_TOKEN"] = TOKEN
        self.web_ports = {"web": self.port, "web2": free_port()}
        self.worker_ports = {"worker": free_port(), "worker2": free_port()}

    def start_web(self) -> None:
        for name, port in self.web_ports.items():
            self._spawn(
                name,
                [
                    str(VENV_BIN / "gunicorn"),
                    "config.wsgi",
                    "--bind",
                    f"127.0.0.1:{port}",
                    "--workers",
                    "2",
                    "--threads",
                    "1",
                    "--max-requests",
                    str(RECYCLE_AFTER),
                    "--max-requests-jitter",
                    "0",
                    "--timeout",
                    "60",
                ],
            )
        for port in self.web_ports.values():
            wait_for(lambda port=port: status_of(port, "/api/health") == 200, timeout=60, message=f"web on {port}")

    def start_worker(self) -> None:
        for name, port in self.worker_ports.items():
            shared = self.env
            self.env = {**shared, "WORKER_METRICS_PORT": str(port)}
            try:
                self._spawn(name, self._worker_command("--hostname", f"{name}@%h", "--concurrency", "2"))
            finally:
                self.env = shared
        for name in self.worker_ports:
            self._wait_until_ready(name, timeout=60)

    def server_directory(self, name: str):
        return self.data_dir / "metrics" / f"web-{self.processes[name].pid}"


@pytest.fixture(scope="module")
def metrics_stack(tmp_path_factory):
    running = MetricsStack(tmp_path_factory.mktemp("metrics")).start()
    yield running
    running.stop()


def status_of(port: int, path: str, headers=None) -> int | None:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def test_requests_add_up_across_two_servers_and_every_process_each_ran(metrics_stack):
    ticket = metrics_stack.create_ticket()
    path = f"/api/v1/tickets/{ticket['id']}"
    sent = {"web": 20, "web2": 13}
    auth = {"Authorization": f"Bearer {metrics_stack.api_key}"}

    for name, count in sent.items():
        for _ in range(count):
            assert status_of(metrics_stack.web_ports[name], path, auth) == 200

    scrapes = {name: scrape(port, TOKEN) for name, port in metrics_stack.web_ports.items()}
    route = ("GET", "/api/v1/tickets/{id}")
    for name, count in sent.items():
        assert scrapes[name][("helpdesk_http_requests_total", *route, "200")] == count
        assert scrapes[name][("helpdesk_http_request_duration_seconds_count", *route)] == count
        # More requests than a process serves: several processes wrote, most of them gone by now.
        writers = list(metrics_stack.server_directory(name).glob("counter_*.db"))
        assert len(writers) >= -(-count // RECYCLE_AFTER)
    assert total(scrapes.values(), ("helpdesk_http_requests_total", *route, "200")) == 33


def test_deliveries_add_up_across_two_workers_and_each_post_is_one_attempt(metrics_stack, receiver):
    hook = receiver.new_path(200)
    metrics_stack.create_webhook(receiver.base_url + hook, events=["ticket.resposta_publica"])
    ticket = metrics_stack.create_ticket()

    for n in range(12):
        metrics_stack.agent_reply(ticket["id"], f"Resposta {n}")

    wait_for(lambda: len({r.headers["X-Service-Delivery"] for r in receiver.at(hook)}) == 12, timeout=60)
    workers = list(metrics_stack.worker_ports.values())
    wait_for(lambda: total([scrape(port, TOKEN) for port in workers], SUCCESS) == 12, timeout=30, message="12 attempts")
    scrapes = [scrape(port, TOKEN) for port in workers]
    attempts = sum(value for samples in scrapes for key, value in samples.items() if key[0] == SUCCESS[0])
    assert total(scrapes, SUCCESS) == 12
    assert attempts == len(receiver.at(hook))  # nothing else was sent, nothing counted twice
    for port in metrics_stack.web_ports.values():
        web = scrape(port, TOKEN)
        assert not [key for key in web if key[0] == SUCCESS[0]]  # a worker's counts are only on its own port
        assert web[("helpdesk_webhook_deliveries_pending", "pendente")] == 0
        assert web[("helpdesk_webhook_queue_lag_seconds",)] == 0


def test_a_workers_metrics_port_wants_the_token_too(metrics_stack):
    port = metrics_stack.worker_ports["worker"]

    assert status_of(port, "/metrics") == 401
    assert status_of(port, "/metrics", {"Authorization": "Bearer errado"}) == 401
    assert status_of(port, "/outro", {"Authorization": f"Bearer {TOKEN}"}) == 404
    assert status_of(port, "/metrics", {"Authorization": f"Bearer {TOKEN}"}) == 200


def test_each_server_has_a_directory_of_its_own(metrics_stack):
    directories = {path.name for path in (metrics_stack.data_dir / "metrics").iterdir() if path.is_dir()}

    webs = {metrics_stack.server_directory(name).name for name in metrics_stack.web_ports}
    workers = {f"celery-{metrics_stack.processes[name].pid}" for name in metrics_stack.worker_ports}
    assert webs | workers <= directories
