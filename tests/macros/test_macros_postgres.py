"""Macros applied at the same moment on PostgreSQL: each applies under the ticket's row lock, so agents applying
different macros to one ticket all win (every tag added, every reply posted), and one whose reply fails leaves
nothing of it while the others stand."""

import pytest

from macros.services import macro_apply
from tests.assertions import assert_success, panel_client
from tests.factories import admin_of, make_agent, make_organization, make_ticket
from tests.macros.helpers import event_kinds, make_macro
from tests.threads import in_parallel
from tickets.models import Reply, Ticket
from tickets.services import ticket_update

THREADS = 8
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


@pytest.fixture
def organization(postgres_only):
    return make_organization("Concorrência")


def test_concurrent_macros_on_one_ticket_all_apply(organization):
    ticket = make_ticket(organization)
    macros = [make_macro(organization, name=f"M{n}", body=f"Resposta {n}", tags_add=[f"m{n}"]) for n in range(THREADS)]
    agents = [make_agent(organization, name=f"Agente {n}") for n in range(THREADS)]
    clients = [panel_client(agent.user.email) for agent in agents]

    responses = in_parallel(
        [
            (lambda c=client, m=macro: c.post(f"/api/tickets/{ticket.pk}/macros/{m.pk}", {}, format="json"))
            for client, macro in zip(clients, macros, strict=True)
        ]
    )

    for response in responses:
        assert_success(response, 200, "Macro aplicada.")
    assert Ticket.objects.get(pk=ticket.pk).tags == [f"m{n}" for n in range(THREADS)]
    assert sorted(Reply.objects.filter(ticket=ticket).values_list("body", flat=True)) == [
        f"Resposta {n}" for n in range(THREADS)
    ]
    kinds = event_kinds(ticket)
    assert (kinds.count("ticket.tags_alteradas"), kinds.count("ticket.resposta_publica")) == (THREADS, THREADS)


def test_a_macro_refused_at_the_tag_limit_meanwhile_leaves_nothing(organization):
    """19 tags: of two macros adding one tag each, at the same moment, the second to take the lock is refused
    whole (its priority and its reply too)."""
    ticket = ticket_update(ticket=make_ticket(organization), tags_add=[f"t{n:02}" for n in range(19)])
    agent = admin_of(organization).agent
    first = make_macro(organization, name="A", body="Resposta A", priority="alta", tags_add=["a"])
    second = make_macro(organization, name="B", body="Resposta B", priority="urgente", tags_add=["b"])

    results = in_parallel(
        [
            lambda m=macro: macro_apply(ticket=Ticket.objects.get(pk=ticket.pk), macro=m, agent=agent)
            for macro in (first, second)
        ]
    )

    refused = [result for result in results if isinstance(result, Exception)]
    assert len(refused) == 1 and refused[0].errors == {"tags": ["Um ticket tem no máximo 20 tags."]}
    winner = first if not isinstance(results[0], Exception) else second
    row = Ticket.objects.get(pk=ticket.pk)
    assert (len(row.tags), row.priority) == (20, winner.priority)
    assert list(Reply.objects.filter(ticket=ticket).values_list("body", flat=True)) == [winner.body]
