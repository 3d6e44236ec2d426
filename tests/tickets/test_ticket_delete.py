"""Deleting a ticket reaches every copy: DELETE /api/tickets/{id}, the admin (one or many) and the operator
command go through ticket_delete, which leaves a tombstone (the change list's `excluidos`) and emits
`ticket.excluido`. Tombstones are kept as long as events; a change-list cursor older than that is a 410."""

import json
from datetime import timedelta

import pytest
from django.core import signing
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from helpdesk.actors import Actor
from integrations.models import EventKind, WebhookEvent
from tests.assertions import assert_error, assert_success, assert_ticket_not_found, panel_client, run_admin_action
from tests.contract import TICKET_CHANGELIST
from tests.factories import make_agent_reply, make_customer_reply, make_ticket, make_webhook
from tickets.models import Reply, Ticket, TicketTombstone
from tickets.services import RequesterData, ticket_delete, ticket_update, tombstones_purge_expired
from tickets.tasks import purge_expired_tombstones

CHANGES = "/api/v1/tickets/alteracoes"

pytestmark = pytest.mark.usefixtures("generous_rate_limits", "example_dns")


@pytest.fixture
def manager_panel(admin):
    """The organization's admin: an agent in the Suporte group, which may delete tickets."""
    return panel_client(admin.email)


@pytest.fixture
def ticket(organization, agent) -> Ticket:
    ticket = make_ticket(organization, subject="Teste", external_id="pedido-teste")
    make_customer_reply(ticket, body="Olá")
    make_agent_reply(ticket, agent, body="Oi")
    make_agent_reply(ticket, agent, body="Nota", internal=True)
    return ticket


def changes(client, **params) -> dict:
    return assert_success(client.get(CHANGES, params), 200, "Alterações listadas.")


def drain(client, desde=None, limite=100) -> tuple[list[dict], list[dict], str]:
    items, deleted, params = [], [], {"limite": limite} | ({"desde": desde} if desde else {})
    while True:
        page = changes(client, **params)
        items += page["itens"]
        deleted += page["excluidos"]
        params["desde"] = page["proximo_cursor"]
        if not page["tem_mais"]:
            return items, deleted, page["proximo_cursor"]


def deleted_events(organization) -> list[dict]:
    events = WebhookEvent.objects.filter(organization=organization, kind=EventKind.DELETED)
    return [json.loads(body) for body in events.order_by("change_tx", "change_seq").values_list("body", flat=True)]


# --- DELETE /api/tickets/{id} ---------------------------------------------------------------------


def test_an_agent_with_the_delete_permission_deletes_a_ticket_and_partners_hear_of_it(
    manager_panel, admin, partner, organization, ticket
):
    webhook = make_webhook(organization, events=["ticket.excluido"])
    _, _, cursor = drain(partner)
    number = ticket.number

    response = manager_panel.delete(f"/api/tickets/{ticket.pk}")

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "Ticket excluído.", "data": None, "errors": []}
    assert not Ticket.objects.filter(pk=ticket.pk).exists()
    assert not Reply.objects.filter(ticket_id=ticket.pk).exists()
    tombstone = TicketTombstone.objects.get(pk=ticket.pk)
    [event] = deleted_events(organization)
    assert event["data"] == {
        "ticket": {"id": str(ticket.pk), "numero": number, "external_id": "pedido-teste"},
        "ator": {"tipo": "agente", "id": str(admin.agent.pk), "nome": admin.agent.name},
    }
    assert webhook.deliveries.get().event_id == WebhookEvent.objects.get(kind=EventKind.DELETED).pk
    items, deleted, _ = drain(partner, cursor)
    assert items == []
    assert deleted == [
        {
            "id": str(ticket.pk),
            "numero": number,
            "external_id": "pedido-teste",
            "excluido_em": tombstone.deleted_at.isoformat().replace("+00:00", "Z"),
        }
    ]
    assert_ticket_not_found(partner.get(f"/api/v1/tickets/{ticket.pk}"))


