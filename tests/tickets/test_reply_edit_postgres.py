"""An edit of a reply while its ticket is deleted, on PostgreSQL: the deletion takes the ticket's row and then its
replies' (cascade); an edit that took the reply's row first and then moved the ticket deadlocked with it (seen as a
503 in the example mirror's end-to-end run). The edit now takes the ticket's row first: one waits for the other."""

import threading
import time

import pytest
from django.db import connections

from helpdesk.actors import Actor
from tests.factories import make_agent, make_customer_reply, make_organization, make_ticket
from tickets import services
from tickets.exceptions import TicketNotFound
from tickets.models import Reply, Ticket


def test_an_edit_and_the_deletion_of_its_ticket_never_deadlock(postgres_only, monkeypatch):
    organization = make_organization("Edições")
    agent = make_agent(organization)
    ticket = make_ticket(organization)
    reply = make_customer_reply(ticket, body="Primeira versão")
    edit_midway, deletion_started = threading.Event(), threading.Event()
    outcomes: dict[str, object] = {}
    real_touch = services.tickets_touch

    def touch_after_the_deletion_began(*, tickets):
        # The edit has written the reply; the deletion now starts and waits for a row the edit holds.
        edit_midway.set()
        deletion_started.wait(10)
        time.sleep(0.5)
        return real_touch(tickets=tickets)

    monkeypatch.setattr(services, "tickets_touch", touch_after_the_deletion_began)

    def edit():
        try:
            services.reply_edit_as_customer(reply=Reply.objects.get(pk=reply.pk), body="Segunda versão")
            outcomes["edit"] = "edited"
        except Exception as error:  # reported below
            outcomes["edit"] = error
        finally:
            edit_midway.set()
            connections.close_all()

    def delete():
        edit_midway.wait(10)
        deletion_started.set()
        try:
            services.ticket_delete(ticket=Ticket.objects.get(pk=ticket.pk), actor=Actor.of_agent(agent))
            outcomes["delete"] = "deleted"
        except Exception as error:  # reported below
            outcomes["delete"] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=edit), threading.Thread(target=delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert outcomes == {"edit": "edited", "delete": "deleted"}, outcomes
    assert not Ticket.objects.filter(pk=ticket.pk).exists()


def test_an_edit_of_a_reply_whose_ticket_is_gone_is_a_404(postgres_only):
    organization = make_organization("Edições")
    agent = make_agent(organization)
    ticket = make_ticket(organization)
    reply = Reply.objects.get(pk=make_customer_reply(ticket).pk)
    services.ticket_delete(ticket=ticket, actor=Actor.of_agent(agent))

    with pytest.raises(TicketNotFound):
        services.reply_edit_as_customer(reply=reply, body="Tarde demais")
