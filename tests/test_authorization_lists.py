"""Lists, filters, searches and counts as organization B: exactly B's rows, never one of A, and `total`
counts B's rows only. A's data is seeded to match every filter too (same priority, same numbers, the
same words), so a missing organization condition anywhere shows up as an extra row or a wrong total."""

import pytest

from helpdesk.models import Agent, AuditRecord
from integrations.models import WebhookDelivery, WebhookEvent
from tests.assertions import assert_success
from tests.authorization import MANAGEMENT, PANEL, PARTNER, operations, tenant_sla_minutes
from tests.factories import credential_of, make_agent_reply, make_ticket, status_of
from tickets.models import TicketStatus
from tickets.services import RequesterData, ticket_update


def listed(response, message: str) -> tuple[list[str], int | None]:
    """The ids of a list answer and its `total` (None for the unpaginated lists)."""
    data = assert_success(response, 200, message)
    if isinstance(data, list):
        return [item["id"] for item in data], None
    assert data["ultima_pagina"] == max(1, -(-data["total"] // data["por_pagina"]))
    return [item["id"] for item in data["data"]], data["total"]


def assert_exactly(response, message: str, expected, world, *, paginated: bool = True) -> None:
    ids, total = listed(response, message)
    expected_ids = sorted(str(obj.pk) for obj in expected)
    assert sorted(ids) == expected_ids
    assert total == (len(expected_ids) if paginated else None)
    leaked = sorted(trace for trace in world.a.traces() if trace in response.content.decode())
    assert not leaked, f"organization A's data in B's list: {leaked}"


def a_and_b(world) -> tuple:
    return world.a, world.b


# (query, B's tickets it must find): each query also matches A's tickets, or names A's objects.
PARTNER_TICKET_QUERIES = {
    "all": ({}, lambda a, b: b.tickets),
    "prioridade shared with A": ({"prioridade": "urgente"}, lambda a, b: [b.ticket]),
    "prioridade of A's other tickets": ({"prioridade": "baixa"}, lambda a, b: b.tickets[1:]),
    "numero shared with A": ({"numero": 1}, lambda a, b: [b.ticket]),
    "numero only A has": ({"numero": 3}, lambda a, b: []),
    "busca of A's marker": ({"busca": "ACME-CONFIDENCIAL"}, lambda a, b: []),
    "busca of A's marker, lower case": ({"busca": "acme-confidencial"}, lambda a, b: []),
    "busca of A's requester e-mail": ({"busca": "cliente@acme.test"}, lambda a, b: []),
    "busca of A's requester name": ({"busca": "Cliente ACME"}, lambda a, b: []),
    "busca of a word both use": ({"busca": "CONFIDENCIAL"}, lambda a, b: b.tickets),
    "busca of a subject both use": ({"busca": "Impressora"}, lambda a, b: [b.ticket]),
    "busca of a number both have": ({"busca": "1"}, lambda a, b: [b.ticket]),
    "busca of a number only A has": ({"busca": "3"}, lambda a, b: []),
    "filters combined": ({"prioridade": "urgente", "busca": "Impressora", "numero": 1}, lambda a, b: [b.ticket]),
}

# The partner's lookups, status categories, time windows and orders (issue 21): A's ids and e-mail find
# nothing, the values both organizations have find B's tickets only.
PARTNER_LOOKUP_QUERIES = {
    "external_id of A": ({"external_id": lambda a, b: a.ticket.external_id}, lambda a, b: []),
    "external_id of B": ({"external_id": lambda a, b: b.ticket.external_id}, lambda a, b: [b.ticket]),
    "solicitante_external_id of A": (
        {"solicitante_external_id": lambda a, b: a.ticket.requester.external_id},
        lambda a, b: [],
    ),
    "solicitante_external_id of B": (
        {"solicitante_external_id": lambda a, b: b.ticket.requester.external_id},
        lambda a, b: [b.ticket],
    ),
    "solicitante_email of A": ({"solicitante_email": lambda a, b: a.ticket.requester.email}, lambda a, b: []),
    "solicitante_email of B": ({"solicitante_email": lambda a, b: b.ticket.requester.email}, lambda a, b: [b.ticket]),
    "status category both use": ({"status": "em_andamento"}, lambda a, b: [b.ticket]),
    "status categories both use": ({"status": ["aberto", "em_andamento"]}, lambda a, b: b.tickets),
    "atualizado_desde long ago": ({"atualizado_desde": "2000-01-01T00:00:00Z"}, lambda a, b: b.tickets),
    "criado window around everything": (
        {"criado_desde": "2000-01-01T00:00:00Z", "criado_ate": "2100-01-01T00:00:00Z"},
        lambda a, b: b.tickets,
    ),
    "ordenacao by number": ({"ordenacao": "numero"}, lambda a, b: b.tickets),
    "cursor by atualizado_em": ({"ordenacao": "atualizado_em", "cursor": ""}, lambda a, b: b.tickets),
    "lookups combined": (
        {"solicitante_email": lambda a, b: b.ticket.requester.email, "status": "em_andamento", "numero": 1},
        lambda a, b: [b.ticket],
    ),
}

# Tags (issue 22): both organizations tag their first ticket `vip`, and each its own marker.
TAG_QUERIES = {
    "tag both use": ({"tag": "vip"}, lambda a, b: [b.ticket]),
    "tag only A has": ({"tag": lambda a, b: a.marker}, lambda a, b: []),
    "tag of B": ({"tag": lambda a, b: b.marker}, lambda a, b: [b.ticket]),
    "tags of A and B": ({"tag": lambda a, b: ["vip", a.marker]}, lambda a, b: []),
}
PARTNER_LOOKUP_QUERIES |= TAG_QUERIES

PANEL_TICKET_QUERIES = {
    **PARTNER_TICKET_QUERIES,
    **TAG_QUERIES,
    "status of A": ({"status": lambda a, b: a.ticket.status_id}, lambda a, b: []),
    "status of B, the same category as A's": ({"status": lambda a, b: b.ticket.status_id}, lambda a, b: [b.ticket]),
    "atendente of A": ({"atendente": lambda a, b: a.colleague.pk}, lambda a, b: []),
    "atendente of B": ({"atendente": lambda a, b: b.colleague.pk}, lambda a, b: [b.ticket]),
    "status of A and busca": (
        {"status": lambda a, b: a.ticket.status_id, "busca": "CONFIDENCIAL"},
        lambda a, b: [],
    ),
}


def query_of(query: dict, world) -> dict:
    values = {name: value(*a_and_b(world)) if callable(value) else value for name, value in query.items()}
    return {
        "por_pagina": 100,
        **{name: value if isinstance(value, list) else str(value) for name, value in values.items()},
    }


@pytest.mark.parametrize("case", {**PARTNER_TICKET_QUERIES, **PARTNER_LOOKUP_QUERIES})
def test_partner_ticket_list_finds_only_the_callers_tickets(world, case):
    query, expected = {**PARTNER_TICKET_QUERIES, **PARTNER_LOOKUP_QUERIES}[case]

    response = world.b.client(PARTNER).get("/api/v1/tickets", query_of(query, world))

    assert_exactly(response, "Tickets listados.", expected(*a_and_b(world)), world)


@pytest.mark.parametrize("case", PANEL_TICKET_QUERIES)
def test_panel_ticket_list_finds_only_the_callers_tickets(world, case):
    query, expected = PANEL_TICKET_QUERIES[case]

    response = world.b.client(PANEL).get("/api/tickets", query_of(query, world))

    assert_exactly(response, "Tickets listados.", expected(*a_and_b(world)), world)


def test_a_page_past_the_callers_rows_is_empty_and_counts_only_them(world):
    """A has more tickets than B: a page that exists only counting A's rows must be empty."""
    response = world.b.client(PARTNER).get("/api/v1/tickets", {"por_pagina": 1, "page": 3})

    data = assert_success(response, 200, "Tickets listados.")
    assert (data["data"], data["total"], data["ultima_pagina"]) == ([], 2, 2)


def test_agent_list_has_only_the_callers_active_agents(world):
    response = world.b.client(PARTNER).get("/api/v1/atendentes")

    expected = Agent.objects.filter(organization=world.b.organization, is_active=True)
    assert {world.b.admin.agent, world.b.colleague} == set(expected)
    assert_exactly(response, "Atendentes listados.", expected, world)


def test_credential_list_has_only_the_callers_keys(world):
    response = world.b.client(PANEL).get("/api/api-keys")

    assert_exactly(response, "Credenciais listadas.", [credential_of(world.b.key)], world, paginated=False)


def test_webhook_list_has_only_the_callers_webhooks(world):
    response = world.b.client(PANEL).get("/api/webhooks")

    assert_exactly(response, "Webhooks listados.", [world.b.webhook], world, paginated=False)


def test_custom_field_list_has_only_the_callers_fields(world):
    response = world.b.client(MANAGEMENT).get("/api/campos")

    assert_exactly(response, "Campos listados.", [world.b.custom_field], world, paginated=False)


def test_business_hours_are_only_the_callers(world):
    """Each organization reads its own calendar (A's zone, holiday and marker never reach B), and B's PUT changes
    B's alone (the matrix's collection test compares A's rows too)."""
    for tenant, other in ((world.b, world.a), (world.a, world.b)):
        response = tenant.client(MANAGEMENT).get("/api/horario-atendimento")

        data = assert_success(response, 200, "Horário de atendimento encontrado.")
        assert data["fuso_horario"] == ("America/New_York" if tenant is world.a else "Asia/Tokyo")
        assert data["feriados"] == [{"data": "2026-12-25", "nome": f"Natal {tenant.marker}"}]
        assert other.marker not in response.content.decode()


def test_sla_policies_are_only_the_callers(world):
    """Each organization reads its own policies (its `alta` targets are its own numbers, never the other's), and
    B's PUT changes B's alone (the matrix's collection test compares A's rows too)."""
    for tenant, other in ((world.b, world.a), (world.a, world.b)):
        response = tenant.client(MANAGEMENT).get("/api/sla")

        data = assert_success(response, 200, "Políticas de SLA encontradas.")
        first, following, resolution = tenant_sla_minutes("acme" if tenant is world.a else "globex")
        assert data == {
            "politicas": [
                {
                    "prioridade": "alta",
                    "primeira_resposta": first,
                    "proxima_resposta": following,
                    "resolucao": resolution,
                },
                {"prioridade": None, "primeira_resposta": 1, "proxima_resposta": None, "resolucao": None},
            ]
        }
        assert str(tenant_sla_minutes("acme" if other is world.a else "globex")[2]) not in response.content.decode()


def test_a_field_filter_finds_only_the_callers_tickets_with_the_same_key(world):
    """Both organizations have a field `pedido`: each filter reads the caller's field, never the other's values."""
    for tenant, other in ((world.b, world.a), (world.a, world.b)):
        response = tenant.client(PARTNER).get("/api/v1/tickets", {"campo.pedido": f"Pedido {other.marker}"})
        assert response.json()["data"]["total"] == 0
    response = world.b.client(PARTNER).get(
        "/api/v1/tickets", {"campo.pedido": f"Pedido {world.b.marker}", "incluir": "campos"}
    )

    assert_exactly(response, "Tickets listados.", [world.b.ticket], world)


def test_delivery_list_of_the_callers_webhook_has_only_its_deliveries(world):
    response = world.b.client(PANEL).get(f"/api/webhooks/{world.b.webhook.pk}/entregas", {"por_pagina": 100})

    expected = WebhookDelivery.objects.filter(webhook=world.b.webhook)
    # the seed's status change, assignment and agent reply (the webhook wants every kind), and the test event
    assert len(expected) == 4
    assert_exactly(response, "Entregas listadas.", expected, world)


def test_status_list_has_only_the_callers_statuses(world):
    response = world.b.client(PANEL).get("/api/ticket-status")

    expected = TicketStatus.objects.filter(organization=world.b.organization)
    assert status_of(world.b.organization, "resolvido") in expected
    assert_exactly(response, "Status listados.", expected, world, paginated=False)


def test_tag_list_has_only_the_callers_tags_and_counts_only_its_tickets(world):
    response = world.b.client(PANEL).get("/api/tags")

    data = assert_success(response, 200, "Tags listadas.")
    assert data == sorted(
        [{"nome": "vip", "tickets": 1}, {"nome": world.b.marker.lower(), "tickets": 1}], key=lambda tag: tag["nome"]
    )
    assert world.a.marker.lower() not in response.content.decode()
    assert_no_trace(response, world)


def test_macro_list_has_only_the_callers_macros(world):
    response = world.b.client(PANEL).get("/api/macros")

    data = assert_success(response, 200, "Macros listadas.")
    assert [macro["id"] for macro in data] == [str(world.b.macro.pk)]
    assert data[0]["acoes"]["atendente"] == str(world.b.colleague.pk)
    assert world.a.marker not in response.content.decode()
    assert_no_trace(response, world)


def test_change_list_has_only_the_callers_tickets_whatever_the_start(world):
    """A's tickets changed after B's, and A's cursors: B sees only its own tickets, from any start."""
    a_cursor = assert_success(world.a.client(PARTNER).get("/api/v1/tickets/alteracoes"), 200, "Alterações listadas.")
    for ticket in world.a.tickets:
        ticket_update(ticket=ticket, priority="alta")
    client = world.b.client(PARTNER)

    for params in ({}, {"desde": "2000-01-01T00:00:00Z"}, {"limite": 100}):
        response = client.get("/api/v1/tickets/alteracoes", params)
        data = assert_success(response, 200, "Alterações listadas.")
        assert sorted(item["id"] for item in data["itens"]) == sorted(str(t.pk) for t in world.b.tickets)
        assert_no_trace(response, world)
    refused = client.get("/api/v1/tickets/alteracoes", {"desde": a_cursor["proximo_cursor"]})
    assert (refused.status_code, list(refused.json()["errors"])) == (422, ["desde"])


def test_event_feed_has_only_the_callers_events(world):
    """Both organizations have agent replies (and webhook test events, never in the feed)."""
    response = world.b.client(PARTNER).get("/api/v1/eventos", {"limite": 100})

    data = assert_success(response, 200, "Eventos listados.")
    expected = WebhookEvent.objects.filter(organization=world.b.organization).exclude(kind="webhook.teste")
    assert len(expected) == 3  # the seed's status change, its assignment and the agent reply
    assert sorted(item["id"] for item in data["itens"]) == sorted(str(event.pk) for event in expected)
    assert_no_trace(response, world)


def test_attachment_lists_have_only_the_callers_files(world):
    """A's ticket id is a 404 (the matrix); B's own ticket lists only B's files: the partner's without
    the note's, the panel's with it."""
    path = f"/api/v1/tickets/{world.b.ticket.pk}/anexos"
    partner = world.b.client(PARTNER).get(path)
    panel = world.b.client(PANEL).get(path.removeprefix("/api/v1").join(["/api", ""]))

    assert_exactly(partner, "Anexos listados.", [world.b.attachment], world)
    assert_exactly(panel, "Anexos listados.", [world.b.note_attachment, world.b.attachment], world)


def assert_no_trace(response, world) -> None:
    leaked = sorted(trace for trace in world.a.traces() if trace in response.content.decode())
    assert not leaked, f"organization A's data in B's list: {leaked}"


# Every list route of the API, and the test above that checks it: a new list must be added here.
def test_audit_trail_has_only_the_callers_records(world):
    response = world.b.client(PANEL).get("/api/auditoria", {"por_pagina": 100})

    expected = AuditRecord.objects.filter(organization=world.b.organization)
    assert 5 <= len(expected) <= 100
    assert_exactly(response, "Auditoria listada.", expected, world)


def test_contact_export_has_only_the_callers_data(world):
    """A has a contact with B's person's very name, e-mail and external id, with tickets and events: B's export
    of its own contact holds B's tickets and events only."""
    person = world.b.ticket.requester
    namesake = RequesterData(name=person.name, email=person.email, external_id=person.external_id)
    twin = make_ticket(world.a.organization, subject=f"Gêmeo {world.a.marker}", requester=namesake)
    make_agent_reply(twin, world.a.admin.agent, body=f"Resposta {world.a.marker}")

    response = world.b.client(PANEL).get(f"/api/contatos/{person.pk}/exportar")

    document = assert_success(response, 200, "Dados do contato exportados.")
    assert [ticket["id"] for ticket in document["tickets"]] == [str(world.b.ticket.pk)]
    assert {event["data"]["ticket"]["id"] for event in document["eventos"]} == {str(world.b.ticket.pk)}
    assert {delivery["webhook_id"] for delivery in document["entregas"]} == {str(world.b.webhook.pk)}
    traces = world.a.traces() | {str(twin.pk), str(twin.requester_id)}
    leaked = sorted(trace for trace in traces if trace in response.content.decode())
    assert not leaked, f"organization A's data in B's export: {leaked}"


# (query, B's contacts it must find): each query also matches A's contacts, or names A's values.
PARTNER_CONTACT_QUERIES = {
    "all": ({}, lambda a, b: b.organization.contacts.all()),
    "external_id of A's requester": ({"external_id": lambda a, b: a.ticket.requester.external_id}, lambda a, b: []),
    "email of A's requester": ({"email": lambda a, b: a.ticket.requester.email}, lambda a, b: []),
    "busca of A's marker": ({"busca": lambda a, b: a.marker.lower()}, lambda a, b: []),
    "busca of A's requester e-mail": ({"busca": lambda a, b: a.ticket.requester.email}, lambda a, b: []),
    "busca of a word both use": ({"busca": "CONFIDENCIAL"}, lambda a, b: b.organization.contacts.all()),
    "busca of a name both use": ({"busca": "Cliente"}, lambda a, b: [b.ticket.requester]),
    "external_id both have": (
        {"external_id": lambda a, b: b.ticket.requester.external_id},
        lambda a, b: [b.ticket.requester],
    ),
}


@pytest.mark.parametrize("case", PARTNER_CONTACT_QUERIES)
def test_partner_contact_list_finds_only_the_callers_contacts(world, case):
    query, expected = PARTNER_CONTACT_QUERIES[case]
    # A holds a namesake of B's requester too: same name, e-mail and external id.
    person = world.b.ticket.requester
    make_ticket(
        world.a.organization,
        subject=f"Gêmeo {world.a.marker}",
        requester=RequesterData(name=person.name, email=person.email, external_id=person.external_id),
    )

    response = world.b.client(PARTNER).get("/api/v1/contatos", query_of(query, world))

    assert_exactly(response, "Contatos listados.", expected(*a_and_b(world)), world)


@pytest.mark.parametrize("case", PARTNER_TICKET_QUERIES)
def test_a_contacts_tickets_are_only_the_callers_tickets_of_that_contact(world, case):
    query, expected = PARTNER_TICKET_QUERIES[case]
    person = world.b.ticket.requester

    response = world.b.client(PARTNER).get(f"/api/v1/contatos/{person.pk}/tickets", query_of(query, world))

    mine = [ticket for ticket in expected(*a_and_b(world)) if ticket.requester_id == person.pk]
    assert_exactly(response, "Tickets listados.", mine, world)


LIST_TESTS = {
    "/api/v1/tickets": test_partner_ticket_list_finds_only_the_callers_tickets,
    "/api/v1/tickets/alteracoes": test_change_list_has_only_the_callers_tickets_whatever_the_start,
    "/api/v1/atendentes": test_agent_list_has_only_the_callers_active_agents,
    "/api/v1/eventos": test_event_feed_has_only_the_callers_events,
    "/api/api-keys": test_credential_list_has_only_the_callers_keys,
    "/api/webhooks": test_webhook_list_has_only_the_callers_webhooks,
    "/api/campos": test_custom_field_list_has_only_the_callers_fields,
    "/api/horario-atendimento": test_business_hours_are_only_the_callers,
    "/api/sla": test_sla_policies_are_only_the_callers,
    "/api/webhooks/{id}/entregas": test_delivery_list_of_the_callers_webhook_has_only_its_deliveries,
    "/api/tickets": test_panel_ticket_list_finds_only_the_callers_tickets,
    "/api/ticket-status": test_status_list_has_only_the_callers_statuses,
    "/api/tags": test_tag_list_has_only_the_callers_tags_and_counts_only_its_tickets,
    "/api/macros": test_macro_list_has_only_the_callers_macros,
    "/api/v1/tickets/{id}/anexos": test_attachment_lists_have_only_the_callers_files,
    "/api/tickets/{id}/anexos": test_attachment_lists_have_only_the_callers_files,
    "/api/auditoria": test_audit_trail_has_only_the_callers_records,
    "/api/contatos/{id}/exportar": test_contact_export_has_only_the_callers_data,
    "/api/v1/contatos": test_partner_contact_list_finds_only_the_callers_contacts,
    "/api/v1/contatos/{id}/tickets": test_a_contacts_tickets_are_only_the_callers_tickets_of_that_contact,
}


def test_every_collection_route_has_its_list_test():
    collections = {op.route for op in operations() if op.method == "GET" and not op.route.endswith("}")}

    assert collections == set(LIST_TESTS), "add the list test of each new collection route to LIST_TESTS"
