"""No key, secret, token, password, Authorization header or request body in any log line.

The Procfile's web (gunicorn with gunicorn.conf.py, its access log turned on so it is searched too)
and worker run as shipped (tests/e2e/shipped.py), writing JSON lines at DEBUG, more than production
writes. The test makes an organization (its admin's password) and an agent with a photo (its signed
URL), logs in (access and refresh tokens), creates API keys and webhooks (their secrets) through the
API, then sends every API route, read from the URL resolver so a new route is covered, with the
partner key as Bearer and as Basic and with the panel token; each write also with malformed JSON and
with a body the validation refuses. Every body carries a marker. Webhook deliveries, signed with the
secret, reach a local receiver. Then everything both processes wrote is searched for each value.

The request lines must be there, one per request with its route pattern, status and request id
(echoed in the response): the test cannot pass with logging off.
"""

import json
import re
import secrets
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

import pytest

from tests.authorization import MANAGEMENT, PANEL, PARTNER, door_of, kind_of, params_of
from tests.contract import ALL_EVENTS
from tests.e2e.shipped import ShippedProcesses, basic, leaked_forms
from tests.e2e.stack import Receiver, wait_for
from tests.factories import png_bytes
from tests.routes import api_routes

ADMIN_EMAIL = "admin@logs.test"
UNLIMITED = "100000/m"
GENERATED_ID = re.compile(r"[0-9a-f]{32}")
WRITES = ("POST", "PUT", "PATCH")  # the methods that send a body
ACCESS_LOG_LINE = re.compile(r'"(?:GET|POST|PUT|PATCH|DELETE) /api/\S* HTTP/1\.1" \d{3}')


@pytest.fixture(autouse=True)
def _print_logs_on_failure():
    """Replaces tests/e2e/conftest.py's fixture of this name, which would start the session stack."""
    yield


@dataclass
class Sent:
    request_id: str
    method: str
    route: str
    status: int
    echoed: str | None


class Client:
    """HTTP to the web process; every request is sent with a request id of its own and remembered."""

    def __init__(self, port: int):
        self.port = port
        self.sent: list[Sent] = []

    def send(self, method, path, route, *, authorization=None, body=None, request_id=None) -> tuple[int, dict]:
        request_id = f"req-{len(self.sent)}" if request_id is None else request_id
        headers = {"X-Request-ID": request_id}
        if authorization:
            headers["Authorization"] = authorization
        if body is not None:
            headers["Content-Type"] = "application/json"
            body = body if isinstance(body, bytes) else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", body, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw, echoed = response.status, response.read(), response.headers.get("X-Request-ID")
        except urllib.error.HTTPError as error:
            status, raw, echoed = error.code, error.read(), error.headers.get("X-Request-ID")
        self.sent.append(Sent(request_id, method, route, status, echoed))
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, {}  # the Swagger page, an image


class Secrets:
    """Every value that must never be logged, by name."""

    def __init__(self):
        self.values: dict[str, str] = {}
        self.keys: list[str] = []

    def add(self, name: str, value: str) -> str:
        self.values[name] = value
        return value

    def add_key(self, key: str) -> str:
        """A partner key: also its secret part, 12 characters of it, its Basic form (leaked_forms)."""
        self.keys.append(key)
        return self.add(f"key {len(self.keys)}", key)

    def add_token(self, name: str, token: str) -> str:
        """A JWT, and on its own its signature, the part that makes it a credential."""
        self.add(f"{name} (signature)", token.rsplit(".", 1)[1])
        return self.add(name, token)

    def found_in(self, output: str) -> list[str]:
        found = [name for name, value in self.values.items() if value in output]
        for number, key in enumerate(self.keys, 1):
            found += [f"key {number}: {form}" for form in leaked_forms(output, key)]
        if "authorization" in output.lower():
            found.append("the word Authorization")
        return found


