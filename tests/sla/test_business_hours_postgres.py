"""Business hours on PostgreSQL: concurrent first PUTs of an organization without a calendar all answer (the
organization's row lock serialises them: no unique-constraint error, one row), and each records what it changed
from what the one before it left."""

import pytest

from helpdesk.models import AuditRecord
from sla.models import BusinessHours
from tests.assertions import panel_client
from tests.factories import admin_of, make_organization
from tests.threads import in_parallel

THREADS = 8
ZONES = ["UTC", "Europe/Lisbon", "Asia/Tokyo", "America/New_York"]
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def _put(client, zone: str):
    body = {"fuso_horario": zone, "intervalos": [{"dia_semana": 0, "inicio": "08:00", "fim": "18:00"}], "feriados": []}
    return lambda: client.put("/api/horario-atendimento", body, format="json")


def test_concurrent_first_writes_make_one_calendar(postgres_only):
    organization = make_organization("Concorrência")
    clients = [panel_client(admin_of(organization).email) for _ in range(THREADS)]

    responses = in_parallel([_put(client, ZONES[n % len(ZONES)]) for n, client in enumerate(clients)])

    assert [r.status_code for r in responses] == [200] * THREADS, [getattr(r, "content", r) for r in responses]
    row = BusinessHours.objects.get(organization=organization)
    chain = [
        record.changes
        for record in AuditRecord.objects.filter(action="horario_atendimento.alterado").order_by("created_at", "id")
    ]
    assert chain[0]["fuso_horario"]["antes"] == "America/Sao_Paulo"
    zones = [changes.get("fuso_horario") for changes in chain]
    assert all(z is None or z["antes"] != z["depois"] for z in zones)
    assert [z["depois"] for z in zones if z][-1] == row.time_zone
