"""Bulk edits from the agents' side (issue 24): POST /api/tickets/lote, through the single action's service, one
ticket at a time, with the single action's events and audit records."""

import json
import uuid

import pytest

from helpdesk.models import AuditRecord
from integrations.models import WebhookEvent
from tests.assertions import assert_error, assert_exact_validation_error, assert_success, assert_validation_error
from tests.factories import make_agent, make_ticket, status_of
from tickets.bulk import CLOSED, MAX_BULK_TICKETS, NOT_FOUND
from tickets.models import Ticket
from tickets.services import ticket_update

URL = "/api/tickets/lote"


@pytest.fixture
def tickets(organization):
    return [make_ticket(organization) for _ in range(3)]


def ids(*tickets) -> list[str]:
    return [str(ticket.pk) for ticket in tickets]


def events() -> list[tuple[str, str]]:
    """(ticket id, kind) of each event emitted, in the feed's order."""
    rows = WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("body", "kind")
    return [(json.loads(body)["data"]["ticket"]["id"], kind) for body, kind in rows]


def test_a_bulk_change_sets_status_priority_assignee_and_tags_on_every_ticket(manager, organization, tickets):
    helper = make_agent(organization, name="Carla")
    ticket_update(ticket=tickets[0], tags_add=["antiga"])
    in_progress = status_of(organization, "em_andamento")

    response = manager.post(
        URL,
        {
            "ids": ids(*tickets),
            "status_id": str(in_progress.pk),
            "prioridade": "alta",
            "atendente_id": str(helper.pk),
            "tags": {"adicionar": ["Lote"], "remover": ["antiga"]},
        },
        format="json",
    )

    data = assert_success(response, 200, "Tickets atualizados.")
    assert data == {"atualizados": ids(*tickets), "ignorados": []}
    for ticket in Ticket.objects.filter(pk__in=ids(*tickets)):
        assert (ticket.status_id, ticket.priority, ticket.assignee_id, ticket.tags) == (
            in_progress.pk,
            "alta",
            helper.pk,
            ["lote"],
        )


def test_each_ticket_emits_the_events_of_the_single_action_in_the_same_order(manager, organization, tickets):
    WebhookEvent.objects.all().delete()

    manager.post(
        URL,
        {"ids": ids(*tickets), "status_id": str(status_of(organization, "resolvido").pk), "prioridade": "baixa"},
        format="json",
    )

    emitted = events()
    expected = [
        (str(ticket.pk), kind)
        for ticket in tickets
        for kind in ("ticket.status_alterado", "ticket.resolvido", "ticket.prioridade_alterada")
    ]
    assert sorted(emitted) == sorted(expected)
    for ticket in tickets:
        kinds = [kind for ticket_id, kind in emitted if ticket_id == str(ticket.pk)]
        assert kinds == ["ticket.status_alterado", "ticket.resolvido", "ticket.prioridade_alterada"]
    actions = AuditRecord.objects.filter(action="ticket.prioridade_alterada").values_list("resource_id", flat=True)
    assert sorted(actions) == sorted(ids(*tickets))


def test_another_organizations_ticket_is_ignored_exactly_like_a_missing_one(
    manager, organization, other_organization, tickets
):
    theirs = make_ticket(other_organization)
    missing = uuid.uuid4()

    response = manager.post(
        URL, {"ids": [*ids(tickets[0]), str(theirs.pk), str(missing)], "prioridade": "alta"}, format="json"
    )

    data = assert_success(response, 200, "Tickets atualizados.")
    assert data == {
        "atualizados": ids(tickets[0]),
        "ignorados": [{"id": str(theirs.pk), "motivo": NOT_FOUND}, {"id": str(missing), "motivo": NOT_FOUND}],
    }
    assert Ticket.objects.get(pk=theirs.pk).priority != "alta"
    assert (str(theirs.pk), "ticket.prioridade_alterada") not in events()


def test_a_closed_ticket_and_one_over_the_tags_limit_are_ignored_with_their_reasons(manager, organization, tickets):
    closed, full, fine = tickets
    ticket_update(ticket=closed, status=status_of(organization, "fechado"))
    ticket_update(ticket=full, tags_add=[f"t{n}" for n in range(20)])

    response = manager.post(URL, {"ids": ids(*tickets), "tags": {"adicionar": ["nova"]}}, format="json")

    data = assert_success(response, 200, "Tickets atualizados.")
    assert data == {
        "atualizados": ids(fine),
        "ignorados": [
            {"id": str(closed.pk), "motivo": CLOSED},
            {"id": str(full.pk), "motivo": "Um ticket tem no máximo 20 tags."},
        ],
    }
    assert Ticket.objects.get(pk=fine.pk).tags == ["nova"]
    assert "nova" not in Ticket.objects.get(pk=full.pk).tags
    assert Ticket.objects.get(pk=closed.pk).tags == []


