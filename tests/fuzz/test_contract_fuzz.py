"""Contract fuzzing: schemathesis, from the service's own OpenAPI schema, against the running stack.

The stack is the end-to-end one (tests/e2e/stack.py: gunicorn on a database of its own, PostgreSQL
and Redis when DATABASE_URL and REDIS_URL say so). Two organizations are seeded through the API with
real credentials; schemathesis then runs every check on every operation, with schema-valid and
schema-violating data (tests/fuzz/schemathesis.toml, tests/fuzz/hooks.py).

Two runs of the same machinery (docs/decisions.md):
- the full one, `-m fuzz` (`make fuzz`, once per CI run, on PostgreSQL): the coverage, fuzzing and
  stateful phases, FUZZ_MAX_EXAMPLES (default 100) cases per operation in the fuzzing phase;
- a smoke one in `make test`: the fuzzing phase only, a few cases per operation.
"""

import io
import json
import os
import shutil
import signal
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import requests
from PIL import Image

from tests.e2e.stack import ROOT, VENV_BIN, Receiver, Stack, wait_for
from tools.ports import free_port

HERE = Path(__file__).resolve().parent
# Reports, the call log and the seeded fixtures of the last run (CI keeps test-artifacts/).
ARTIFACTS = ROOT / "test-artifacts"
OTHER_PASSWORD = "fuzz-Outra-senha-456"
EVENTS = ["ticket.resposta_publica", "ticket.resposta_editada", "ticket.resolvido"]
# Operations without any input: every request is the same one, a handful says all there is to say.
# The data-subject operations on a contact: its id is listed by GET /api/v1/contatos since issue 21, but it is
# left unseeded there, so the fuzzer never anonymises the contacts the partner's contact operations rely on. The
# fuzzer reaches their 404s and refusals; their 200s are tested in tests/integrations/test_data_subject_requests.py.
WITHOUT_A_KNOWN_ID = {"GET /api/contatos/{id}/exportar", "POST /api/contatos/{id}/anonimizar"}
WITHOUT_INPUT = {
    "GET /api/api-keys",
    "GET /api/webhooks",
    "GET /api/ticket-status",
    "GET /api/health",
    "GET /api/tags",
    "GET /api/campos",
    "GET /api/horario-atendimento",
    "GET /api/sla",
    "GET /api/macros",
}
SMOKE_EXAMPLES = 5
MERGE_SOURCES = 40  # tickets to merge away (each is merged at most once: then its merge is a 409)


@pytest.fixture
def receiver():
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture
def stack(tmp_path_factory):
    running = Stack(tmp_path_factory.mktemp("fuzz"), database_prefix="fuzz_", wsgi="tests.fuzz.offline_wsgi")
    try:
        yield running.start()
    finally:
        running.stop()


def _ok(answer, *codes):
    status, body = answer
    assert status in (codes or (200, 201)), (status, body)
    return body["data"]


