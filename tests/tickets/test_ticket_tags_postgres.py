"""Tags on PostgreSQL (issue 22): concurrent writers of one ticket's tags all win (the change is applied under
the ticket's row lock, never a whole list written over another), and `?tag=` is answered by the GIN index
(jsonb_path_ops) on 20,000 tickets beside another organization's 20,000 (docs/performance.md, "Tags")."""

import pytest
from django.db import connection

from helpdesk.models import AuditRecord
from tests.assertions import assert_success, bearer_client
from tests.factories import make_key, make_organization, make_ticket
from tests.threads import in_parallel
from tests.tickets.test_ticket_filters_postgres import _grow, assert_indexed, nodes, plans
from tickets.models import Ticket
from tickets.services import ticket_update

THREADS = 16
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


@pytest.fixture
def org_and_key(postgres_only):
    organization = make_organization("Concorrência")
    return organization, make_key(organization)


def _patch(key: str, ticket, body: dict):
    return lambda: bearer_client(key).patch(f"/api/v1/tickets/{ticket.pk}/tags", body, format="json")


def test_concurrent_writers_adding_different_tags_all_win(org_and_key):
    organization, key = org_and_key
    ticket = make_ticket(organization)

    responses = in_parallel([_patch(key, ticket, {"adicionar": [f"t{n:02}"]}) for n in range(THREADS)])

    assert [(r.status_code, r.json()["message"]) for r in responses] == [(200, "Tags atualizadas.")] * THREADS
    expected = [f"t{n:02}" for n in range(THREADS)]
    assert Ticket.objects.get(pk=ticket.pk).tags == expected
    # Each writer saw the tags the ones before it left, and added its own: the answers grow one by one.
    sizes = sorted(len(r.json()["data"]["tags"]) for r in responses)
    assert sizes == list(range(1, THREADS + 1))
    records = AuditRecord.objects.filter(action="ticket.tags_alteradas", resource_id=str(ticket.pk))
    chain = [record.changes["tags"] for record in records.order_by("created_at", "id")]
    assert [len(change["depois"]) for change in chain] == list(range(1, THREADS + 1))
    assert all(later["antes"] == earlier["depois"] for earlier, later in zip(chain, chain[1:], strict=False))


def test_concurrent_adds_and_removes_of_different_tags_all_apply(org_and_key):
    organization, key = org_and_key
    ticket = ticket_update(ticket=make_ticket(organization), tags_add=[f"velha{n}" for n in range(8)])
    adds = [_patch(key, ticket, {"adicionar": [f"nova{n}"]}) for n in range(8)]
    removes = [_patch(key, ticket, {"remover": [f"velha{n}"]}) for n in range(8)]

    responses = in_parallel([call for pair in zip(adds, removes, strict=True) for call in pair])

    assert {r.status_code for r in responses} == {200}
    assert Ticket.objects.get(pk=ticket.pk).tags == [f"nova{n}" for n in range(8)]


def test_concurrent_writers_past_the_limit_keep_it(org_and_key):
    """18 tags, and 4 writers adding one each: two fit, two are refused, never 22 on the ticket."""
    organization, key = org_and_key
    ticket = ticket_update(ticket=make_ticket(organization), tags_add=[f"t{n:02}" for n in range(18)])

    responses = in_parallel([_patch(key, ticket, {"adicionar": [f"x{n}"]}) for n in range(4)])

    assert sorted(r.status_code for r in responses) == [200, 200, 422, 422]
    assert len(Ticket.objects.get(pk=ticket.pk).tags) == 20


# --- the plan ---------------------------------------------------------------------------------------


def _tag(organization) -> None:
    """The grown tickets' tags: `c<number % 50>` on each (2% of the tickets each), `raro` on one in 2,000."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE tickets_ticket SET tags = CASE WHEN number %% 2000 = 0
                THEN jsonb_build_array('c' || (number %% 50), 'raro') ELSE jsonb_build_array('c' || (number %% 50)) END
            WHERE organization_id = %s
            """,
            [organization.pk],
        )


@pytest.fixture
def tagged(postgres_only):
    organization = make_organization("Grande")
    neighbour = make_organization("Vizinha")
    for each in (organization, neighbour):
        _grow(each)
        _tag(each)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE tickets_ticket")
        cursor.execute("VACUUM ANALYZE tickets_contact")
    return bearer_client(make_key(organization))


@pytest.mark.parametrize(
    "params",
    [{"tag": "raro"}, {"tag": ["raro", "c0"]}, {"tag": "raro", "prioridade": "urgente"}],
    ids=["a rare tag", "two tags", "a tag and prioridade"],
)
def test_a_rare_tag_is_read_from_the_gin_index(tagged, params):
    found = plans(tagged, params)

    assert_indexed(found, "ticket_tags_gin")


@pytest.mark.parametrize("params", [{"tag": "c7"}, {"tag": "c7", "cursor": ""}, {"tag": "c7", "ordenacao": "numero"}])
def test_a_common_tag_never_scans_the_table(tagged, params):
    found = plans(tagged, params)

    assert_indexed(found)
    assert all(nodes(plan) for plan in found)


def test_the_list_answers_the_tagged_tickets(tagged):
    data = assert_success(tagged.get("/api/v1/tickets", {"tag": "raro", "incluir": "tags"}), 200, "Tickets listados.")

    assert data["total"] == 10
    assert all("raro" in item["tags"] for item in data["data"])
