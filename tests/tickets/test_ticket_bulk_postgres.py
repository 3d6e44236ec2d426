"""Bulk edits on PostgreSQL (issue 24): bulk edits at once over the same tickets, listed in different orders,
neither deadlock nor lose a change (each ticket is changed under its row lock, tickets locked in one order)."""

import random

import pytest

from tests.assertions import assert_success, panel_client
from tests.factories import admin_of, make_organization, make_ticket
from tests.threads import in_parallel
from tickets.models import Ticket

THREADS = 8
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def test_concurrent_bulk_edits_over_the_same_tickets_all_apply(postgres_only):
    organization = make_organization("Lotes")
    email = admin_of(organization).email
    tickets = [str(make_ticket(organization).pk) for _ in range(10)]

    def bulk(n: int):
        ids = random.Random(n).sample(tickets, len(tickets))
        return lambda: panel_client(email).post(
            "/api/tickets/lote", {"ids": ids, "tags": {"adicionar": [f"lote{n}"]}}, format="json"
        )

    responses = in_parallel([bulk(n) for n in range(THREADS)])

    for response in responses:
        data = assert_success(response, 200, "Tickets atualizados.")
        assert sorted(data["atualizados"]) == sorted(tickets) and data["ignorados"] == []
    expected = sorted(f"lote{n}" for n in range(THREADS))
    assert [ticket.tags for ticket in Ticket.objects.filter(pk__in=tickets)] == [expected] * len(tickets)