class Organization:
    """One organization's credentials and what was seeded in it, through the API."""

    def __init__(self, stack: Stack, *, key: str, key_id: str, token: str, email: str, password: str):
        self.stack, self.key, self.key_id, self.token = stack, key, key_id, token
        self.email, self.password = email, password
        self.paths: dict[str, list[dict]] = defaultdict(list)

    def partner(self, method, path, body=None):
        return _ok(self.stack.request(method, path, body, key=self.key))

    def panel(self, method, path, body=None):
        return _ok(self.stack.request(method, path, body, token=self.token))

    def add(self, label: str, **parameters) -> None:
        self.paths[label].append(parameters)

    def ticket(self, suffix: str, *, full: bool) -> dict:
        body = {"assunto": f"Pedido {suffix}", "descricao": "Pedido atrasado.", "solicitante": {"nome": "Maria"}}
        if full:
            body |= {"prioridade": "alta", "external_id": f"pedido-{suffix}"}
            body["solicitante"] |= {"email": f"maria.{suffix}@example.com", "telefone": "+55 11 5555"}
            body["solicitante"]["external_id"] = f"cliente-{suffix}"
        return self.partner("POST", "/api/v1/tickets", body)

    def statuses(self) -> dict[str, str]:
        return {status["categoria"]: status["id"] for status in self.panel("GET", "/api/ticket-status")}

    def seed_tickets(self, suffix: str, *, states=("aberto",)) -> None:
        statuses = self.statuses()
        for index, state in enumerate(states):
            ticket = self.ticket(f"{suffix}{index}", full=index % 2 == 0)
            tid = ticket["id"]
            customer = self.partner("POST", f"/api/v1/tickets/{tid}/respostas", {"mensagem": "Alguma novidade?"})
            public = self.panel("POST", f"/api/tickets/{tid}/respostas", {"mensagem": "Sai hoje.", "interna": False})
            note = self.panel("POST", f"/api/tickets/{tid}/respostas", {"mensagem": "Cliente VIP.", "interna": True})
            if state != "aberto":
                self.panel("PATCH", f"/api/tickets/{tid}", {"status_id": statuses[state]})
            for label in (
                "GET /api/v1/tickets/{id}",
                "POST /api/v1/tickets/{id}/respostas",
                "POST /api/v1/tickets/{id}/resolver",
                "POST /api/v1/tickets/{id}/reabrir",
                "POST /api/v1/tickets/{id}/avaliacao",
                "PATCH /api/v1/tickets/{id}/tags",
            ):
                self.add(label, id=tid)
            # Tags (issue 22): GET /api/tags and `?tag=` have something to find.
            self.partner("PATCH", f"/api/v1/tickets/{tid}/tags", {"adicionar": ["vip", f"lote-{suffix}"]})
            for label in ("GET /api/tickets/{id}", "PATCH /api/tickets/{id}", "POST /api/tickets/{id}/respostas"):
                self.add(label, id=tid)
            # The partner edits the customer's reply; an agent's reply is a 403, a note a 404.
            for reply in (customer, customer, public, note):
                self.add("PATCH /api/v1/tickets/{id}/respostas/{resposta}", id=tid, resposta=reply["id"])
            # The agent edits its own reply and note; the customer's is a 403.
            for reply in (public, note, customer):
                self.add("PATCH /api/tickets/{id}/respostas/{resposta}", id=tid, resposta=reply["id"])

    def seed_contacts(self) -> None:
        """The contacts the seeded tickets made, as the partner lists them (issue 21)."""
        for contact in self.partner("GET", "/api/v1/contatos?por_pagina=100")["data"]:
            for label in (
                "GET /api/v1/contatos/{id}",
                "PATCH /api/v1/contatos/{id}",
                "GET /api/v1/contatos/{id}/tickets",
            ):
                self.add(label, id=contact["id"])

    def webhook(self, name: str, url: str, *, paths=True) -> dict:
        webhook = self.panel("POST", "/api/webhooks", {"nome": name, "url": url, "eventos": EVENTS})
        if paths:
            for label in (
                "GET /api/webhooks/{id}",
                "PATCH /api/webhooks/{id}",
                "GET /api/webhooks/{id}/entregas",
                "POST /api/webhooks/{id}/testar",
            ):
                self.add(label, id=webhook["id"])
        return webhook

    def deliveries(self, webhook: dict) -> list[dict]:
        return self.panel("GET", f"/api/webhooks/{webhook['id']}/entregas?por_pagina=100")["data"]


def _login(stack: Stack, email: str, password: str) -> dict:
    return _ok(stack.request("POST", "/api/auth/login", {"email": email, "senha": password}))


def _png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def _png(path: Path) -> Path:
    path.write_bytes(_png_bytes())
    return path


def _other_organization(stack: Stack) -> Organization:
    created = json.loads(
        stack.manage(
            "create_organization",
            "--name",
            "Outra",
            "--admin-email",
            "admin@outra.test",
            "--admin-password",
            OTHER_PASSWORD,
            "--json",
        )
    )
    credential = json.loads(
        stack.manage("create_api_key", "--organization", created["organization_id"], "--name", "b", "--json")
    )
    token = _login(stack, "admin@outra.test", OTHER_PASSWORD)["access_token"]
    return Organization(
        stack,
        key=credential["key"],
        key_id=credential["id"],
        token=token,
        email="admin@outra.test",
        password=OTHER_PASSWORD,
    )


