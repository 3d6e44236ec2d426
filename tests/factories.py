"""Test data built through the services, so tests exercise the same paths as users."""

import itertools

from helpdesk.models import Agent, Organization
from helpdesk.services import agent_create, organization_create
from integrations.services import credential_create
from tickets.models import Reply, Ticket, TicketStatus
from tickets.services import RequesterData, reply_create_by_agent, reply_create_by_customer, ticket_create

_sequence = itertools.count(1)
PASSWORD = "s3nha-Forte-de-teste"


def make_organization(name: str | None = None) -> Organization:
    n = next(_sequence)
    organization, _admin = organization_create(
        name=name or f"Org {n}", admin_email=f"admin{n}@org{n}.test", admin_password=PASSWORD
    )
    return organization


def make_agent(organization: Organization, *, name: str | None = None, is_active: bool = True, avatar=None) -> Agent:
    n = next(_sequence)
    return agent_create(
        organization=organization,
        name=name or f"Atendente {n}",
        email=f"agent{n}@example.test",
        password=PASSWORD,
        is_active=is_active,
        avatar=avatar,
    )


def make_key(organization: Organization, name: str = "Integração") -> str:
    return credential_create(organization=organization, name=name)[1]


def make_ticket(organization: Organization, **overrides) -> Ticket:
    n = next(_sequence)
    requester = overrides.pop(
        "requester", RequesterData(name=f"Cliente {n}", email=f"cliente{n}@example.test", external_id=f"cli-{n}")
    )
    ticket, _ = ticket_create(
        organization=organization,
        subject=overrides.pop("subject", f"Assunto {n}"),
        description=overrides.pop("description", f"Descrição {n}"),
        requester=requester,
        **overrides,
    )
    return ticket


def make_agent_reply(
    ticket: Ticket, agent: Agent, body: str = "Resposta do atendente", internal: bool = False
) -> Reply:
    return reply_create_by_agent(ticket=ticket, agent=agent, body=body, internal=internal)


def make_customer_reply(ticket: Ticket, body: str = "Resposta do cliente") -> Reply:
    return reply_create_by_customer(ticket=ticket, body=body)


def status_of(organization: Organization, category: str) -> TicketStatus:
    return TicketStatus.objects.get(organization=organization, category=category)
