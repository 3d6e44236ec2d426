"""Rules that live in tickets.services only, whichever door calls them (API, admin, CLI)."""

import pytest

from helpdesk.models import Organization
from helpdesk.selectors import AgentNotFound
from tests.factories import make_agent, make_organization, make_ticket, status_of
from tickets.exceptions import StatusNotFound
from tickets.models import Contact, StatusCategory, Ticket, TicketSequence, TicketStatus
from tickets.services import RequesterData, contact_upsert, ticket_create, ticket_resolve, ticket_update_by_ids


def test_an_organization_created_through_any_door_gets_statuses_and_a_sequence(db):
    organization = Organization.objects.create(name="Criada no admin")

    categories = list(TicketStatus.objects.filter(organization=organization).values_list("category", flat=True))
    assert categories == ["aberto", "em_andamento", "aguardando", "resolvido", "fechado"]
    assert TicketSequence.objects.get(organization=organization).last_number == 0


def test_requester_email_is_stored_lower_cased_and_trimmed_by_the_service(organization):
    ticket, _ = ticket_create(
        organization=organization,
        subject="Assunto",
        description="Descrição",
        requester=RequesterData(name="Ana", email="  Ana.Souza@Example.COM "),
    )

    assert ticket.requester.email == "ana.souza@example.com"


def test_contacts_are_deduplicated_by_email_whatever_its_case(organization):
    first = contact_upsert(organization=organization, requester=RequesterData(name="Ana", email="ana@example.com"))

    again = contact_upsert(organization=organization, requester=RequesterData(name="Ana S.", email="ANA@Example.com"))

    assert again.pk == first.pk
    assert Contact.objects.filter(organization=organization).count() == 1


def test_null_optional_requester_fields_are_stored_blank(organization):
    contact = contact_upsert(
        organization=organization, requester=RequesterData(name="Bia", email=None, phone=None, external_id=None)
    )

    contact.refresh_from_db()
    assert (contact.email, contact.phone, contact.external_id) == ("", "", None)


def test_resolve_moves_to_the_first_resolved_status_once(organization):
    ticket = make_ticket(organization)

    assert ticket_resolve(ticket=ticket) is True
    ticket = Ticket.objects.select_related("status").get(pk=ticket.pk)
    assert ticket.status == status_of(organization, StatusCategory.RESOLVED)
    assert ticket.resolved_at is not None

    assert ticket_resolve(ticket=ticket) is False
    assert Ticket.objects.get(pk=ticket.pk).resolved_at == ticket.resolved_at


def test_update_by_ids_refuses_ids_of_another_organization_as_missing(organization):
    ticket = make_ticket(organization)
    other = make_organization()
    before = Ticket.objects.values("status_id", "assignee_id").get(pk=ticket.pk)

    with pytest.raises(StatusNotFound):
        ticket_update_by_ids(ticket=ticket, status_id=status_of(other, StatusCategory.CLOSED).pk)
    with pytest.raises(AgentNotFound):
        ticket_update_by_ids(ticket=ticket, assignee_id=make_agent(other).pk)
    with pytest.raises(StatusNotFound):
        ticket_update_by_ids(ticket=ticket, status_id="not-a-uuid")

    assert Ticket.objects.values("status_id", "assignee_id").get(pk=ticket.pk) == before


def test_update_by_ids_assigns_and_then_unassigns_with_none(organization, agent):
    ticket = make_ticket(organization)

    ticket = ticket_update_by_ids(ticket=ticket, assignee_id=agent.pk)
    assert ticket.assignee_id == agent.pk
    ticket = ticket_update_by_ids(ticket=ticket, priority="alta")
    assert (ticket.assignee_id, ticket.priority) == (agent.pk, "alta")

    ticket = ticket_update_by_ids(ticket=ticket, assignee_id=None)
    assert Ticket.objects.get(pk=ticket.pk).assignee_id is None