# Macros have no API to create them (the admin manages them): made through the service, one per organization.
MACRO_SEED = """
from helpdesk.models import User
from macros.models import Assignment
from macros.services import MacroValues, macro_create
organization_id = User.objects.get(email={email!r}).organization_id
values = MacroValues(name="Fuzz", body="Olá {{{{solicitante.nome}}}}", priority="alta", assignment=Assignment.ME)
print(macro_create(organization_id=organization_id, values=values).pk)
"""


def _seed_macros(stack: Stack, a: "Organization", b: "Organization") -> None:
    """POST /api/tickets/{id}/macros/{macro} on each organization's tickets with its macro (B's: a 404 for A)."""
    for org in (a, b):
        # The last line: `shell` may print what it imported first.
        macro_id = stack.manage("shell", "-c", MACRO_SEED.format(email=org.email)).strip().splitlines()[-1]
        for parameters in org.paths["GET /api/tickets/{id}"]:
            org.add("POST /api/tickets/{id}/macros/{macro}", id=parameters["id"], macro=macro_id)


def _seed_merges(a: "Organization", b: "Organization") -> dict[str, list[str]]:
    """POST /api/tickets/{id}/mesclar: targets of its own for A (the seeded tickets keep their threads), B's tickets
    (a 404 for A); and the tickets a merge's `origens` takes, A's made to be merged away, B's a 404."""
    for n in range(3):
        a.add("POST /api/tickets/{id}/mesclar", id=a.ticket(f"destino-{n}", full=False)["id"])
    for parameters in b.paths["GET /api/tickets/{id}"][:2]:
        b.add("POST /api/tickets/{id}/mesclar", id=parameters["id"])
    return {
        "a": [a.ticket(f"origem-{n}", full=False)["id"] for n in range(MERGE_SOURCES)],
        "b": [parameters["id"] for parameters in b.paths["GET /api/tickets/{id}"]],
    }