class Scenario:
    """The service's credentials and objects, made through the API, and every route sent."""

    def __init__(self, service: ShippedProcesses, hook_url: str):
        self.client = Client(service.port)
        self.hidden = Secrets()
        self.marker = self.hidden.add("body marker", f"MARCADOR-{secrets.token_hex(8)}")
        self.password = self.hidden.add("password", f"Senha-{secrets.token_urlsafe(12)}")
        self.hook_url = hook_url
        self.ids: dict[str, str] = {}

    def post(self, route: str, body: dict | None, authorization: str, expected: int, **ids: str) -> dict:
        path = route.format(**ids)
        status, answer = self.client.send("POST", path, route, authorization=authorization, body=body)
        assert status == expected, answer
        return answer["data"]

    def credentials(self) -> None:
        """A panel login; two keys (one to revoke); two webhooks (one to delete)."""
        login = self.post("/api/auth/login", {"email": ADMIN_EMAIL, "senha": self.password}, None, 200)
        self.panel = f"Bearer {self.hidden.add_token('access token', login['access_token'])}"
        self.refresh = self.hidden.add_token("refresh token", login["refresh_token"])
        key = self.post("/api/api-keys", {"nome": f"ERP {self.marker}"}, self.panel, 201)
        self.key = self.hidden.add_key(key["chave"])
        self.partner = f"Bearer {self.key}"
        doomed = self.post("/api/api-keys", {"nome": "Outra"}, self.panel, 201)
        self.hidden.add_key(doomed["chave"])
        self.ids["credential"] = doomed["id"]
        for name, events in (("webhook", ALL_EVENTS), ("spare webhook", ["ticket.resolvido"])):
            webhook = self.post(
                "/api/webhooks", {"nome": name, "url": self.hook_url, "eventos": events}, self.panel, 200
            )
            self.hidden.add(f"{name} secret", webhook["segredo"])
            self.hidden.add(f"{name} secret after whsec_", webhook["segredo"].removeprefix("whsec_"))
            self.ids[name] = webhook["id"]

    def objects(self) -> None:
        """A ticket with a customer reply and an agent reply (its event is delivered, signed), a test
        delivery, and the agent photo's signed URL."""
        text = self.marker
        ticket = self.post(
            "/api/v1/tickets", {"assunto": text, "descricao": text, "solicitante": {"nome": text}}, self.partner, 201
        )
        self.ids["ticket"] = ticket["id"]
        field = {"chave": "pedido", "nome": text, "tipo": "texto"}
        self.ids["custom_field"] = self.post("/api/campos", field, self.panel, 201)["id"]
        reply = {"mensagem": text, "interna": False}
        customer_reply = self.post("/api/v1/tickets/{id}/respostas", reply, self.partner, 201, id=ticket["id"])
        agent_reply = self.post("/api/tickets/{id}/respostas", reply, self.panel, 201, id=ticket["id"])
        self.ids["customer reply"], self.ids["agent reply"] = customer_reply["id"], agent_reply["id"]
        delivery = self.post("/api/webhooks/{id}/testar", None, self.panel, 200, id=self.ids["webhook"])
        self.ids["delivery"] = delivery["id"]
        status, agents = self.client.send("GET", "/api/v1/atendentes", "/api/v1/atendentes", authorization=self.partner)
        [photo_url] = [agent["avatar_url"] for agent in agents["data"]["data"] if agent["avatar_url"]]
        self.photo_token = self.hidden.add("photo token", photo_url.rsplit("/", 1)[1])
        self.hidden.add("photo token (signature)", self.photo_token.rsplit(":", 1)[1])

    def path(self, route: str, method: str) -> str:
        path = route
        for param in params_of(route):
            path = path.replace(f"{{{param}}}", self._value_of(route, param, method), 1)
        return path

    def _value_of(self, route: str, param: str, method: str) -> str:
        if param == "token":
            return self.photo_token
        if param == "resposta":
            return self.ids["customer reply" if door_of(route) == PARTNER else "agent reply"]
        kind = kind_of(route, param)
        if kind == "webhook" and method == "DELETE":
            return self.ids["spare webhook"]  # the one the deliveries go to stays
        if kind == "contact":
            # No answer of the API shows a contact's id (the admin does): its routes answer their 404 here,
            # which is logged like any other (tests/integrations/test_data_subject_requests.py covers the 200s).
            return str(uuid.uuid4())
        if kind == "macro":
            # Macros are made in the admin, not through the API: the route answers its 404, logged like any other
            # (tests/macros covers applying one).
            return str(uuid.uuid4())
        return self.ids[kind]

    def valid_body(self, method: str, route: str) -> dict | None:
        if method not in WRITES:
            return None
        text = {"nome": self.marker, "mensagem": self.marker, "assunto": self.marker, "descricao": self.marker}
        return {
            "POST /api/v1/tickets": {**text, "solicitante": {"nome": self.marker}},
            "POST /api/webhooks": {"nome": self.marker, "url": self.hook_url, "eventos": ALL_EVENTS},
            "PATCH /api/webhooks/{id}": {"nome": self.marker},
            "PATCH /api/tickets/{id}": {"prioridade": "alta"},
            "POST /api/tickets/lote": {"ids": [self.ids["ticket"]], "prioridade": "baixa"},
            "POST /api/auth/login": {"email": ADMIN_EMAIL, "senha": self.password},
            "POST /api/auth/refresh": {"refresh_token": self.refresh},
            "POST /api/auth/logout": {"refresh_token": self.refresh},
            "PUT /api/horario-atendimento": {
                "fuso_horario": "UTC",
                "intervalos": [],
                "feriados": [{"data": "2026-12-25", "nome": self.marker}],
            },
            "PUT /api/sla": {"politicas": [{"prioridade": "alta", "resolucao": 240}]},
        }.get(f"{method} {route}", text)

    def every_route(self) -> None:
        """Every route and method with the key as Bearer and as Basic and with the panel token; each
        write also with malformed JSON and with a body the validation refuses, both with the marker."""
        operations = [(route, method) for route, methods in api_routes().items() for method in methods]
        operations.sort(key=lambda operation: operation[1] == "DELETE")  # last: they revoke and remove
        for route, method in operations:
            for authorization in (self.partner, basic(self.key), self.panel):
                status, answer = self.client.send(
                    method,
                    self.path(route, method),
                    route,
                    authorization=authorization,
                    body=self.valid_body(method, route),
                )
                self._keep_what_was_issued(method, route, status, answer)
            if method in WRITES:
                right = self.panel if door_of(route) in (PANEL, MANAGEMENT) else self.partner
                for bad in (f'{{"mensagem": "{self.marker}'.encode(), {"mensagem": 1, "nome": 2, "x": self.marker}):
                    self.client.send(method, self.path(route, method), route, authorization=right, body=bad)
        # Request ids the service makes up: none given, and one that is not sane.
        self.client.send("GET", "/api/health", "/api/health", request_id="")
        self.client.send("GET", "/api/health", "/api/health", request_id=f"{self.marker} com espaço")

    def _keep_what_was_issued(self, method: str, route: str, status: int, answer: dict) -> None:
        number = len(self.client.sent)
        if route in ("/api/auth/login", "/api/auth/refresh") and status == 200:
            self.hidden.add_token(f"access token {number}", answer["data"]["access_token"])
            self.refresh = self.hidden.add_token(f"refresh token {number}", answer["data"]["refresh_token"])
        elif (method, route, status) == ("POST", "/api/api-keys", 201):
            self.hidden.add_key(answer["data"]["chave"])
        elif (method, route, status) == ("POST", "/api/webhooks", 200):
            self.hidden.add(f"webhook secret {number}", answer["data"]["segredo"])


