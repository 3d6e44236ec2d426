"""`ticket.sla_em_risco` and `ticket.sla_violado`: the beat's run (tickets.service_levels.sla_announcements_run) at
set instants, what the feed and the webhooks' outbox get, each once per target and cycle, and nothing for
another organization. Two beats at once are on PostgreSQL (test_sla_clock_postgres.py); a real beat with a
worker and a receiving server in tests/e2e/test_sla_events_e2e.py."""

from datetime import datetime

import pytest

from integrations.models import EventKind, WebhookDelivery
from sla.calendar import Interval
from sla.policies import Policy
from sla.services import business_hours_set, sla_policies_set
from tests.assertions import assert_success
from tests.factories import make_agent, make_ticket, make_webhook, status_of
from tests.sla.moments import local, wall_clock, z
from tickets.models import StatusCategory, Ticket
from tickets.service_levels import sla_announcements_run
from tickets.services import reply_create_by_agent, ticket_update

EVENTS = "/api/v1/eventos"
SLA_EVENTS = [EventKind.SLA_AT_RISK, EventKind.SLA_BREACHED]

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def beat(at: datetime) -> int:
    with wall_clock(at):
        return sla_announcements_run()


def sla_events(partner) -> list[dict]:
    items = assert_success(partner.get(EVENTS), 200, "Eventos listados.")["itens"]
    return [item for item in items if item["evento"] in SLA_EVENTS]


@pytest.fixture
def office(organization):
    business_hours_set(
        organization=organization,
        time_zone="America/Sao_Paulo",
        intervals=[Interval(day, 9 * 60, 18 * 60) for day in range(5)],
        holidays=[],
    )
    sla_policies_set(organization=organization, policies=[Policy("media", 120, 60, 540)])


@pytest.mark.usefixtures("office")
def test_risk_and_breach_are_announced_once_each_in_the_feed_and_to_subscribers(partner, organization, example_dns):
    webhook = make_webhook(organization, events=SLA_EVENTS)
    with wall_clock(local(26, 10)):
        ticket = make_ticket(organization)

    assert beat(local(26, 11, 35)) == 0  # before 80% of the first response's 120 minutes
    assert beat(local(26, 11, 36)) == 1
    assert beat(local(26, 11, 50)) == 0
    assert beat(local(26, 12, 1)) == 1
    assert beat(local(26, 12, 2)) == beat(local(26, 13)) == 0  # a restarted beat finds nothing left

    at_risk, breached = sla_events(partner)
    assert (at_risk["evento"], breached["evento"]) == ("ticket.sla_em_risco", "ticket.sla_violado")
    assert at_risk["data"]["ticket"]["id"] == str(ticket.pk)
    assert at_risk["data"]["ator"] == {"tipo": "sistema"}
    first_response = {"tipo": "primeira_resposta", "vence_em": z(local(26, 12)), "cumprida_em": None}
    assert at_risk["data"]["meta"] == first_response | {"violada": False, "pausada": False}
    assert breached["data"]["meta"] == first_response | {"violada": True, "pausada": False}
    assert breached["data"]["sla"] == {
        "politica": "media",
        "metas": [
            first_response | {"violada": True, "pausada": False},
            {
                "tipo": "resolucao",
                "vence_em": z(local(27, 10)),
                "cumprida_em": None,
                "violada": False,
                "pausada": False,
            },
        ],
    }
    delivered = WebhookDelivery.objects.filter(webhook=webhook).values_list("event__kind", flat=True)
    assert sorted(delivered) == sorted(SLA_EVENTS)


@pytest.mark.usefixtures("office")
def test_a_target_met_late_before_the_beat_looked_is_still_announced_and_each_cycle_again(partner, organization):
    agent = make_agent(organization)
    with wall_clock(local(26, 10)):
        ticket = make_ticket(organization)
    with wall_clock(local(26, 12, 5)):  # 5 minutes late, between two beats
        reply_create_by_agent(ticket=Ticket.objects.get(pk=ticket.pk), agent=agent, body="Olá")

    assert beat(local(26, 12, 6)) == 2  # its risk and its breach, never seen by a beat
    kinds = [(item["evento"], item["data"]["meta"]["tipo"]) for item in sla_events(partner)]
    assert kinds == [("ticket.sla_em_risco", "primeira_resposta"), ("ticket.sla_violado", "primeira_resposta")]
    assert sla_events(partner)[1]["data"]["meta"]["cumprida_em"] == z(local(26, 12, 5))


@pytest.mark.usefixtures("office")
def test_a_paused_target_is_not_announced_until_it_runs_again(partner, organization):
    with wall_clock(local(26, 10)):
        ticket = make_ticket(organization)
    with wall_clock(local(26, 11)):
        ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.WAITING))

    assert beat(local(27, 17)) == 0
    assert Ticket.objects.get(pk=ticket.pk).sla_event_at is None


def test_tickets_without_a_policy_are_never_announced(partner, organization):
    with wall_clock(local(26, 10)):
        make_ticket(organization)

    assert beat(local(30, 10)) == 0
    assert sla_events(partner) == []


@pytest.mark.usefixtures("office")
def test_another_organizations_beat_moments_never_reach_this_feed(
    partner, other_partner, organization, other_organization
):
    sla_policies_set(organization=other_organization, policies=[Policy("media", first_response=30)])
    with wall_clock(local(26, 10)):
        theirs = make_ticket(other_organization)

    assert beat(local(26, 10, 31)) == 2

    assert sla_events(partner) == []
    assert [item["data"]["ticket"]["id"] for item in sla_events(other_partner)] == [str(theirs.pk)] * 2