def _seed(stack: Stack, receiver: Receiver) -> dict:
    """Both organizations, with tickets in every state, replies of each kind, webhooks with
    delivery logs (the worker delivers to `receiver` while seeding), keys to revoke."""
    from tests.e2e.stack import ADMIN_PASSWORD

    a = Organization(
        stack,
        key=stack.api_key,
        key_id=stack.api_key_id,
        token=stack.token,
        email="admin@e2e.test",
        password=ADMIN_PASSWORD,
    )
    b = _other_organization(stack)

    a.seed_tickets("a", states=("aberto", "aguardando", "resolvido", "fechado"))
    b.seed_tickets("b")
    a.seed_contacts()
    b.seed_contacts()

    # An agent with a photo (a signed avatar URL) beside the admin, who is an agent too.
    stack.manage(
        "create_agent",
        "--organization",
        stack.organization_id,
        "--name",
        "Bia Foto",
        "--email",
        "bia@e2e.test",
        "--avatar",
        str(_png(stack.workdir / "bia.png")),
        "--json",
    )
    agents = a.partner("GET", "/api/v1/atendentes")["data"]
    for agent in agents:
        if agent["avatar_url"]:
            token = agent["avatar_url"].rsplit("/", 1)[1]
            a.add("GET /api/v1/atendentes/avatar/{token}", token=token)
            # The same claims under a forged signature: 403.
            forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
            a.add("GET /api/v1/atendentes/avatar/{token}", token=forged)
    b_agents = b.partner("GET", "/api/v1/atendentes")["data"]

    _seed_attachments(stack, a, b)
    _seed_macros(stack, a, b)
    merge_sources = _seed_merges(a, b)

    # Webhooks: one that answers 200, one that answers 500, one nobody listens to; each gets
    # a delivery log from the agent replies above (and a test event), then the worker stops.
    up = a.webhook("ERP", receiver.base_url + receiver.new_path(200))
    failing = a.webhook("Falha", receiver.base_url + receiver.new_path(500))
    silent = a.webhook("Mudo", f"http://127.0.0.1:{free_port()}/hook")
    spare = [a.webhook(f"Descartável {n}", receiver.base_url + receiver.new_path(200), paths=False) for n in (1, 2)]
    b_hook = b.webhook("ERP B", receiver.base_url + receiver.new_path(200))
    ticket = a.ticket("eventos", full=True)
    a.panel("POST", f"/api/tickets/{ticket['id']}/respostas", {"mensagem": "Resposta com evento.", "interna": False})
    for webhook in (up, failing, silent, b_hook):
        (a if webhook is not b_hook else b).panel("POST", f"/api/webhooks/{webhook['id']}/testar")
    wait_for(
        lambda: all(
            delivery["historico"]
            for org, webhook in ((a, up), (a, failing), (a, silent), (b, b_hook))
            for delivery in org.deliveries(webhook)
        ),
        timeout=60,
        message="a first attempt of every seeded delivery",
    )
    stack.kill("worker")
    stack.kill("beat")
    # From here no delivery is attempted: URLs the fuzzer makes up are never called.
    inactive = a.webhook("Inativo", receiver.base_url + receiver.new_path(200))
    a.panel("PATCH", f"/api/webhooks/{inactive['id']}", {"ativo": False})
    # The receiver needed http and loopback; the fuzzing gets production's URL rules (https, public hosts).
    stack.kill("web", signal.SIGTERM)
    stack.env["WEBHOOK_ALLOW_INSECURE_URLS"] = "false"
    stack.start_web()

    for org, webhooks in ((a, (up, failing, silent)), (b, (b_hook,))):
        for webhook in webhooks:
            for delivery in org.deliveries(webhook):
                org.add("POST /api/webhooks/{id}/entregas/{entrega}/reenviar", id=webhook["id"], entrega=delivery["id"])
    a.paths["PATCH /api/webhooks/{id}"].remove({"id": up["id"]})  # it stays active: testar and reenviar reach 200
    for webhook in spare:
        a.add("DELETE /api/webhooks/{id}", id=webhook["id"])
    b.add("DELETE /api/webhooks/{id}", id=b_hook["id"])

    # Keys made to be revoked, and B's key (a 404 for A).
    for n in range(3):
        a.add("DELETE /api/api-keys/{id}", id=a.panel("POST", "/api/api-keys", {"nome": f"Revogável {n}"})["id"])
    b.add("DELETE /api/api-keys/{id}", id=b.key_id)

    seeded_fields = _seed_custom_fields(a, b)

    # Tickets made to be deleted (the seeded ones stay: PROTECTED), and one of B's (a 404 for A).
    seeded_tickets = [parameters["id"] for parameters in a.paths["GET /api/tickets/{id}"]]
    for n in range(3):
        a.add("DELETE /api/tickets/{id}", id=a.ticket(f"descartavel-{n}", full=False)["id"])
    b.add("DELETE /api/tickets/{id}", id=b.paths["GET /api/tickets/{id}"][0]["id"])

    other_ids = {value for parameters in _all(b.paths) for value in parameters.values()}
    other_ids |= set(b.statuses().values()) | {agent["id"] for agent in b_agents}
    return {
        "base_url": stack.base_url,
        # A public address (IANA's, for examples) for valid webhook bodies: nothing is delivered to it.
        "public_url": "https://93.184.216.34/fuzz",
        "partner_key": a.key,
        "admin": {"email": a.email, "senha": a.password},
        # Single-use: a refresh token is blacklisted once used.
        "refresh_tokens": [_login(stack, a.email, a.password)["refresh_token"] for _ in range(6)],
        "logout_tokens": [_login(stack, a.email, a.password)["refresh_token"] for _ in range(2)],
        "paths": {
            label: {"a": a.paths[label], "b": b.paths[label] or a.paths[label]} for label in set(a.paths) | set(b.paths)
        },
        "other_organization_ids": sorted(other_ids - {""}),
        "protected": {
            "DELETE /api/api-keys/{id}": {"id": [a.key_id]},
            "DELETE /api/webhooks/{id}": {"id": [up["id"], failing["id"]]},
            "PATCH /api/webhooks/{id}": {"id": [up["id"]]},
            "DELETE /api/tickets/{id}": {"id": seeded_tickets},
            # A's seeded fields keep their definitions: the field PATCH of a ticket meets them as seeded.
            "DELETE /api/campos/{id}": {"id": list(seeded_fields.values())},
            "PATCH /api/campos/{id}": {"id": list(seeded_fields.values())},
        },
        "field_values": FIELD_VALUES,
        "ticket_update_values": {
            "status_id": {"a": list(a.statuses().values()), "b": list(b.statuses().values())},
            "atendente_id": {"a": [agent["id"] for agent in agents], "b": [agent["id"] for agent in b_agents]},
        },
        "check": {"key_id": a.key_id, "webhook_id": up["id"]},
        "upload_files": [content.hex() for content in UPLOAD_FILES],
        "merge_sources": merge_sources,
    }


