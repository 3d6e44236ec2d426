"""GET /api/v1/tickets/alteracoes: the organization's tickets changed after a cursor or a timestamp,
oldest change first, each exactly as GET /api/v1/tickets/{id} shows it.

What never skipping a change under concurrent writers takes is proven on PostgreSQL in
tests/test_change_feeds_postgres.py.
"""

import base64
import re
import struct
import time
from datetime import timedelta

import pytest
import schemathesis
from django.core import signing
from django.db import connection
from django.test import Client
from django.utils import timezone

from helpdesk.services import agent_update
from tests.assertions import assert_error, assert_success, assert_validation_error, queries_of, utc
from tests.factories import make_agent, make_agent_reply, make_busy_ticket, make_customer_reply, make_ticket, status_of
from tests.test_openapi_conformance import assert_conforms
from tickets.models import Ticket, TicketStatus
from tickets.services import RequesterData, reply_edit_as_agent, reply_edit_as_customer, status_update, ticket_update

CHANGES = "/api/v1/tickets/alteracoes"
BAD_DESDE = (
    "Informe o proximo_cursor de uma resposta anterior ou uma data e hora ISO 8601 com fuso horário "
    "(por exemplo, 2025-01-31T12:00:00Z)."
)

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def changes(client, **params) -> dict:
    return assert_success(client.get(CHANGES, params), 200, "Alterações listadas.")


def detail(client, ticket) -> dict:
    return assert_success(client.get(f"/api/v1/tickets/{ticket.pk}"), 200, "Ticket encontrado.")


def drain(client, desde=None, limite=100) -> tuple[list[dict], str]:
    """Follow proximo_cursor until tem_mais is false: every item seen, in order, and the cursor to keep."""
    seen, params = [], {"limite": limite} | ({"desde": desde} if desde else {})
    while True:
        page = changes(client, **params)
        seen += page["itens"]
        params["desde"] = page["proximo_cursor"]
        if not page["tem_mais"]:
            return seen, page["proximo_cursor"]


def subjects(items) -> list[str]:
    return [item["assunto"] for item in items]


# --- what it answers -----------------------------------------------------------------------------


def test_the_first_call_answers_every_ticket_oldest_change_first_as_the_detail_shows_it(partner, organization, agent):
    first = make_ticket(organization, subject="Primeiro")
    second = make_ticket(organization, subject="Segundo")
    make_customer_reply(first, body="Alguma novidade?")
    make_agent_reply(first, agent, body="Sai hoje.")
    make_agent_reply(first, agent, body="Nota", internal=True)

    response = partner.get(CHANGES)

    data = assert_success(response, 200, "Alterações listadas.")
    assert response.json() == {
        "success": True,
        "message": "Alterações listadas.",
        "data": {
            "itens": [detail(partner, second), detail(partner, first)],
            "excluidos": [],
            "proximo_cursor": data["proximo_cursor"],
            "tem_mais": False,
        },
        "errors": [],
    }
    assert [reply["mensagem"] for reply in data["itens"][1]["respostas"]] == ["Alguma novidade?", "Sai hoje."]
    assert isinstance(data["proximo_cursor"], str) and data["proximo_cursor"]


def test_following_the_cursor_pages_through_every_change_once_then_waits_for_the_next(partner, organization):
    for n in range(5):
        make_ticket(organization, subject=f"Ticket {n}")

    pages = []
    page = changes(partner, limite=2)
    pages.append((subjects(page["itens"]), page["tem_mais"]))
    while page["tem_mais"]:
        page = changes(partner, limite=2, desde=page["proximo_cursor"])
        pages.append((subjects(page["itens"]), page["tem_mais"]))
    idle = changes(partner, desde=page["proximo_cursor"])
    later = make_ticket(organization, subject="Depois")
    after = changes(partner, desde=idle["proximo_cursor"])

    assert pages == [(["Ticket 0", "Ticket 1"], True), (["Ticket 2", "Ticket 3"], True), (["Ticket 4"], False)]
    assert (idle["itens"], idle["tem_mais"]) == ([], False)
    assert (after["itens"], after["tem_mais"]) == ([detail(partner, later)], False)


def test_a_ticket_changed_again_comes_again_and_its_last_version_is_the_current_one(partner, organization):
    ticket = make_ticket(organization, subject="Vai mudar")
    make_ticket(organization, subject="Fica")
    seen, cursor = drain(partner)
    ticket_update(ticket=ticket, priority="urgente")

    again, _ = drain(partner, cursor)

    assert subjects(seen) == ["Vai mudar", "Fica"]
    assert again == [detail(partner, ticket)]
    assert again[0]["prioridade"] == "urgente"


