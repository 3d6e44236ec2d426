"""The hot paths' builders (tickets.api.output) give exactly what the documented DRF serializers give.

Many generated tickets: with and without every optional field, in every status, with
replies from agents and customers, notes, edits, Unicode, and timestamps with and
without microseconds. Both sides go through the same JSON renderer, so bytes are compared.
"""

import random
from datetime import UTC, datetime
from unittest import mock

import pytest
from django.core import signing
from django.db.models import Prefetch
from django.test import RequestFactory

from helpdesk.api.envelope import json_bytes
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket, png_file, status_of
from tickets.api.output import (
    reply_panel,
    reply_public,
    reply_row,
    ticket_new_public,
    ticket_panel_row,
    ticket_row,
    ticket_summary,
    tickets_panel,
    tickets_public,
)
from tickets.api.panel_serializers import PanelReplyOut, PanelTicketOut
from tickets.api.serializers import AgentOut, ReplyPublicOut, TicketPublicOut, TicketSummaryOut
from tickets.api.views import agents_public
from tickets.models import Reply, StatusCategory, Ticket
from tickets.selectors import PANEL_TICKET_COLUMNS, REPLY_COLUMNS, TICKET_COLUMNS
from tickets.services import RequesterData, reply_edit_as_agent, reply_edit_as_customer, ticket_update

TEXTS = ["Simples", "Acentuação: ção, ÁÉÍÓÚ", "emoji 🎫", 'aspas "duplas" e \\ barra', "linha\nnova\u2028sep"]


def _thread(to_attr: str, queryset):
    related = queryset.select_related("author_agent", "author_contact").order_by("created_at", "id")
    return Prefetch("replies", queryset=related, to_attr=to_attr)


def _serialized_public(organization) -> list:
    tickets = (
        Ticket.objects.filter(organization=organization)
        .select_related("status", "requester")
        .prefetch_related(_thread("public_replies", Reply.objects.filter(is_internal=False)))
        .order_by("-created_at", "-number")
    )
    return TicketPublicOut(tickets, many=True).data


def _serialized_panel(organization) -> list:
    tickets = (
        Ticket.objects.filter(organization=organization)
        .select_related("status", "requester", "assignee")
        .prefetch_related(_thread("thread", Reply.objects.all()))
        .order_by("-created_at", "-number")
    )
    return PanelTicketOut(tickets, many=True).data


def _rows(organization, columns):
    tickets = Ticket.objects.filter(organization=organization).order_by("-created_at", "-number")
    return list(tickets.values_list(*columns))


