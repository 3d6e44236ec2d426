"""Satisfaction ratings in the admin (issue 23): each ticket's page shows its ratings; the ratings' list is the
organization's, read-only; the report per agent and period gives each agent's ratings, average, share of 4-5 and
median business minutes to the first answer and to resolution, for a supervisor to read on the page."""

from datetime import timedelta
from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from helpdesk.actors import Actor
from tests.factories import admin_of, make_agent, make_ticket, status_of
from tickets.models import StatusCategory, Ticket
from tickets.services import reply_create_by_agent, ticket_rate_by_customer, ticket_update

LIST = reverse("admin:tickets_ticketrating_changelist")
REPORT = reverse("admin:tickets_ticketrating_report")


def resolved_and_rated(organization, agent, score: int, comment: str = "", *, answer_after=None) -> Ticket:
    """A ticket answered by `agent` (`answer_after` minutes after creation), resolved by them an hour after its
    creation, and rated."""
    created = timezone.now() - timedelta(hours=2)
    with mock.patch("django.utils.timezone.now", return_value=created):
        ticket = make_ticket(organization)
    if answer_after is not None:
        with mock.patch("django.utils.timezone.now", return_value=created + timedelta(minutes=answer_after)):
            reply_create_by_agent(ticket=ticket, agent=agent, body="Olá")
    with mock.patch("django.utils.timezone.now", return_value=created + timedelta(hours=1)):
        ticket_update(
            ticket=Ticket.objects.get(pk=ticket.pk),
            status=status_of(organization, StatusCategory.RESOLVED),
            actor=Actor.of_agent(agent),
        )
    ticket_rate_by_customer(organization=organization, ticket_id=ticket.pk, score=score, comment=comment)
    return ticket


def report_rows(response) -> list[tuple]:
    assert response.status_code == 200
    return [
        (row.name, row.ratings, row.average, row.satisfied_share, row.first_response_median, row.resolution_median)
        for row in response.context["rows"]
    ]


def test_the_ticket_page_shows_its_ratings(staff, organization):
    agent = make_agent(organization, name="Bia")
    ticket = resolved_and_rated(organization, agent, 5, "Ótimo <b>atendimento</b>")

    page = staff.get(reverse("admin:tickets_ticket_change", args=[ticket.pk])).content.decode()

    assert "Nota <strong>5</strong> (Bia," in page
    assert "Ótimo &lt;b&gt;atendimento&lt;/b&gt;" in page  # the customer's words, escaped


def test_the_report_gives_each_agent_their_numbers_for_the_period(staff, organization):
    bia, caio = make_agent(organization, name="Bia"), make_agent(organization, name="Caio")
    resolved_and_rated(organization, bia, 5, answer_after=10)
    resolved_and_rated(organization, bia, 4, answer_after=30)
    resolved_and_rated(organization, bia, 1, answer_after=20)
    resolved_and_rated(organization, caio, 3)

    rows = report_rows(staff.get(REPORT))

    assert rows == [
        ("Bia", 3, pytest.approx(10 / 3), pytest.approx(2 / 3), 20, 60),
        ("Caio", 1, 3.0, 0.0, None, 60),
    ]
    page = staff.get(REPORT).content.decode()
    assert 'id="relatorio-satisfacao"' in page and "67%" in page


def test_a_period_without_ratings_says_so(staff, organization):
    resolved_and_rated(organization, make_agent(organization), 5)
    last_year = (timezone.localdate() - timedelta(days=365)).isoformat()

    response = staff.get(REPORT, {"de": last_year, "ate": last_year})

    assert report_rows(response) == []
    assert "Nenhuma avaliação nem resolução no período." in response.content.decode()


def test_another_organizations_ratings_are_neither_listed_nor_reported(staff, organization, other_organization):
    resolved_and_rated(other_organization, make_agent(other_organization, name="Alheio"), 1, "ALHEIO-CONFIDENCIAL")

    assert "ALHEIO-CONFIDENCIAL" not in staff.get(LIST).content.decode()
    assert report_rows(staff.get(REPORT)) == []
    other_staff = Client()
    other_staff.force_login(admin_of(other_organization))
    assert report_rows(other_staff.get(REPORT))[0][:2] == ("Alheio", 1)


def test_ratings_are_read_only(staff, organization):
    ticket = resolved_and_rated(organization, make_agent(organization), 4)
    rating = ticket.ratings.get()

    assert staff.get(reverse("admin:tickets_ticketrating_add")).status_code == 403
    assert (
        staff.post(reverse("admin:tickets_ticketrating_delete", args=[rating.pk]), {"post": "yes"}).status_code == 403
    )
    assert ticket.ratings.count() == 1