def test_without_desde_or_with_an_empty_one_every_ticket_comes(partner, organization):
    make_ticket(organization, subject="Um")

    assert subjects(changes(partner, desde="")["itens"]) == ["Um"]
    assert subjects(changes(partner, desde="", limite="")["itens"]) == ["Um"]


# --- what counts as a change ---------------------------------------------------------------------


def _public_reply(ticket, agent):
    make_agent_reply(ticket, agent, body="Resposta pública")


def _agent_edit(ticket, agent):
    reply_edit_as_agent(reply=ticket.agent_reply, agent=agent, body="Resposta corrigida")


def _customer_reply(ticket, agent):
    make_customer_reply(ticket, body="Do cliente")


def _customer_edit(ticket, agent):
    reply_edit_as_customer(reply=ticket.customer_reply, body="Do cliente, corrigido")


def _status(ticket, agent):
    ticket_update(ticket=ticket, status=status_of(ticket.organization, "em_andamento"))


def _priority(ticket, agent):
    ticket_update(ticket=ticket, priority="baixa")


def _resolution(ticket, agent):
    ticket_update(ticket=ticket, status=status_of(ticket.organization, "resolvido"))


VISIBLE_CHANGES = {
    "agent public reply": _public_reply,
    "agent edits a public reply": _agent_edit,
    "customer reply": _customer_reply,
    "customer edits a reply": _customer_edit,
    "status": _status,
    "priority": _priority,
    "resolution": _resolution,
}


@pytest.mark.parametrize("change", VISIBLE_CHANGES)
def test_a_change_the_partner_sees_moves_the_ticket_and_its_atualizado_em(partner, organization, agent, change):
    ticket = make_ticket(organization, subject="Mudado")
    ticket.customer_reply = make_customer_reply(ticket, body="Do cliente")
    ticket.agent_reply = make_agent_reply(ticket, agent, body="Do atendente")
    make_ticket(organization, subject="Outro")
    before = detail(partner, ticket)
    _, cursor = drain(partner)

    VISIBLE_CHANGES[change](ticket, agent)

    seen, _ = drain(partner, cursor)
    after = detail(partner, ticket)
    assert seen == [after]
    assert after != before
    assert utc(after["atualizado_em"]) > utc(before["atualizado_em"])


def test_an_internal_note_or_its_edit_neither_shows_up_nor_moves_atualizado_em(partner, organization, agent):
    ticket = make_ticket(organization)
    before = detail(partner, ticket)
    updated_at = Ticket.objects.get(pk=ticket.pk).updated_at
    _, cursor = drain(partner)

    note = make_agent_reply(ticket, agent, body="NOTA-INTERNA: não conceder desconto", internal=True)
    reply_edit_as_agent(reply=note, agent=agent, body="NOTA-INTERNA: desconto negado")

    seen, _ = drain(partner, cursor)
    assert seen == []
    assert detail(partner, ticket) == before
    assert Ticket.objects.get(pk=ticket.pk).updated_at == updated_at
    assert "NOTA-INTERNA" not in partner.get(CHANGES).content.decode()


def test_an_assignee_change_moves_the_ticket_and_the_atendente_block_shows_it(partner, organization, agent):
    # Before issue 21 tickets showed no assignee and an assignee change moved nothing; `incluir=atendente` shows it.
    ticket = make_ticket(organization)
    make_ticket(organization, subject="Outro")
    before = detail(partner, ticket)
    _, cursor = drain(partner)

    ticket_update(ticket=ticket, assignee=agent)
    assigned = assert_success(
        partner.get(CHANGES, {"desde": cursor, "incluir": "atendente"}), 200, "Alterações listadas."
    )
    ticket_update(ticket=Ticket.objects.get(pk=ticket.pk), unassign=True)
    seen, _ = drain(partner, cursor)

    assert [item["atendente"] for item in assigned["itens"]] == [{"id": str(agent.pk), "nome": agent.name}]
    assert seen == [detail(partner, ticket)]
    assert {key: value for key, value in seen[0].items() if key != "atualizado_em"} == {
        key: value for key, value in before.items() if key != "atualizado_em"
    }
    assert utc(seen[0]["atualizado_em"]) > utc(before["atualizado_em"])