def _seed_custom_fields(a: Organization, b: Organization) -> dict[str, str]:
    """Custom fields (issue 22): the same keys in both organizations, the field PATCH on every seeded ticket. A's
    seeded fields are neither changed nor deleted (PROTECTED: a definition made inactive or hidden would leave the
    ticket's field PATCH only 422s); A's fields of their own for the definition's PATCH, fields made to be
    deleted, and B's (a 404 for A). A's seeded fields by key."""
    seeded_fields = {}
    for org in (a, b):
        for field in FIELDS:
            made = org.panel("POST", "/api/campos", field)
            if org is a:
                seeded_fields[made["chave"]] = made["id"]
            else:
                b.add("PATCH /api/campos/{id}", id=made["id"])
                b.add("DELETE /api/campos/{id}", id=made["id"])
        for parameters in org.paths["GET /api/v1/tickets/{id}"]:
            org.add("PATCH /api/v1/tickets/{id}/campos", id=parameters["id"])
    for field in FIELDS:
        changeable = a.panel("POST", "/api/campos", {**field, "chave": f"{field['chave']}_ajustavel"})
        a.add("PATCH /api/campos/{id}", id=changeable["id"])
    for n in range(3):
        spare = a.panel("POST", "/api/campos", {"chave": f"descartavel_{n}", "nome": "Descartável", "tipo": "texto"})
        a.add("DELETE /api/campos/{id}", id=spare["id"])
    return seeded_fields


UPLOAD_FILES = [_png_bytes(), b"Registro do pedido 1234: entregue com atraso.\n"]
# Both organizations' custom fields, and valid values of them (tests/fuzz/hooks.py puts them in positive bodies).
FIELDS = [
    {"chave": "pedido", "nome": "Pedido", "tipo": "texto"},
    {"chave": "loja", "nome": "Loja", "tipo": "lista", "opcoes": ["centro", "norte"]},
    {"chave": "valor", "nome": "Valor", "tipo": "numero"},
]
FIELD_VALUES = {"pedido": "PED-1", "loja": "norte", "valor": "10.5"}


