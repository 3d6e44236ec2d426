"""The agents' queues (issue 24): named views of the ticket list that say what to do next, each a condition on
tickets, counted all at once."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from helpdesk.models import Agent
from tickets.models import Reply, ReplyOrigin, StatusCategory, Ticket
from tickets.service_levels import sla_condition

NOT_DONE = ~Q(status__category__in=[StatusCategory.RESOLVED, StatusCategory.CLOSED])


@dataclass(frozen=True)
class Queue:
    slug: str
    label: str
    condition: Callable[[Agent | None, datetime], Q]


QUEUES = (
    Queue("meus", "Meus tickets", lambda agent, now: NOT_DONE & Q(assignee=agent)),
    Queue("sem_atendente", "Sem atendente", lambda agent, now: NOT_DONE & Q(assignee__isnull=True)),
    Queue("aguardando", "Aguardando cliente", lambda agent, now: Q(status__category=StatusCategory.WAITING)),
    Queue("abertos", "Todos abertos", lambda agent, now: NOT_DONE),
    Queue("sla_em_risco", "SLA em risco", lambda agent, now: NOT_DONE & sla_condition("em_risco", now=now)),
    Queue("sla_violado", "SLA violado", lambda agent, now: NOT_DONE & sla_condition("violado", now=now)),
    Queue("todos", "Todos os tickets", lambda agent, now: Q()),
)
QUEUES_BY_SLUG = {queue.slug: queue for queue in QUEUES}
DEFAULT_QUEUE = "meus"


def queue_tickets(tickets: QuerySet[Ticket], slug: str, *, agent: Agent | None, now: datetime) -> QuerySet[Ticket]:
    """The tickets of a queue, among `tickets` (already kept to the viewer's organization). "Meus tickets" of
    someone who is not an agent is empty."""
    if slug == DEFAULT_QUEUE and agent is None:
        return tickets.none()
    return tickets.filter(QUEUES_BY_SLUG[slug].condition(agent, now))


def queue_counts(tickets: QuerySet[Ticket], *, agent: Agent | None, now: datetime) -> dict[str, int]:
    """Every queue's count in one query, whatever the number of queues or tickets."""
    counts = {
        queue.slug: Count("pk", filter=queue.condition(agent, now))
        for queue in QUEUES
        if agent is not None or queue.slug != DEFAULT_QUEUE
    }
    result = tickets.order_by().aggregate(**counts)
    result.setdefault(DEFAULT_QUEUE, 0)
    return result


def with_last_messages(tickets: QuerySet[Ticket]) -> QuerySet[Ticket]:
    """Each ticket with the customer's last activity (their last public reply, or the ticket's opening) and the
    side of the last public message (`last_public_origin`, None when only the opening message exists): two
    subqueries in the list's one statement, on the replies' thread index."""
    public = Reply.objects.filter(ticket=OuterRef("pk"), is_internal=False).order_by("-created_at")
    customer = public.filter(origin=ReplyOrigin.CUSTOMER_API)
    return tickets.annotate(
        customer_activity_at=Coalesce(Subquery(customer.values("created_at")[:1]), "created_at"),
        last_public_origin=Subquery(public.values("origin")[:1]),
    )


def awaits_agent(ticket: Ticket) -> bool:
    """The customer spoke last (a public reply of theirs, or only the opening message) on a ticket not done:
    the ball is in the team's court. Reads with_last_messages' annotations."""
    if ticket.status.category in (StatusCategory.RESOLVED, StatusCategory.CLOSED):
        return False
    return ticket.last_public_origin in (None, ReplyOrigin.CUSTOMER_API)