def test_an_assignee_change_with_a_status_change_moves_the_ticket(partner, organization, agent):
    ticket = make_ticket(organization)
    _, cursor = drain(partner)

    ticket_update(ticket=ticket, assignee=agent, status=status_of(organization, "em_andamento"))

    assert drain(partner, cursor)[0] == [detail(partner, ticket)]
    assert Ticket.objects.get(pk=ticket.pk).assignee == agent


def test_a_customer_edit_with_the_same_text_of_an_edited_reply_changes_nothing(partner, organization):
    ticket = make_ticket(organization)
    reply = reply_edit_as_customer(reply=make_customer_reply(ticket, body="Oi"), body="Olá")
    before = detail(partner, ticket)
    _, cursor = drain(partner)

    response = partner.patch(f"/api/v1/tickets/{ticket.pk}/respostas/{reply.pk}", {"mensagem": "Olá"}, format="json")

    assert response.status_code == 200
    assert drain(partner, cursor)[0] == []
    assert detail(partner, ticket) == before


def test_a_renamed_status_moves_the_tickets_that_show_it(partner, organization):
    waiting = status_of(organization, "aguardando")
    shown = ticket_update(ticket=make_ticket(organization, subject="Aguardando"), status=waiting)
    make_ticket(organization, subject="Aberto")
    _, cursor = drain(partner)

    waiting = TicketStatus.objects.get(pk=waiting.pk)
    status_update(status=waiting, name=waiting.name, category=waiting.category, color="#000000", position=2)
    unchanged = TicketStatus.objects.get(pk=waiting.pk)
    # not shown to the partner
    status_update(status=unchanged, name=unchanged.name, category=unchanged.category, color="#000000", position=7)

    seen, _ = drain(partner, cursor)
    assert seen == [detail(partner, shown)]
    assert seen[0]["status"]["cor"] == "#000000"


def test_a_renamed_agent_moves_the_tickets_with_its_public_replies_or_assigned_to_it_only(partner, organization, agent):
    replied = make_ticket(organization, subject="Respondido")
    make_agent_reply(replied, agent, body="Olá")
    noted = make_ticket(organization, subject="Só nota")
    make_agent_reply(noted, agent, body="Nota", internal=True)
    assigned = ticket_update(ticket=make_ticket(organization, subject="Atribuído"), assignee=agent)
    _, cursor = drain(partner)

    agent_update(agent=agent, name="Beatriz Souza")
    agent_update(agent=agent, name="Beatriz Souza")  # the same name again: nothing changes

    seen, _ = drain(partner, cursor)
    assert sorted(item["id"] for item in seen) == sorted([str(replied.pk), str(assigned.pk)])
    assert [item for item in seen if item["id"] == str(replied.pk)] == [detail(partner, replied)]
    assert detail(partner, replied)["respostas"][0]["autor"]["nome"] == "Beatriz Souza"
    shown = partner.get(f"/api/v1/tickets/{assigned.pk}", {"incluir": "atendente"}).json()["data"]["atendente"]
    assert shown == {"id": str(agent.pk), "nome": "Beatriz Souza"}


def test_a_requester_whose_blank_e_mail_is_filled_moves_its_other_tickets(partner, organization):
    requester = RequesterData(name="Maria", external_id="cli-maria")
    earlier = make_ticket(organization, subject="Antes", requester=requester)
    _, cursor = drain(partner)

    created = partner.post(
        "/api/v1/tickets",
        {
            "assunto": "Depois",
            "descricao": "x",
            "solicitante": {"nome": "Maria", "email": "maria@example.test", "external_id": "cli-maria"},
        },
        format="json",
    )

    assert created.status_code == 201
    seen, _ = drain(partner, cursor)
    assert subjects(seen) == ["Antes", "Depois"]
    assert seen[0] == detail(partner, earlier)
    assert seen[0]["solicitante"]["email"] == "maria@example.test"


def test_a_requester_with_nothing_to_fill_moves_no_other_ticket(partner, organization):
    requester = RequesterData(name="Maria", email="maria@example.test", external_id="cli-maria")
    make_ticket(organization, subject="Antes", requester=requester)
    _, cursor = drain(partner)

    make_ticket(organization, subject="Depois", requester=requester)

    assert subjects(drain(partner, cursor)[0]) == ["Depois"]


# --- starting from a timestamp -------------------------------------------------------------------


