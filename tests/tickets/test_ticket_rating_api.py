"""`POST /api/v1/tickets/{id}/avaliacao` (issue 23, CSAT): the customer's rating collected by the partner, one per
resolution cycle, replaceable for 7 days, tied to the agent who resolved the ticket; `incluir=avaliacao`."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from helpdesk.actors import Actor
from tests.assertions import assert_error, assert_exact_validation_error, assert_success, assert_ticket_not_found
from tests.factories import make_agent, make_ticket, status_of
from tickets.models import StatusCategory, Ticket, TicketRating
from tickets.services import ticket_resolve, ticket_update

pytestmark = pytest.mark.usefixtures("generous_rate_limits")

INVALID_SCORE = "Informe um número inteiro de 1 a 5."


def url(ticket, path="avaliacao") -> str:
    return f"/api/v1/tickets/{ticket.pk}/{path}"


def rate(partner, ticket, body, **headers):
    return partner.post(url(ticket), body, format="json", **headers)


@pytest.fixture
def resolved(organization):
    """A ticket resolved by an agent."""
    agent = make_agent(organization, name="Rita Resolve")
    ticket = make_ticket(organization)
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED), actor=Actor.of_agent(agent))
    return Ticket.objects.get(pk=ticket.pk), agent


def shown(partner, ticket) -> dict:
    response = partner.get(f"/api/v1/tickets/{ticket.pk}", {"incluir": "avaliacao"})
    return assert_success(response, 200, "Ticket encontrado.")


def test_a_ticket_never_resolved_cannot_be_rated_and_nothing_is_written(partner, organization):
    ticket = make_ticket(organization)

    assert_error(rate(partner, ticket, {"nota": 5}), 409, "Ticket ainda não resolvido.", "status")
    assert not TicketRating.objects.exists()


def test_the_first_rating_of_a_cycle_is_registered_for_the_agent_who_resolved(partner, resolved):
    ticket, agent = resolved

    data = assert_success(rate(partner, ticket, {"nota": 4, "comentario": "Rápido"}), 201, "Avaliação registrada.")

    assert data["nota"] == 4 and data["comentario"] == "Rápido" and data["criado_em"].endswith("Z")
    rating = TicketRating.objects.get()
    assert (rating.ticket_id, rating.cycle, rating.agent, rating.score) == (ticket.pk, 1, agent, 4)
    assert shown(partner, ticket)["avaliacao"] == data
    assert Ticket.objects.get(pk=ticket.pk).updated_at > ticket.updated_at  # the change list moves


def test_another_rating_within_seven_days_replaces_it_and_later_is_refused(partner, resolved):
    ticket, _agent = resolved
    first = assert_success(rate(partner, ticket, {"nota": 2}), 201, "Avaliação registrada.")

    again = rate(partner, ticket, {"nota": 5, "comentario": "Resolveram"})
    second = assert_success(again, 200, "Avaliação atualizada.")

    assert (second["nota"], second["comentario"], second["criado_em"]) == (5, "Resolveram", first["criado_em"])
    assert TicketRating.objects.count() == 1
    eight_days_later = timezone.now() + timedelta(days=8)
    with mock.patch("django.utils.timezone.now", return_value=eight_days_later):
        assert_error(rate(partner, ticket, {"nota": 1}), 409, "Avaliação encerrada.", "nota")
    assert TicketRating.objects.get().score == 5


def test_a_new_resolution_is_a_new_cycle_to_rate(partner, organization, resolved):
    ticket, _agent = resolved
    assert_success(rate(partner, ticket, {"nota": 3}), 201, "Avaliação registrada.")
    assert_success(partner.post(url(ticket, "reabrir")), 200, "Ticket reaberto.")
    assert shown(partner, ticket)["avaliacao"]["nota"] == 3  # reopened: still the last resolution's

    assigned = make_agent(organization, name="Dono")
    ticket_update(ticket=Ticket.objects.get(pk=ticket.pk), assignee=assigned)
    assert_success(partner.post(url(ticket, "resolver")), 200, "Ticket resolvido.")  # the customer resolved
    assert shown(partner, ticket)["avaliacao"] is None

    assert_success(rate(partner, ticket, {"nota": 5}), 201, "Avaliação registrada.")
    cycles = list(TicketRating.objects.order_by("cycle").values_list("cycle", "score", "agent__name"))
    assert cycles == [(1, 3, "Rita Resolve"), (2, 5, "Dono")]  # the customer's resolution: the assignee's


def test_a_ticket_resolved_by_the_system_is_rated_for_its_assignee(partner, organization):
    agent = make_agent(organization)
    ticket = ticket_update(ticket=make_ticket(organization), assignee=agent)
    ticket_resolve(ticket=ticket)

    assert_success(rate(partner, ticket, {"nota": 4}), 201, "Avaliação registrada.")
    assert TicketRating.objects.get().agent == agent


@pytest.mark.parametrize("nota", ["5", 5.0, True, 0, 6, None, [5]])
def test_a_score_other_than_a_whole_number_from_1_to_5_is_refused(partner, resolved, nota):
    ticket, _agent = resolved

    response = rate(partner, ticket, {"nota": nota})

    message = "Este campo não pode ser nulo." if nota is None else INVALID_SCORE
    assert_exact_validation_error(response, {"nota": [message]})
    assert not TicketRating.objects.exists()


def test_a_missing_score_and_a_long_comment_are_refused_by_name(partner, resolved):
    ticket, _agent = resolved

    assert_exact_validation_error(rate(partner, ticket, {}), {"nota": ["Este campo é obrigatório."]})
    response = rate(partner, ticket, {"nota": 5, "comentario": "x" * 2001})
    too_long = "Certifique-se de que este campo não tenha mais de 2000 caracteres."
    assert_exact_validation_error(response, {"comentario": [too_long]})


def test_a_null_or_absent_comment_is_an_empty_one(partner, resolved):
    ticket, _agent = resolved

    data = assert_success(rate(partner, ticket, {"nota": 5, "comentario": None}), 201, "Avaliação registrada.")

    assert data["comentario"] == ""


def test_another_organizations_or_a_missing_ticket_is_404_before_the_422(partner, other_organization):
    theirs = make_ticket(other_organization)

    assert_ticket_not_found(rate(partner, theirs, {"nota": 5}))
    assert_ticket_not_found(rate(partner, theirs, {"nota": "cinco"}))


def test_a_retry_with_the_same_idempotency_key_answers_the_same_and_rates_once(partner, resolved):
    ticket, _agent = resolved

    first = rate(partner, ticket, {"nota": 4}, HTTP_IDEMPOTENCY_KEY="avaliacao-1")
    retry = rate(partner, ticket, {"nota": 4}, HTTP_IDEMPOTENCY_KEY="avaliacao-1")

    assert (first.status_code, retry.status_code) == (201, 201)
    assert retry.json() == first.json()
    assert retry["Idempotent-Replayed"] == "true"
    assert TicketRating.objects.count() == 1