def _upload(stack: Stack, key: str, ticket_id: str):
    """A's or B's file on a ticket; None on a closed ticket (409)."""
    response = requests.post(
        f"{stack.base_url}/api/v1/tickets/{ticket_id}/anexos",
        files={"arquivo": ("comprovante.png", UPLOAD_FILES[0], "image/png")},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert response.status_code in (201, 409), response.content
    return response.json()["data"] if response.status_code == 201 else None


def _seed_attachments(stack: Stack, a: Organization, b: Organization) -> None:
    """The attachment routes on every seeded ticket, a file on each open one, and A's signed links
    (and a forged one, a 403). A link is its own credential whoever sends it: B's are never used."""
    for org in (a, b):
        for parameters in list(org.paths["GET /api/v1/tickets/{id}"]):
            for label in (
                "GET /api/v1/tickets/{id}/anexos",
                "POST /api/v1/tickets/{id}/anexos",
                "GET /api/tickets/{id}/anexos",
            ):
                org.add(label, **parameters)
            attachment = _upload(stack, org.key, parameters["id"])
            if attachment is not None and org is a:
                link = attachment["url"].rsplit("/", 1)[1]
                forged = link[:-4] + ("AAAA" if not link.endswith("AAAA") else "BBBB")
                for token in (link, forged):
                    org.add("GET /api/v1/anexos/{token}", token=token)


def _all(paths: dict[str, list[dict]]):
    for parameters in paths.values():
        yield from parameters


def _schemathesis(stack: Stack, fixtures_file: Path, log: Path, reports: Path, *options: str) -> int:
    env = {
        **os.environ,
        "HELPDESK_FUZZ_FIXTURES": str(fixtures_file),
        "HELPDESK_FUZZ_LOG": str(log),
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
    }
    command = [
        str(VENV_BIN / "schemathesis"),
        "--config-file",
        str(HERE / "schemathesis.toml"),
        "run",
        f"{stack.base_url}/api/schema/",
        "--checks",
        "all",
        "--report",
        "junit,ndjson",
        "--report-dir",
        str(reports),
        *options,
    ]
    if os.environ.get("FUZZ_SEED"):
        command += ["--seed", os.environ["FUZZ_SEED"]]
    return subprocess.run(command, cwd=ROOT, env=env, timeout=1200).returncode


def _fuzz(stack: Stack, receiver: Receiver, name: str, *options: str) -> tuple[dict, list[dict], str]:
    """Seeds both organizations, runs schemathesis, and asserts what every run must show: no
    failure of any check, no 5xx, every operation called, no crash in the server's log."""
    fixtures = _seed(stack, receiver)
    artifacts = ARTIFACTS / name
    shutil.rmtree(artifacts, ignore_errors=True)
    artifacts.mkdir(parents=True)
    fixtures_file = artifacts / "fixtures.json"
    fixtures_file.write_text(json.dumps(fixtures, indent=1))
    log = artifacts / "calls.jsonl"
    log.touch()

    returncode = _schemathesis(stack, fixtures_file, log, artifacts / "reports", *options)

    calls = [json.loads(line) for line in log.read_text().splitlines()]
    summary = _summary(calls)
    print(summary)
    assert returncode == 0, f"schemathesis found failures (reports in {artifacts})\n{summary}"
    assert not [call for call in calls if call["status"] >= 500]
    uncalled = _operations(stack) - {call["operation"] for call in calls}
    assert not uncalled, f"never called: {sorted(uncalled)}"
    web_log = (stack.logs / "web.log").read_text(errors="replace")
    assert "Unhandled error" not in web_log and "Error handling request" not in web_log
    # Nothing the fuzzer did took away what the run relied on.
    _ok(stack.request("GET", "/api/v1/tickets", key=fixtures["partner_key"]))
    return fixtures, calls, summary


@pytest.mark.fuzz
def test_every_operation_answers_as_its_schema_says_under_fuzzing(stack, receiver):
    max_examples = int(os.environ.get("FUZZ_MAX_EXAMPLES", "100"))

    _, calls, summary = _fuzz(stack, receiver, "fuzz", "--max-examples", str(max_examples))

    by_operation = defaultdict(Counter)
    for call in calls:
        by_operation[call["operation"]][call["status"]] += 1
    operations = _operations(stack)
    missing = {op for op in operations - WITHOUT_INPUT if sum(by_operation[op].values()) < max_examples}
    assert not missing, f"fewer than {max_examples} requests: {sorted(missing)}\n{summary}"
    assert {"positive", "negative"} <= {_mode(call) for call in calls}
    unreached = {
        op
        for op in operations
        if op not in WITHOUT_A_KNOWN_ID and not any(200 <= code < 300 for code in by_operation[op])
    }
    assert not unreached, f"never answered 2xx: {sorted(unreached)}\n{summary}"
    tenancy = Counter(call["status"] for call in calls if call["other_organization"])
    assert tenancy[404] >= max_examples, f"too few requests with organization B's ids reached the lookup: {tenancy}"


def test_a_few_fuzzed_cases_per_operation_answer_as_the_schema_says(stack, receiver):
    """The smoke version of the above, for every `make test`: same seeding, hooks and checks."""
    _fuzz(stack, receiver, "fuzz-smoke", "--phases", "fuzzing", "--max-examples", str(SMOKE_EXAMPLES))


def _mode(call: dict) -> str:
    return "negative" if call["negative"] else "positive"


def _operations(stack: Stack) -> set[str]:
    status, schema = stack.request("GET", "/api/schema/?format=json")
    assert status == 200
    return {f"{method.upper()} {path}" for path, methods in schema["paths"].items() for method in methods}


def _summary(calls: list[dict]) -> str:
    by_operation = defaultdict(Counter)
    for call in calls:
        by_operation[call["operation"]][call["status"]] += 1
    lines = [f"{len(calls)} requests; per operation: total, then by status"]
    for operation in sorted(by_operation):
        counts = by_operation[operation]
        statuses = " ".join(f"{code}:{count}" for code, count in sorted(counts.items()))
        lines.append(f"  {operation:<55} {sum(counts.values()):>5}  {statuses}")
    return "\n".join(lines)
