"""Unit tests of the ticket services (agent actions and the rules behind the API)."""

import pytest
from django.utils import timezone

from foundation.exceptions import ValidationFailed
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_organization, make_ticket, status_of
from tickets.exceptions import ReplyNotEditable, TicketClosed
from tickets.models import Reply, ReplyOrigin, StatusCategory, TicketStatus
from tickets.selectors import status_default_open
from tickets.services import (
    RequesterData,
    reply_create_by_agent,
    reply_edit_as_agent,
    reply_edit_as_customer,
    ticket_create,
    ticket_update,
)


def test_new_organization_has_the_five_default_statuses(organization):
    statuses = list(TicketStatus.objects.filter(organization=organization).values_list("name", "category", "color"))

    assert statuses == [
        ("Aberto", "aberto", "#3B82F6"),
        ("Em andamento", "em_andamento", "#F59E0B"),
        ("Aguardando cliente", "aguardando", "#8B5CF6"),
        ("Resolvido", "resolvido", "#10B981"),
        ("Fechado", "fechado", "#6B7280"),
    ]


def test_new_ticket_takes_the_default_open_status(organization):
    ticket = make_ticket(organization)

    assert ticket.status == status_of(organization, StatusCategory.OPEN)
    assert ticket.resolved_at is None


def test_the_default_open_status_comes_from_the_cache_as_the_stored_row(organization, django_assert_num_queries):
    stored = make_ticket(organization).status  # the first create reads it and keeps it in the cache

    with django_assert_num_queries(0):
        cached = status_default_open(organization=organization)

    assert cached == stored
    assert [getattr(cached, field.attname) for field in TicketStatus._meta.concrete_fields] == [
        getattr(stored, field.attname) for field in TicketStatus._meta.concrete_fields
    ]
    assert (cached._state.adding, cached._state.db) == (False, "default")  # a saved row, as from a query


def test_agent_adds_public_reply_and_internal_note(organization, agent):
    ticket = make_ticket(organization)

    public = reply_create_by_agent(ticket=ticket, agent=agent, body="Olá")
    note = reply_create_by_agent(ticket=ticket, agent=agent, body="Cliente VIP", internal=True)

    assert (public.origin, public.is_internal, public.author_agent) == (ReplyOrigin.AGENT, False, agent)
    assert (note.origin, note.is_internal) == (ReplyOrigin.AGENT, True)


def test_agent_of_another_organization_cannot_reply(organization):
    ticket = make_ticket(organization)
    outsider = make_agent(make_organization())

    with pytest.raises(ValidationFailed):
        reply_create_by_agent(ticket=ticket, agent=outsider, body="Olá")
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_agent_edits_own_reply_and_it_is_marked_edited(organization, agent):
    reply = make_agent_reply(make_ticket(organization), agent, body="Antes")

    reply_edit_as_agent(reply=reply, agent=agent, body="Depois")

    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Depois", True)


def test_agent_cannot_edit_a_customer_reply_or_another_agents_reply(organization, agent):
    ticket = make_ticket(organization)
    customer_reply = make_customer_reply(ticket, body="Do cliente")
    colleague_reply = make_agent_reply(ticket, make_agent(organization), body="Do colega")

    for reply in (customer_reply, colleague_reply):
        with pytest.raises(ReplyNotEditable):
            reply_edit_as_agent(reply=reply, agent=agent, body="Alterado")
        reply.refresh_from_db()
        assert reply.body != "Alterado"
        assert reply.edited is False


def test_customer_cannot_edit_an_agent_reply(organization, agent):
    reply = make_agent_reply(make_ticket(organization), agent, body="Do atendente")

    with pytest.raises(ReplyNotEditable):
        reply_edit_as_customer(reply=reply, body="Alterado")
    reply.refresh_from_db()
    assert reply.body == "Do atendente"


def test_customer_reply_on_closed_ticket_is_refused(organization):
    ticket = make_ticket(organization)
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.CLOSED))

    with pytest.raises(TicketClosed):
        make_customer_reply(ticket)
    assert not Reply.objects.filter(ticket=ticket).exists()


@pytest.mark.parametrize("category", [StatusCategory.WAITING, StatusCategory.RESOLVED])
def test_customer_reply_reopens_waiting_or_resolved_ticket(organization, category):
    ticket = make_ticket(organization)
    ticket_update(ticket=ticket, status=status_of(organization, category))

    make_customer_reply(ticket)

    ticket.refresh_from_db()
    assert ticket.status.category == StatusCategory.OPEN
    assert ticket.resolved_at is None


def test_customer_reply_keeps_in_progress_status(organization):
    ticket = make_ticket(organization)
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.IN_PROGRESS))

    make_customer_reply(ticket)

    ticket.refresh_from_db()
    assert ticket.status.category == StatusCategory.IN_PROGRESS


def test_resolving_sets_resolved_at_and_leaving_clears_it(organization):
    ticket = make_ticket(organization)
    before = timezone.now()

    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))
    ticket.refresh_from_db()
    assert ticket.resolved_at is not None and ticket.resolved_at >= before

    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.IN_PROGRESS))
    ticket.refresh_from_db()
    assert ticket.resolved_at is None


def test_moving_between_two_resolved_statuses_keeps_the_first_resolution_time(organization):
    ticket = make_ticket(organization)
    ticket_update(ticket=ticket, status=status_of(organization, StatusCategory.RESOLVED))
    ticket.refresh_from_db()
    first_resolution = ticket.resolved_at
    other_resolved = TicketStatus.objects.create(
        organization=organization, name="Resolvido por telefone", category=StatusCategory.RESOLVED
    )

    ticket_update(ticket=ticket, status=other_resolved)

    ticket.refresh_from_db()
    assert ticket.resolved_at == first_resolution


def test_update_assigns_agent_and_changes_priority(organization, agent):
    ticket = make_ticket(organization)

    ticket_update(ticket=ticket, assignee=agent, priority="urgente")

    ticket.refresh_from_db()
    assert (ticket.assignee, ticket.priority) == (agent, "urgente")


def test_update_refuses_status_or_agent_of_another_organization(organization):
    other = make_organization()
    ticket = make_ticket(organization)

    with pytest.raises(ValidationFailed) as error:
        ticket_update(ticket=ticket, status=status_of(other, StatusCategory.CLOSED), assignee=make_agent(other))

    assert set(error.value.errors) == {"status_id", "atendente_id"}
    ticket.refresh_from_db()
    assert ticket.status.category == StatusCategory.OPEN
    assert ticket.assignee is None


def test_reused_contact_keeps_its_values_and_fills_blanks(organization):
    first, _ = ticket_create(
        organization=organization,
        subject="a",
        description="b",
        requester=RequesterData(name="Maria", external_id="c-1"),
    )
    second, _ = ticket_create(
        organization=organization,
        subject="a",
        description="b",
        requester=RequesterData(name="Outro Nome", email="maria@example.test", phone="+55 11", external_id="c-1"),
    )

    assert first.requester_id == second.requester_id
    second.requester.refresh_from_db()
    assert (second.requester.name, second.requester.email, second.requester.phone) == (
        "Maria",
        "maria@example.test",
        "+55 11",
    )


def test_an_inactive_agent_cannot_be_assigned(organization):
    inactive = make_agent(organization, is_active=False)
    ticket = make_ticket(organization)

    with pytest.raises(ValidationFailed) as error:
        ticket_update(ticket=ticket, assignee=inactive)

    assert error.value.errors == {"atendente_id": ["Atendente inativo não pode receber tickets."]}
    ticket.refresh_from_db()
    assert ticket.assignee is None