@pytest.fixture
def service(tmp_path):
    processes = ShippedProcesses(
        tmp_path,
        WEB_ACCESS_LOG="true",
        LOG_FORMAT="json",
        LOG_LEVEL="DEBUG",
        WEBHOOK_ALLOW_INSECURE_URLS="true",
        SILENCED_SYSTEM_CHECKS="integrations.E002",  # the receiver is on this machine, over http
        LOGIN_RATE_LIMIT=UNLIMITED,
        LOGIN_ACCOUNT_RATE_LIMIT=UNLIMITED,
        PANEL_RATE_LIMIT=UNLIMITED,
        PARTNER_RATE_LIMIT=UNLIMITED,
        PARTNER_UNAUTHENTICATED_RATE_LIMIT=UNLIMITED,
    )
    yield processes
    processes.stop()


@pytest.fixture
def receiver():
    running = Receiver().start()
    yield running
    running.stop()


def assert_one_request_line_per_request(output: str, scenario: Scenario) -> list[dict]:
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    requests = [line for line in lines if line.get("event") == "request"]
    by_id: dict[str, list[dict]] = {}
    for line in requests:
        by_id.setdefault(line["request_id"], []).append(line)
    for sent in scenario.client.sent:
        if sent.request_id in ("", f"{scenario.marker} com espaço"):
            assert GENERATED_ID.fullmatch(sent.echoed or ""), sent
        else:
            assert sent.echoed == sent.request_id, sent
        found = by_id.get(sent.echoed, [])
        assert len(found) == 1, f"{len(found)} request lines for {sent}"
        assert (found[0]["method"], found[0]["route"], found[0]["status"]) == (sent.method, sent.route, sent.status)
    return requests


def test_no_secret_reaches_any_log_line_and_every_request_is_logged_once(service, receiver, tmp_path):
    scenario = Scenario(service, receiver.base_url + receiver.new_path())
    service.manage("migrate", "--noinput")
    organization = service.create_organization("Logs", ADMIN_EMAIL, scenario.password)
    photo = tmp_path / "foto.png"
    photo.write_bytes(png_bytes())
    service.manage(
        "create_agent",
        "--organization",
        organization,
        "--name",
        "Ana",
        "--email",
        "ana@logs.test",
        "--avatar",
        str(photo),
    )
    service.start_worker()
    service.start()

    scenario.credentials()
    scenario.objects()
    scenario.every_route()
    wait_for(lambda: len(receiver.requests) >= 2, timeout=20, message="the webhook deliveries")
    wait_for(
        lambda: service.read("worker").count("webhook_delivery_attempt") >= 2, timeout=10, message="the attempt lines"
    )
    web, worker = service.stop(), service.read("worker")

    for name, output in (("gunicorn (web)", web), ("worker", worker)):
        assert scenario.hidden.found_in(output) == [], f"{name} wrote a secret:\n{output}"
    # What was searched is there: a request line per request, the access log, the delivery attempts.
    requests = assert_one_request_line_per_request(web, scenario)
    partner_lines = [line for line in requests if "credential_prefix" in line]
    assert {(line["organization_id"], line["credential_prefix"]) for line in partner_lines} == {
        (organization, scenario.key[:12])
    }
    assert {line.get("user_id") for line in requests} - {None}, "no panel request line names its user"
    assert len(ACCESS_LOG_LINE.findall(web)) >= len(scenario.client.sent), "the access log was not written"
    attempts = [json.loads(line) for line in worker.splitlines() if "webhook_delivery_attempt" in line]
    assert {(line["status_code"], line["error_class"], line["outcome"]) for line in attempts} == {
        (200, None, "sucesso")
    }
    assert {"webhook.teste", "ticket.resposta_publica"} <= {line["event_kind"] for line in attempts}
    assert scenario.ids["webhook"] in {line["webhook_id"] for line in attempts}