def assert_starts_at(seen: list[dict], changed_after: list[str], changed_before: set[str]) -> None:
    """Every ticket changed at or after the moment comes, in order. Before them, tickets changed
    before it may come too on PostgreSQL, where a start never passes a transaction still running
    (in these tests the test's own); never on SQLite, where nothing runs beside the reader."""
    names = subjects(seen)
    extras = names[: len(names) - len(changed_after)]
    assert names[len(extras) :] == changed_after
    assert set(extras) <= changed_before
    if connection.vendor == "sqlite":
        assert extras == []


def test_a_timestamp_starts_at_the_first_change_at_or_after_it(partner, organization):
    make_ticket(organization, subject="Antes")
    later = make_ticket(organization, subject="Depois")
    moment = Ticket.objects.get(pk=later.pk).updated_at

    seen, _ = drain(partner, moment.isoformat().replace("+00:00", "Z"))

    assert_starts_at(seen, ["Depois"], {"Antes"})


def test_a_timestamp_with_an_offset_means_the_same_instant(partner, organization):
    make_ticket(organization, subject="Antes")
    later = make_ticket(organization, subject="Depois")
    moment = Ticket.objects.get(pk=later.pk).updated_at.astimezone(timezone.get_fixed_timezone(-180))

    assert_starts_at(drain(partner, moment.isoformat())[0], ["Depois"], {"Antes"})


def test_a_ticket_changed_after_the_timestamp_comes_even_if_created_before(partner, organization):
    old = make_ticket(organization, subject="Antigo")
    make_ticket(organization, subject="Novo")
    moment = timezone.now()
    ticket_update(ticket=old, priority="alta")

    assert_starts_at(drain(partner, moment.isoformat())[0], ["Antigo"], {"Novo"})


def test_a_timestamp_after_every_change_answers_only_what_comes_next(partner, organization):
    make_ticket(organization, subject="Antes")

    seen, cursor = drain(partner, (timezone.now() + timedelta(seconds=1)).isoformat())
    make_ticket(organization, subject="Depois")
    after, _ = drain(partner, cursor)

    assert_starts_at(seen + after, ["Depois"], {"Antes"})


def test_a_timestamp_on_an_organization_without_tickets_then_its_first_ticket(partner, organization):
    page = changes(partner, desde="2020-01-01T00:00:00Z")
    make_ticket(organization, subject="Primeiro")

    assert (page["itens"], page["tem_mais"]) == ([], False)
    assert subjects(changes(partner, desde=page["proximo_cursor"])["itens"]) == ["Primeiro"]


# --- what it refuses -----------------------------------------------------------------------------


@pytest.mark.parametrize("limite", ["0", "101", "-1", "abc", "1.5"])
def test_limite_outside_1_to_100_is_a_422_on_limite(partner, organization, limite):
    assert_validation_error(partner.get(CHANGES, {"limite": limite}), "limite")


@pytest.mark.parametrize(
    "desde",
    [
        "ontem",
        "2025-13-01T00:00:00Z",  # no such month
        "2025-01-31T12:00:00",  # no time zone: which instant?
        "2025-01-31",
        "WzAsMl0:1xVEUo:NJUEd1CUeJMtw9vfo6krdN8jKZ4fHhgOrdh5nkxznB0",  # signed with another key
    ],
)
def test_a_desde_that_is_neither_a_cursor_nor_an_instant_is_a_422_on_desde(partner, organization, desde):
    response = partner.get(CHANGES, {"desde": desde})

    assert response.status_code == 422
    assert response.json() == {"success": False, "message": "Erro de validação", "errors": {"desde": [BAD_DESDE]}}


def test_a_tampered_cursor_is_a_422_on_desde(partner, organization):
    make_ticket(organization)
    cursor = changes(partner, limite=1)["proximo_cursor"]
    value, _, signature = cursor.partition(":")
    forged = [
        ("WzAsMF0" if value != "WzAsMF0" else "WzEsMF0") + ":" + signature,  # another position, same signature
        cursor[:-1] + ("A" if cursor[-1] != "A" else "B"),  # another signature
        cursor[:40] + ("A" if cursor[40] != "A" else "B") + cursor[41:],  # a byte of the middle
        cursor + "x",
        cursor + "=",
    ]

    for desde in forged:
        response = partner.get(CHANGES, {"desde": desde})
        assert response.json() == {"success": False, "message": "Erro de validação", "errors": {"desde": [BAD_DESDE]}}


