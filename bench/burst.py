"""Write a burst of webhook events with the product's outbox service, while no worker runs.

Run by bench/run.py with the product's settings (one process per part):
    python -m bench.burst --tickets ids.json --count N [--part I --parts P] [--webhooks ids.json]

Each part first makes one real agent public reply (tickets.services) and then
writes the rest of its share with integrations.events.event_emit, the service
that writes an event and its delivery rows and queues the delivery tasks on
commit, reusing the real reply's payload, each event for one of the webhooks
named in --webhooks in turn (several partners, as on a real installation; one
webhook's attempts in flight are capped): what the worker then sends is what
an agent's reply sends. A whole agent reply costs three times as much to write
on a 2-core machine, which would not fit the ten minutes of `make bench`; when
event_emit is not there (or takes other arguments) every event is a real agent
reply. Prints the path taken on stdout.
"""

import argparse
import inspect
import json
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()


def _outbox_service():
    """event_emit(organization=, kind=, data_builder=) if the product still has it, else None."""
    try:
        from integrations.events import event_emit
        from integrations.models import WebhookEvent
    except ImportError:
        return None
    if not {"organization", "kind", "data_builder"} <= set(inspect.signature(event_emit).parameters):
        return None
    return event_emit, WebhookEvent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickets", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--part", type=int, default=0)
    parser.add_argument("--parts", type=int, default=1)
    parser.add_argument("--webhooks", help="a JSON list of webhook ids; each event goes to one, in turn")
    options = parser.parse_args()

    from helpdesk.models import Agent
    from tickets.models import Ticket
    from tickets.services import reply_create_by_agent

    with open(options.tickets) as handle:
        ticket_ids = json.load(handle)
    tickets = {str(t.pk): t for t in Ticket.objects.filter(pk__in=ticket_ids).select_related("organization")}
    organization = next(iter(tickets.values())).organization
    agents = list(Agent.objects.filter(organization=organization, is_active=True).order_by("name"))
    numbers = list(range(options.part, options.count, options.parts))

    def agent_reply(n: int) -> None:
        ticket = tickets[ticket_ids[n % len(ticket_ids)]]
        reply_create_by_agent(ticket=ticket, agent=agents[n % len(agents)], body=f"Atualização {n} do seu pedido.")

    agent_reply(numbers[0])
    outbox = _outbox_service()
    template = None
    if outbox is not None:
        event_emit, WebhookEvent = outbox
        latest = WebhookEvent.objects.filter(organization=organization).order_by("-created_at").first()
        try:
            template = json.loads(latest.body)
        except (AttributeError, ValueError):
            template = None
    if template is None:
        for n in numbers[1:]:
            agent_reply(n)
        print("agent replies (tickets.services.reply_create_by_agent)")
        return
    data = template["data"]
    targets = _webhooks(options.webhooks)
    for n in numbers[1:]:
        chosen = {"webhooks": [targets[n % len(targets)]]} if targets else {}
        event_emit(organization=organization, kind=template["evento"], data_builder=lambda: data, **chosen)
    print("outbox service (integrations.events.event_emit) with a real reply's payload")


def _webhooks(path: str | None) -> list:
    if not path:
        return []
    from integrations.models import Webhook

    with open(path) as handle:
        ids = json.load(handle)
    found = {str(webhook.pk): webhook for webhook in Webhook.objects.filter(pk__in=ids)}
    return [found[webhook_id] for webhook_id in ids]


if __name__ == "__main__":
    main()
