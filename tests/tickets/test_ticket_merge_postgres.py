"""Merges at the same moment over overlapping tickets (issue 24): every ticket is locked first, in the order of the
ids, so two merges never deadlock; the one that waits sees the other's result and is refused, and no ticket is left
half merged. Real row locks need a real server: these run on PostgreSQL (CI always provides it)."""

import pytest

from helpdesk.actors import SYSTEM
from tests.assertions import panel_client
from tests.factories import admin_of, make_customer_reply, make_organization, make_ticket
from tests.threads import in_parallel
from tickets.exceptions import TicketMerged
from tickets.merging import tickets_merge
from tickets.models import Reply, StatusCategory, Ticket

ROUNDS = 5


@pytest.fixture
def organization_pg(postgres_only):
    return make_organization("Concorrência")


def _merge(target, sources):
    return lambda: tickets_merge(target=target, sources=sources, actor=SYSTEM)


def _assert_whole(tickets) -> None:
    """Every ticket is either untouched or wholly merged into a ticket that is not merged."""
    for ticket in Ticket.objects.filter(pk__in=[t.pk for t in tickets]).select_related("status"):
        own = Reply.objects.filter(ticket=ticket, merged_from_number__isnull=True, is_internal=False)
        if ticket.merged_into_id is None:
            assert own.count() == 1, ticket.number  # its customer reply is still its own
            continue
        assert ticket.status.category == StatusCategory.CLOSED
        assert not own.exists()
        assert Ticket.objects.get(pk=ticket.merged_into_id).merged_into_id is None
        moved = Reply.objects.filter(ticket_id=ticket.merged_into_id, merged_from_number=ticket.number)
        assert moved.filter(is_internal=False).count() == 2  # its description and its reply, once each


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_two_merges_over_the_same_tickets_at_once_one_wins_and_the_other_is_refused(organization_pg, round_):
    a, b, c = (make_ticket(organization_pg) for _ in range(3))
    for ticket in (a, b, c):
        make_customer_reply(ticket, body=f"Cliente {ticket.number}")

    # Opposite targets over the same three tickets: their locks would cross if taken in the order given.
    results = in_parallel([_merge(a, [b, c]), _merge(c, [b, a])])

    winners = [result for result in results if isinstance(result, Ticket)]
    refused = [result for result in results if isinstance(result, TicketMerged)]
    assert (len(winners), len(refused)) == (1, 1), results
    _assert_whole([a, b, c])
    assert Ticket.objects.filter(pk__in=[a.pk, b.pk, c.pk], merged_into=winners[0].pk).count() == 2


def test_merges_racing_through_the_panel_answer_200_once_and_409_otherwise(organization_pg):
    tickets = [make_ticket(organization_pg) for _ in range(4)]
    for ticket in tickets:
        make_customer_reply(ticket, body=f"Cliente {ticket.number}")
    email = admin_of(organization_pg).email
    clients = [panel_client(email) for _ in range(4)]

    def merge(client, target, sources):
        return lambda: client.post(
            f"/api/tickets/{target.pk}/mesclar", {"origens": [str(s.pk) for s in sources]}, format="json"
        )

    calls = [merge(clients[n], tickets[n], [t for t in tickets if t is not tickets[n]]) for n in range(4)]
    responses = in_parallel(calls)

    codes = sorted(response.status_code for response in responses)
    assert codes == [200, 409, 409, 409], [r.content for r in responses]
    assert {r.json()["message"] for r in responses if r.status_code == 409} == {"Ticket mesclado."}
    _assert_whole(tickets)
