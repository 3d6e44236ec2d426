"""Test data built through the services, so tests exercise the same paths as users (and the files they upload)."""

import io
import itertools
from datetime import datetime

from django.core.files.base import ContentFile
from PIL import Image

from helpdesk.models import Agent, Organization, User
from helpdesk.services import agent_create, organization_create
from integrations.events import webhook_test_send
from integrations.keys import key_digest
from integrations.models import ApiCredential, Webhook, WebhookDelivery
from integrations.services import credential_create, webhook_create, webhook_update
from tests.contract import ALL_EVENTS
from tickets.models import Reply, Ticket, TicketStatus
from tickets.services import (
    RequesterData,
    reply_create_by_agent,
    reply_create_by_customer,
    ticket_create,
    ticket_update,
)

_sequence = itertools.count(1)
PASSWORD = "s3nha-Forte-de-teste"


def make_organization(name: str | None = None) -> Organization:
    n = next(_sequence)
    organization, _admin = organization_create(
        name=name or f"Org {n}", admin_email=f"admin{n}@org{n}.test", admin_password=PASSWORD
    )
    return organization


def admin_of(organization: Organization) -> User:
    """The admin made by make_organization: staff, agent, holds api_publica:gerenciar."""
    return User.objects.get(organization=organization, is_staff=True)


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


def credential_of(key: str) -> ApiCredential:
    """The stored credential of a full key (only its digest is stored)."""
    return ApiCredential.objects.get(key_digest=key_digest(key))


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


def make_searchable_ticket(
    organization: Organization, subject="Assunto", description="Descrição", name="Cliente", email="", **overrides
) -> Ticket:
    """A ticket whose every searchable text is given, so `busca` tests match only what they mean to."""
    return make_ticket(
        organization,
        subject=subject,
        description=description,
        requester=RequesterData(name=name, email=email),
        **overrides,
    )


def make_agent_reply(
    ticket: Ticket, agent: Agent, body: str = "Resposta do atendente", internal: bool = False
) -> Reply:
    return reply_create_by_agent(ticket=ticket, agent=agent, body=body, internal=internal)


def make_customer_reply(ticket: Ticket, body: str = "Resposta do cliente") -> Reply:
    return reply_create_by_customer(organization=ticket.organization, ticket_id=ticket.pk, body=body)


def make_busy_ticket(organization: Organization, agents: list[Agent], n: int, *, assign_every_other=False) -> Ticket:
    """Ticket n with customer replies, public replies and an internal note of `agents` in turn, for query counts.

    With assign_every_other, even-numbered tickets get an assignee too.
    """
    ticket = make_ticket(organization, subject=f"Ticket {n}")
    make_customer_reply(ticket, body=f"Cliente {n}")
    make_agent_reply(ticket, agents[n % len(agents)], body=f"Atendente {n}")
    make_agent_reply(ticket, agents[(n + 1) % len(agents)], body=f"Nota {n}", internal=True)
    make_customer_reply(ticket, body=f"Cliente de novo {n}")
    if assign_every_other and n % 2 == 0:
        ticket_update(ticket=ticket, assignee=agents[n % len(agents)])
    return ticket


def status_of(organization: Organization, category: str) -> TicketStatus:
    return TicketStatus.objects.get(organization=organization, category=category)


def make_webhook(
    organization: Organization,
    *,
    name: str = "ERP",
    url: str = "https://hooks.example.com/erp",
    events: list[str] = ALL_EVENTS,
    active: bool = True,
    blocks: list[str] | None = None,
) -> Webhook:
    """A webhook made through the service, so its URL is checked: an https URL needs the `example_dns`
    fixture to resolve, an http://127.0.0.1 one needs insecure URLs allowed. `blocks`: its `incluir`."""
    webhook = webhook_create(organization=organization, name=name, url=url, events=list(events), blocks=blocks)
    if not active:
        webhook_update(webhook=webhook, is_active=False)
    return webhook


def make_test_delivery(webhook: Webhook, *, created_at: datetime | None = None) -> WebhookDelivery:
    """The pending delivery of a webhook.teste event, backdated to `created_at` if given."""
    delivery = webhook_test_send(webhook=webhook)
    if created_at is not None:
        WebhookDelivery.objects.filter(pk=delivery.pk).update(created_at=created_at)
        delivery.refresh_from_db()
    return delivery


def png_bytes() -> bytes:
    """A small valid PNG, the same bytes on every call."""
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def png_file(name: str = "avatar.png") -> ContentFile:
    """png_bytes as an uploaded file, e.g. an agent's avatar."""
    return ContentFile(png_bytes(), name=name)
