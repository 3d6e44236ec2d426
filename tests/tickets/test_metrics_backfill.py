"""Migration tickets 0014 fills each ticket's reply counts and first agent reply from its replies (a batch of
tickets per transaction), so `incluir=metricas` is right for tickets answered before it; it moves no ticket in the
change list."""

import importlib

from django.apps import apps

from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket
from tickets.models import Ticket

backfill = importlib.import_module("tickets.migrations.0014_ticket_sla_clock")


def test_the_counts_and_the_first_agent_reply_come_from_the_replies(organization, monkeypatch):
    agent = make_agent(organization)
    answered = make_ticket(organization)
    make_customer_reply(answered)
    first = make_agent_reply(answered, agent)
    make_agent_reply(answered, agent, internal=True)
    make_agent_reply(answered, agent)
    untouched = make_ticket(organization)
    zeroed = {"agent_reply_count": 0, "customer_reply_count": 0, "first_response_at": None}
    Ticket.objects.update(**zeroed)  # as the columns were added
    places = dict(Ticket.objects.values_list("pk", "change_seq"))
    monkeypatch.setattr(backfill, "BATCH", 1)  # one ticket per batch: the batches are walked

    backfill._count_replies(apps, None)  # it reads and writes rows only

    answered = Ticket.objects.get(pk=answered.pk)
    assert (answered.agent_reply_count, answered.customer_reply_count) == (2, 1)
    assert answered.first_response_at == first.created_at
    assert Ticket.objects.filter(pk=untouched.pk).values(*zeroed).get() == zeroed
    assert dict(Ticket.objects.values_list("pk", "change_seq")) == places
