"""The SLA clock on PostgreSQL, with threads: concurrent replies of both sides on one ticket lose no count and leave
a clock that agrees with them; two beats re-targeting at once move every open ticket once; two beats announcing at
once, and again later, send each moment of each target once; concurrent ratings of one cycle are one rating."""

import json
from collections import Counter
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from integrations.models import EventKind, WebhookEvent
from sla.models import SlaRetarget
from sla.policies import Policy
from sla.services import sla_policies_set
from tests.factories import make_agent, make_key, make_organization, make_ticket
from tests.threads import in_parallel
from tickets.models import Ticket, TicketRating
from tickets.service_levels import sla_announcements_run, sla_retargets_run
from tickets.services import reply_create_by_agent, ticket_resolve

THREADS = 8
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def test_concurrent_replies_are_all_counted_and_the_clock_follows(postgres_only):
    organization = make_organization("Relógio concorrente")
    sla_policies_set(organization=organization, policies=[Policy("media", 120, 60, 540)])
    agent = make_agent(organization)
    ticket = make_ticket(organization)
    partner = APIClient()
    partner.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(organization)}")

    def customer():
        return partner.post(f"/api/v1/tickets/{ticket.pk}/respostas", {"mensagem": "Oi"}, format="json").status_code

    def agent_reply():
        return reply_create_by_agent(ticket=Ticket.objects.get(pk=ticket.pk), agent=agent, body="Olá").pk

    results = in_parallel([customer if n % 2 else agent_reply for n in range(THREADS)])

    assert not [result for result in results if isinstance(result, Exception)], results
    stored = Ticket.objects.get(pk=ticket.pk)
    assert (stored.agent_reply_count, stored.customer_reply_count) == (THREADS // 2, THREADS // 2)
    first_agent_reply = stored.replies.filter(origin="agente").order_by("created_at").first()
    assert stored.first_response_at == first_agent_reply.created_at
    kinds = {target["kind"]: target for target in stored.sla_clock["targets"]}
    assert kinds["first_response"]["met_at"] is not None


def test_two_beats_retarget_every_open_ticket_once(postgres_only):
    organizations = [make_organization(f"Re-alvo {n}") for n in range(3)]
    for organization in organizations:
        for _ in range(4):
            make_ticket(organization)
        sla_policies_set(organization=organization, policies=[Policy("media", first_response=60)])
    assert SlaRetarget.objects.count() == 3
    far_future = max(row.changed_at for row in SlaRetarget.objects.all())

    moved = in_parallel([lambda: sla_retargets_run(now=far_future) for _ in range(2)])

    assert not [result for result in moved if isinstance(result, Exception)], moved
    assert sum(moved) == 12  # each ticket once, whichever beat took its organization
    assert all(
        ticket.sla_clock["policy"] == "media" and ticket.sla_due_at is not None
        for ticket in Ticket.objects.filter(organization__in=organizations)
    )
    assert SlaRetarget.objects.filter(passes=1).count() == 3


def test_two_beats_at_once_announce_each_moment_once(postgres_only):
    organization = make_organization("Dois beats")
    sla_policies_set(organization=organization, policies=[Policy("media", first_response=30, resolution=60)])
    with mock.patch("django.utils.timezone.now", return_value=timezone.now() - timedelta(hours=2)):
        tickets = [make_ticket(organization) for _ in range(6)]

    said = in_parallel([sla_announcements_run for _ in range(2)])
    again = in_parallel([sla_announcements_run for _ in range(2)])  # a restart, or a second beat, later

    assert not [result for result in said + again if isinstance(result, Exception)], said + again
    assert sum(said) == 6 * 4 and sum(again) == 0  # risk and breach of both targets of each ticket
    events = WebhookEvent.objects.filter(
        organization=organization, kind__in=[EventKind.SLA_AT_RISK, EventKind.SLA_BREACHED]
    )
    per_ticket_and_target = Counter(
        (body["evento"], body["data"]["ticket"]["id"], body["data"]["meta"]["tipo"])
        for body in (json.loads(text) for text in events.values_list("body", flat=True))
    )
    assert len(per_ticket_and_target) == 6 * 4 and set(per_ticket_and_target.values()) == {1}
    assert {ticket_id for _kind, ticket_id, _tipo in per_ticket_and_target} == {str(t.pk) for t in tickets}


def test_concurrent_ratings_of_one_cycle_are_one_rating_then_its_replacements(postgres_only):
    organization = make_organization("Avaliações concorrentes")
    ticket = make_ticket(organization)
    ticket_resolve(ticket=ticket)
    partner = APIClient()
    partner.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(organization)}")

    def rate(score):
        return lambda: partner.post(f"/api/v1/tickets/{ticket.pk}/avaliacao", {"nota": score}, format="json")

    responses = in_parallel([rate(1 + n % 5) for n in range(THREADS)])

    assert sorted(getattr(r, "status_code", r) for r in responses) == [200] * (THREADS - 1) + [201]
    [rating] = TicketRating.objects.filter(ticket=ticket)
    assert Ticket.objects.get(pk=ticket.pk).current_rating_id == rating.pk