def test_the_cursor_does_not_reveal_the_feeds_position(partner, organization):
    """On PostgreSQL the position is a transaction id and a value of a sequence every organization
    shares: a readable one would tell a partner how much the whole service writes."""
    ticket = make_ticket(organization)
    Ticket.objects.filter(pk=ticket.pk).update(change_seq=987_654_321_987)

    cursor = changes(partner)["proximo_cursor"]

    assert "987654321987" not in cursor
    for part in re.split(r"[:.]", cursor):
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        assert b"987654321987" not in decoded
        assert struct.pack(">q", 987_654_321_987) not in decoded
    assert changes(partner, desde=cursor)["itens"] == []  # and it still works


def test_a_cursor_signed_by_the_previous_release_still_works(partner, organization):
    first = make_ticket(organization, subject="Primeiro")
    make_ticket(organization, subject="Segundo")
    first.refresh_from_db()
    signed = signing.dumps([first.change_tx, first.change_seq], salt=f"tickets.alteracoes:{organization.pk}")

    page = changes(partner, desde=signed)

    assert subjects(page["itens"]) == ["Segundo"]
    assert changes(partner, desde=page["proximo_cursor"])["itens"] == []


def test_a_cursor_signed_by_the_previous_release_expires_with_the_retention(
    partner, organization, monkeypatch, settings
):
    signed = signing.dumps([0, 0], salt=f"tickets.alteracoes:{organization.pk}")
    later = time.time() + timedelta(days=settings.EVENT_RETENTION_DAYS, minutes=1).total_seconds()
    monkeypatch.setattr(time, "time", lambda: later)

    assert_error(partner.get(CHANGES, {"desde": signed}), 410, "Cursor fora da retenção.", "desde")


def test_another_organizations_cursor_is_a_422_on_desde(partner, other_partner, organization, other_organization):
    make_ticket(other_organization)
    theirs = changes(other_partner)["proximo_cursor"]

    response = partner.get(CHANGES, {"desde": theirs})

    assert response.json() == {"success": False, "message": "Erro de validação", "errors": {"desde": [BAD_DESDE]}}


def test_the_route_is_not_taken_for_a_ticket_id(partner, organization):
    assert partner.get(CHANGES).status_code == 200
    assert partner.get(CHANGES + "/").json()["errors"]["field"] == "path"
    assert partner.get("/api/v1/tickets/alteracao").json()["message"] == "Ticket não encontrado."


# --- tenancy and cost ----------------------------------------------------------------------------


def test_only_the_callers_tickets_come_whatever_the_start(partner, other_partner, organization, other_organization):
    mine = make_ticket(organization, subject="Meu")
    make_ticket(other_organization, subject="Deles")
    make_customer_reply(Ticket.objects.get(organization=other_organization), body="Deles de novo")

    assert changes(partner)["itens"] == [detail(partner, mine)]
    assert subjects(changes(partner, desde="2020-01-01T00:00:00Z")["itens"]) == ["Meu"]
    assert "Deles" not in partner.get(CHANGES).content.decode()


@pytest.mark.parametrize("start", ["cursor", "timestamp"])
def test_the_same_statements_for_1_and_100_tickets(partner, organization, agent, start):
    def params(limite):
        if start == "timestamp":
            return {"limite": limite, "desde": "2020-01-01T00:00:00Z"}
        return {"limite": limite, "desde": changes(partner, limite=1, desde="2020-01-01T00:00:00Z")["proximo_cursor"]}

    make_busy_ticket(organization, [agent], 0)
    make_busy_ticket(organization, [agent], 1)
    one_queries, one_page = queries_of(partner, CHANGES, params(1))
    for n in range(2, 102):
        make_busy_ticket(organization, [agent], n)

    hundred_queries, hundred_page = queries_of(partner, CHANGES, params(100))

    assert len(one_page["itens"]) == 1
    assert len(hundred_page["itens"]) == 100
    assert all(len(item["respostas"]) == 3 for item in hundred_page["itens"])
    assert len(hundred_queries) == len(one_queries), "\n".join(hundred_queries)
    # The key, the start (a timestamp only), the page, the replies of the page.
    assert len(hundred_queries) == (4 if start == "timestamp" else 3), "\n".join(hundred_queries)


def test_the_answer_conforms_to_the_published_schema(partner, organization, agent):
    ticket = make_ticket(organization, requester=RequesterData(name="Ana"))
    make_agent_reply(ticket, make_agent(organization, name="Outra"), body="Olá")
    documented = schemathesis.openapi.from_dict(Client().get("/api/schema/?format=json").json())

    assert_conforms(documented, "GET", CHANGES, partner.get(CHANGES, {"limite": 1}))
    assert_conforms(documented, "GET", CHANGES, partner.get(CHANGES, {"limite": 0}))