def test_a_plain_agent_may_not_delete_and_nothing_happens(agent_client, organization, ticket):
    response = agent_client.delete(f"/api/tickets/{ticket.pk}")

    assert_error(response, 403, "Acesso negado.", "permissao")
    assert Ticket.objects.filter(pk=ticket.pk).exists()
    assert not TicketTombstone.objects.exists()
    assert not WebhookEvent.objects.filter(kind=EventKind.DELETED).exists()


@pytest.mark.parametrize("which", ["other", "missing", "malformed"])
def test_another_organizations_or_a_missing_ticket_is_a_404(manager_panel, other_organization, which):
    ids = {
        "other": lambda: make_ticket(other_organization).pk,
        "missing": lambda: "6f1e8b9c-0000-4000-8000-000000000000",
        "malformed": lambda: "nao-e-um-id",
    }

    response = manager_panel.delete(f"/api/tickets/{ids[which]()}")

    assert_ticket_not_found(response)
    assert Ticket.objects.filter(organization=other_organization).count() == (1 if which == "other" else 0)
    assert not TicketTombstone.objects.exists()


# --- the change list ------------------------------------------------------------------------------


def test_deletions_come_in_the_change_list_in_order_with_the_changes(partner, organization, agent):
    first, second, third = (make_ticket(organization, subject=name) for name in ("Um", "Dois", "Três"))
    _, _, cursor = drain(partner)

    ticket_update(ticket=first, priority="alta")
    ticket_delete(ticket=second, actor=Actor.of_agent(agent))
    ticket_update(ticket=third, priority="baixa")

    pages = []
    params = {"desde": cursor, "limite": 1}
    while True:
        page = changes(partner, **params)
        pages.append(([item["assunto"] for item in page["itens"]], [gone["id"] for gone in page["excluidos"]]))
        params["desde"] = page["proximo_cursor"]
        if not page["tem_mais"]:
            break
    assert pages == [(["Um"], []), ([], [str(second.pk)]), (["Três"], [])]


def test_a_ticket_changed_after_the_newest_deletion_still_comes(partner, organization, agent):
    """On SQLite a place counts from the largest so far: the tombstone holds it once its ticket is gone."""
    kept = make_ticket(organization, subject="Fica")
    newest = make_ticket(organization, subject="Sai")
    _, _, cursor = drain(partner)

    ticket_delete(ticket=newest, actor=Actor.of_agent(agent))
    _, deleted, cursor = drain(partner, cursor)
    ticket_update(ticket=kept, priority="urgente")

    items, again, _ = drain(partner, cursor)
    assert [gone["id"] for gone in deleted] == [str(newest.pk)]
    assert ([item["assunto"] for item in items], again) == (["Fica"], [])


def test_a_first_call_from_a_timestamp_includes_what_was_deleted_after_it(partner, organization, agent):
    gone = make_ticket(organization, subject="Sai")
    make_ticket(organization, subject="Fica")
    moment = timezone.now()

    ticket_delete(ticket=gone, actor=Actor.of_agent(agent))

    _, deleted, _ = drain(partner, moment.isoformat())
    assert [item["id"] for item in deleted] == [str(gone.pk)]


def test_a_cursor_older_than_the_retention_is_a_410_on_desde(partner, organization, monkeypatch, settings):
    make_ticket(organization)
    _, _, cursor = drain(partner)
    later = signing.time.time() + timedelta(days=settings.EVENT_RETENTION_DAYS, minutes=1).total_seconds()
    monkeypatch.setattr(signing.time, "time", lambda: later)

    response = partner.get(CHANGES, {"desde": cursor})

    assert_error(response, 410, "Cursor fora da retenção.", "desde")
    assert changes(partner)["itens"]  # resync: from the start, without desde
    assert changes(partner, desde=(timezone.now() - timedelta(days=90)).isoformat())["itens"]  # or from a moment