def _generate(organization, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    agents = [make_agent(organization, name=rng.choice(TEXTS)) for _ in range(3)]
    categories = [category for category, _label in StatusCategory.choices]
    for n in range(count):
        requester = RequesterData(
            name=rng.choice(TEXTS),
            email=rng.choice(["", f"cliente{n}@example.test"]),
            phone=rng.choice(["", "+55 11 9999-0000"]),
            external_id=rng.choice([None, f"cli-{n % 17}"]),
        )
        ticket = make_ticket(
            organization,
            subject=rng.choice(TEXTS),
            description=rng.choice(TEXTS),
            priority=rng.choice([None, "baixa", "media", "alta", "urgente"]),
            external_id=rng.choice([None, f"pedido-{n}"]),
            requester=requester,
        )
        for _ in range(rng.randrange(4)):
            kind = rng.choice(["agent", "note", "customer"])
            if kind == "customer" and ticket.status.category != StatusCategory.CLOSED:
                reply = make_customer_reply(ticket, body=rng.choice(TEXTS))
                if rng.random() < 0.3:
                    reply_edit_as_customer(reply=reply, body=rng.choice(TEXTS))
            elif kind != "customer":
                agent = rng.choice(agents)
                reply = make_agent_reply(ticket, agent, body=rng.choice(TEXTS), internal=kind == "note")
                if rng.random() < 0.3:
                    reply_edit_as_agent(reply=reply, agent=agent, body=rng.choice(TEXTS))
            ticket = Ticket.objects.select_related("status").get(pk=ticket.pk)
        ticket = ticket_update(
            ticket=ticket,
            status=status_of(organization, rng.choice(categories)),
            assignee=rng.choice([None, *agents]),
        )
    # Timestamps without microseconds are written without a fraction: both sides must agree.
    whole_second = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    Ticket.objects.filter(organization=organization, number__lte=count // 5).update(updated_at=whole_second)
    Reply.objects.filter(ticket__organization=organization, ticket__number__lte=count // 5).update(
        created_at=whole_second
    )


@pytest.fixture
def generated(organization):
    _generate(organization, 120)
    return organization


def test_ticket_publico_builder_equals_the_serializer(generated):
    fast = tickets_public(_rows(generated, TICKET_COLUMNS))
    serialized = _serialized_public(generated)

    assert len(fast) == 120
    assert any(ticket["respostas"] for ticket in fast)
    assert json_bytes(fast) == json_bytes(serialized)


def test_panel_ticket_builder_equals_the_serializer(generated):
    fast = tickets_panel(_rows(generated, PANEL_TICKET_COLUMNS))

    assert any(reply["interna"] for ticket in fast for reply in ticket["respostas"])
    assert json_bytes(fast) == json_bytes(_serialized_panel(generated))


def test_webhook_ticket_summary_equals_the_serializer(generated):
    tickets = Ticket.objects.filter(organization=generated).select_related("status", "requester")

    for ticket in tickets:
        row = Ticket.objects.values_list(*TICKET_COLUMNS).get(pk=ticket.pk)
        assert json_bytes(ticket_summary(row)) == json_bytes(TicketSummaryOut(ticket).data)


def test_reply_builders_equal_the_serializers(generated):
    replies = Reply.objects.filter(ticket__organization=generated).select_related("author_agent", "author_contact")

    assert replies.count() > 50
    for reply in replies:
        row = Reply.objects.values_list(*REPLY_COLUMNS).get(pk=reply.pk)
        assert json_bytes(reply_panel(row)) == json_bytes(PanelReplyOut(reply).data)
        assert json_bytes(reply_row(reply)) == json_bytes(row)
        if not reply.is_internal:
            assert json_bytes(reply_public(row)) == json_bytes(ReplyPublicOut(reply).data)


def test_rows_built_from_objects_in_hand_equal_the_rows_read(generated):
    tickets = Ticket.objects.filter(organization=generated).select_related("status", "requester", "assignee")

    for ticket in tickets:
        assert ticket_row(ticket) == Ticket.objects.values_list(*TICKET_COLUMNS).get(pk=ticket.pk)
        assert ticket_panel_row(ticket) == Ticket.objects.values_list(*PANEL_TICKET_COLUMNS).get(pk=ticket.pk)


def test_a_new_ticket_built_in_hand_equals_the_serializer(organization):
    ticket = make_ticket(organization, external_id="novo", requester=RequesterData(name="Ana", email="a@b.test"))

    stored = (
        Ticket.objects.select_related("status", "requester")
        .prefetch_related(_thread("public_replies", Reply.objects.filter(is_internal=False)))
        .get(pk=ticket.pk)
    )
    assert json_bytes(ticket_new_public(ticket)) == json_bytes(TicketPublicOut(stored).data)


def test_agent_builder_equals_the_serializer(organization):
    make_agent(organization, name="Com foto", avatar=png_file())
    make_agent(organization, name="Sem foto")
    request = RequestFactory().get("/api/v1/atendentes")
    agents = organization.agents.order_by("name", "id")

    with mock.patch.object(signing.time, "time", return_value=1_800_000_000):  # one signing instant for both
        fast = agents_public(request, list(agents.values_list("id", "name", "avatar")))
        serialized = AgentOut(list(agents), many=True, context={"request": request}).data

    assert sum(agent["avatar_url"] is not None for agent in fast) == 1
    assert json_bytes(fast) == json_bytes(serialized)
