"""`make bench`: latency of the partner API's hot paths, against targets.

Runs in-process through Django's test client on a throw-away database (the
embedded SQLite under a temporary DATA_DIR unless DATABASE_URL is set), so it
measures our code and the database, not the network. Exit status 1 when a
target is missed.
"""

import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
if not os.environ.get("DATABASE_URL"):
    os.environ["DATA_DIR"] = tempfile.mkdtemp(prefix="helpdesk-bench-")
os.environ.setdefault("PARTNER_RATE_LIMIT", "1000000/m")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

# Targets for p95 in milliseconds, on the 2-core reference machine.
TARGETS_MS = {
    "GET /api/v1/tickets (100 per page)": 80,
    "GET /api/v1/tickets (15 per page)": 25,
    "GET /api/v1/tickets/{id}": 20,
    "POST /api/v1/tickets": 30,
    "POST /api/v1/tickets/{id}/respostas": 25,
    "GET /api/v1/atendentes": 20,
}
ROUNDS = 60


def main() -> int:
    from django.db import connection

    setup_test_environment()

    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    call_command("migrate", verbosity=0)
    from tests.factories import make_agent, make_agent_reply, make_key, make_organization, make_ticket

    organization = make_organization("Bench")
    agent = make_agent(organization)
    for agent_number in range(12):
        make_agent(organization, name=f"Atendente {agent_number}")
    tickets = [make_ticket(organization) for _ in range(300)]
    for ticket in tickets[:150]:
        make_agent_reply(ticket, agent, body="Resposta pública")
        make_agent_reply(ticket, agent, body="Nota interna", internal=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(organization)}")
    ticket_id = tickets[0].pk

    def create(n):
        return client.post(
            "/api/v1/tickets",
            {"assunto": f"Bench {n}", "descricao": "x", "solicitante": {"nome": "B", "external_id": f"b-{n % 20}"}},
            format="json",
        )

    cases = {
        "GET /api/v1/tickets (100 per page)": lambda n: client.get("/api/v1/tickets?por_pagina=100"),
        "GET /api/v1/tickets (15 per page)": lambda n: client.get("/api/v1/tickets"),
        "GET /api/v1/tickets/{id}": lambda n: client.get(f"/api/v1/tickets/{ticket_id}"),
        "POST /api/v1/tickets": create,
        "POST /api/v1/tickets/{id}/respostas": lambda n: client.post(
            f"/api/v1/tickets/{ticket_id}/respostas", {"mensagem": f"m{n}"}, format="json"
        ),
        "GET /api/v1/atendentes": lambda n: client.get("/api/v1/atendentes"),
    }
    failed = False
    print(f"{'endpoint':42} {'p50 ms':>8} {'p95 ms':>8} {'target':>8}")
    for name, call in cases.items():
        call(0)  # warm-up
        samples = []
        for n in range(1, ROUNDS + 1):
            start = time.perf_counter()
            response = call(n)
            samples.append((time.perf_counter() - start) * 1000)
            assert response.status_code < 300, (name, response.status_code, response.content[:200])
        p50 = statistics.median(samples)
        p95 = statistics.quantiles(samples, n=20)[18]
        ok = p95 <= TARGETS_MS[name]
        failed |= not ok
        print(f"{name:42} {p50:8.1f} {p95:8.1f} {TARGETS_MS[name]:8} {'ok' if ok else 'MISSED'}")
    connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