def test_a_ticket_already_as_asked_counts_as_updated_and_emits_nothing(manager, tickets):
    ticket_update(ticket=tickets[0], priority="alta")
    WebhookEvent.objects.all().delete()

    response = manager.post(URL, {"ids": ids(tickets[0], tickets[0]), "prioridade": "alta"}, format="json")

    assert assert_success(response, 200, "Tickets atualizados.") == {"atualizados": ids(tickets[0]), "ignorados": []}
    assert not WebhookEvent.objects.exists()


def test_unassigning_in_bulk_takes_the_agent_off_every_ticket(manager, agent, tickets):
    for ticket in tickets:
        ticket_update(ticket=ticket, assignee=agent)

    response = manager.post(URL, {"ids": ids(*tickets), "atendente_id": None}, format="json")

    assert_success(response, 200, "Tickets atualizados.")
    assert set(Ticket.objects.filter(pk__in=ids(*tickets)).values_list("assignee_id", flat=True)) == {None}


def test_a_status_or_agent_of_another_organization_refuses_the_whole_request(manager, other_organization, tickets):
    foreign_status = status_of(other_organization, "em_andamento")
    foreign_agent = make_agent(other_organization)

    by_status = manager.post(URL, {"ids": ids(*tickets), "status_id": str(foreign_status.pk)}, format="json")
    by_agent = manager.post(URL, {"ids": ids(*tickets), "atendente_id": str(foreign_agent.pk)}, format="json")

    assert by_status.status_code == 404 and by_status.json()["errors"]["field"] == "status_id"
    assert by_agent.status_code == 404 and by_agent.json()["errors"]["field"] == "atendente_id"
    assert not WebhookEvent.objects.filter(kind__in=["ticket.status_alterado", "ticket.atribuido"]).exists()


def test_an_inactive_agent_refuses_the_whole_request(manager, organization, tickets):
    gone = make_agent(organization, is_active=False)

    response = manager.post(URL, {"ids": ids(*tickets), "atendente_id": str(gone.pk)}, format="json")

    assert_exact_validation_error(response, {"atendente_id": ["Atendente inativo não pode receber tickets."]})


def test_bad_input_is_a_422_in_the_envelope_and_changes_nothing(manager, tickets):
    before = list(Ticket.objects.order_by("pk").values())

    nothing = manager.post(URL, {"ids": ids(*tickets)}, format="json")
    no_ids = manager.post(URL, {"ids": [], "prioridade": "alta"}, format="json")
    too_many = manager.post(
        URL, {"ids": [str(uuid.uuid4()) for _ in range(MAX_BULK_TICKETS + 1)], "prioridade": "alta"}, format="json"
    )
    not_uuid = manager.post(URL, {"ids": ["abc", 7], "prioridade": "alta"}, format="json")
    bad_priority = manager.post(URL, {"ids": ids(*tickets), "prioridade": "máxima"}, format="json")
    not_object = manager.post(URL, [1, 2], format="json")

    assert_exact_validation_error(
        nothing, {"body": ["Informe ao menos uma alteração: status_id, prioridade, atendente_id ou tags."]}
    )
    assert_validation_error(no_ids, "ids")
    assert_validation_error(too_many, "ids")
    assert_validation_error(not_uuid, {"ids.0", "ids.1"})
    assert_validation_error(bad_priority, "prioridade")
    assert not_object.status_code in (400, 422) and not_object.json()["success"] is False
    assert list(Ticket.objects.order_by("pk").values()) == before


def test_a_panel_user_who_is_not_an_active_agent_is_refused(anon_client, tickets):
    response = anon_client.post(URL, {"ids": ids(*tickets), "prioridade": "alta"}, format="json")

    assert_error(response, 401, "Não autenticado.", response.json()["errors"]["field"])


def test_an_idempotency_key_replays_the_first_answer(manager, tickets):
    body = {"ids": ids(*tickets), "prioridade": "urgente"}
    first = manager.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="lote-1")
    ticket_update(ticket=tickets[0], priority="baixa")
    WebhookEvent.objects.all().delete()

    again = manager.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="lote-1")
    other = manager.post(URL, {**body, "prioridade": "alta"}, format="json", HTTP_IDEMPOTENCY_KEY="lote-1")

    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Ticket.objects.get(pk=tickets[0].pk).priority == "baixa"
    assert not WebhookEvent.objects.exists()
    assert_exact_validation_error(other, {"Idempotency-Key": ["Esta chave já foi usada com outra requisição."]})