def test_a_cursor_within_the_retention_keeps_working(partner, organization, monkeypatch, settings):
    make_ticket(organization)
    _, _, cursor = drain(partner)
    later = signing.time.time() + timedelta(days=settings.EVENT_RETENTION_DAYS, minutes=-1).total_seconds()
    monkeypatch.setattr(signing.time, "time", lambda: later)

    assert changes(partner, desde=cursor)["itens"] == []


def test_expired_tombstones_are_purged_but_each_organizations_newest(organization, other_organization, agent):
    old = [make_ticket(organization) for _ in range(3)]
    foreign = make_ticket(other_organization)
    for ticket in old:
        ticket_delete(ticket=ticket, actor=Actor.of_agent(agent))
    ticket_delete(ticket=foreign, actor=Actor.of_agent(agent))
    fresh = make_ticket(organization)
    ticket_delete(ticket=fresh, actor=Actor.of_agent(agent))
    long_ago = timezone.now() - timedelta(days=40)
    TicketTombstone.objects.exclude(pk=fresh.pk).update(deleted_at=long_ago)

    assert tombstones_purge_expired() == 3  # three of organization's old ones; not other's only (newest)
    assert set(TicketTombstone.objects.values_list("pk", flat=True)) == {fresh.pk, foreign.pk}
    assert purge_expired_tombstones() == 0


# --- the admin and the operator command -----------------------------------------------------------


def test_the_admin_deletes_one_ticket_through_the_service(client, admin, organization, ticket):
    client.force_login(admin)

    response = client.post(reverse("admin:tickets_ticket_delete", args=[ticket.pk]), {"post": "yes"})

    assert response.status_code == 302
    assert TicketTombstone.objects.filter(pk=ticket.pk).exists()
    [event] = deleted_events(organization)
    assert event["data"]["ator"]["tipo"] == "agente"


def test_the_admins_bulk_delete_deletes_each_through_the_service(client, admin, organization):
    client.force_login(admin)
    tickets = [make_ticket(organization, subject=f"Lote {n}") for n in range(3)]
    kept = make_ticket(organization, subject="Fica")

    confirmation = run_admin_action(client, TICKET_CHANGELIST, "delete_selected", tickets)
    assert "<title>Remover múltiplos objetos" in confirmation.content.decode()  # the usual confirmation first
    assert not TicketTombstone.objects.exists()
    selected = {"action": "delete_selected", "_selected_action": [str(t.pk) for t in tickets], "post": "yes"}

    response = client.post(TICKET_CHANGELIST, selected, follow=True)

    assert response.status_code == 200
    assert set(TicketTombstone.objects.values_list("pk", flat=True)) == {ticket.pk for ticket in tickets}
    numbers = sorted(event["data"]["ticket"]["numero"] for event in deleted_events(organization))
    assert numbers == [ticket.number for ticket in tickets]
    assert list(Ticket.objects.filter(organization=organization)) == [kept]


def test_the_operator_command_deletes_by_number_as_the_system(organization, capsys):
    ticket = make_ticket(organization, requester=RequesterData(name="Ana"))

    call_command("delete_ticket", "--organization", str(organization.pk), "--number", str(ticket.number), "--json")

    printed = json.loads(capsys.readouterr().out)
    tombstone = TicketTombstone.objects.get(pk=ticket.pk)
    assert printed == {
        "id": str(ticket.pk),
        "numero": ticket.number,
        "external_id": None,
        "excluido_em": tombstone.deleted_at.isoformat().replace("+00:00", "Z"),
    }
    [event] = deleted_events(organization)
    assert event["data"]["ator"] == {"tipo": "sistema"}


def test_the_operator_command_refuses_another_organizations_ticket(organization, other_organization, capsys):
    foreign = make_ticket(other_organization)

    with pytest.raises(CommandError):
        call_command("delete_ticket", "--organization", str(organization.pk), "--ticket", str(foreign.pk), "--json")

    assert json.loads(capsys.readouterr().out) == {"error": f"ticket {foreign.pk} does not exist in this organization"}
    assert Ticket.objects.filter(pk=foreign.pk).exists()
