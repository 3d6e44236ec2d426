"""SLA policies on PostgreSQL: concurrent first PUTs of an organization without policies all answer (the
organization's row lock serialises them: no unique-constraint error, one row), and each records what it changed
from what the one before it left."""

import pytest

from helpdesk.models import AuditRecord
from sla.models import SlaPolicies
from tests.assertions import panel_client
from tests.factories import admin_of, make_organization
from tests.threads import in_parallel

THREADS = 8
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def _put(client, minutes: int):
    body = {"politicas": [{"prioridade": "alta", "primeira_resposta": minutes}]}
    return lambda: client.put("/api/sla", body, format="json")


def test_concurrent_first_writes_make_one_policy_set(postgres_only):
    organization = make_organization("Concorrência")
    clients = [panel_client(admin_of(organization).email) for _ in range(THREADS)]

    responses = in_parallel([_put(client, 10 + n % 4) for n, client in enumerate(clients)])

    assert [r.status_code for r in responses] == [200] * THREADS, [getattr(r, "content", r) for r in responses]
    row = SlaPolicies.objects.get(organization=organization)
    chain = [
        record.changes["politicas"]
        for record in AuditRecord.objects.filter(action="sla.politicas_alteradas").order_by("created_at", "id")
    ]
    assert chain[0]["antes"] == []
    # Each record starts from what the one before it left, and the last one left what is stored.
    assert all(later["antes"] == earlier["depois"] for earlier, later in zip(chain, chain[1:], strict=False))
    assert all(change["antes"] != change["depois"] for change in chain)
    assert chain[-1]["depois"][0]["primeira_resposta"] == row.policies[0]["first_response"]
