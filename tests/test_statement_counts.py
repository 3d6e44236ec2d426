"""SQL statements per request on the hot paths, transaction control included (docs/performance.md).

Tests run inside a transaction, so the request's own transaction shows up as a
SAVEPOINT and a RELEASE: they stand for its BEGIN and COMMIT and are counted.
A warm-up request first, so the once-a-minute `ultimo_uso_em` write and the
per-organization cache of the default status are not what is measured.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from helpdesk.actors import SYSTEM
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket, status_of
from tickets.fields.services import custom_field_create
from tickets.models import Ticket
from tickets.services import RequesterData, ticket_fields_set, ticket_update

TICKETS = "/api/v1/tickets"

# A write's audit record is one INSERT in its transaction (helpdesk.audit): create 7 + 1, reply 6 + 1.
# The customer's resolve and reopen (issue 21): key, ticket (locked), destination status, UPDATE, audit
# INSERT, replies, and the transaction's two; reopen's destination, the default `aberto`, is cached (one less).
BUDGET = {
    "create": 8,
    "list": 4,
    "read_one": 4,
    "agents": 3,
    "customer_reply": 7,
    "resolve": 8,
    "reopen": 7,
    "resolve_or_reopen_unchanged": 5,
    # Issue 22: key, ticket (locked), UPDATE, the changed fields' value rows (DELETE, INSERT), audit INSERT, and
    # the transaction's two; the organization's fields come from their cache.
    "fields_patch": 8,
    # PATCH .../tags (issue 22): key, ticket (locked), UPDATE, audit INSERT, and the transaction's two.
    "tags": 6,
    "tags_unchanged": 4,
}


def define_fields(organization) -> None:
    """A field of each kind the list's filters read differently: a list, a multilist, a number, a date."""
    for key, field_type, options in (
        ("loja", "lista", ["sul", "norte"]),
        ("itens", "multilista", ["a", "b"]),
        ("valor", "numero", None),
        ("entrega", "data", None),
    ):
        custom_field_create(organization=organization, key=key, name=key, field_type=field_type, options=options)


FIELD_VALUES = {"loja": "sul", "itens": ["a", "b"], "valor": 10, "entrega": "2026-01-31"}


pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def statements(call) -> list[str]:
    call()
    with CaptureQueriesContext(connection) as captured:
        response = call()
    assert response.status_code < 300, response.content
    return [query["sql"] for query in captured.captured_queries]


def busy_tickets(organization, agent, count: int) -> None:
    for n in range(count):
        ticket = make_ticket(organization, subject=f"Ticket {n}")
        make_customer_reply(ticket, body="Cliente")
        make_agent_reply(ticket, agent, body="Atendente")
        make_agent_reply(ticket, agent, body="Nota", internal=True)


def _create(partner, n: int, query: str = ""):
    body = {"assunto": "Novo", "descricao": "x", "external_id": f"pedido-{n}"}
    body["solicitante"] = {"nome": "Cliente", "external_id": f"cliente-{n}"}
    return partner.post(TICKETS + query, body, format="json")


@pytest.mark.parametrize(
    ("ticket_external_id", "requester", "budget"),
    [
        pytest.param(True, lambda n: {"nome": "Novo", "external_id": f"cliente-{n}"}, 8, id="new-requester"),
        pytest.param(True, lambda n: {"nome": "Cliente", "external_id": "sempre-o-mesmo"}, 8, id="known-requester"),
        pytest.param(True, lambda n: {"nome": "Anônimo"}, 8, id="requester-without-ids"),
        pytest.param(False, lambda n: {"nome": "Por e-mail", "email": f"c{n}@example.test"}, 8, id="by-email"),
        # The one path past 8: the lock-free look for the ticket's external_id, then the
        # requester's e-mail looked up under the sequence lock (so two requests never make two contacts).
        pytest.param(True, lambda n: {"nome": "Por e-mail", "email": f"c{n}@example.test"}, 9, id="both-lookups"),
    ],
)
def test_create_runs_at_most_8_statements(partner, organization, ticket_external_id, requester, budget):
    counter = iter(range(1_000))

    def create():
        n = next(counter)
        body = {"assunto": "Novo", "descricao": "x", "solicitante": requester(n)}
        if ticket_external_id:
            body["external_id"] = f"pedido-{n}"
        return partner.post(TICKETS, body, format="json")

    sql = statements(create)

    assert len(sql) <= budget <= BUDGET["create"] + 1, "\n".join(sql)


def test_create_with_an_existing_external_id_writes_nothing(partner, organization):
    sql = statements(lambda: _create(partner, 1))

    assert not [statement for statement in sql if statement.lstrip().upper().startswith(("INSERT", "UPDATE"))]
    assert len(sql) <= BUDGET["create"], "\n".join(sql)


@pytest.mark.parametrize("per_page", [1, 25, 100])
def test_list_runs_at_most_4_statements_whatever_the_page_size(partner, organization, agent, per_page):
    busy_tickets(organization, agent, 30)

    sql = statements(lambda: partner.get(TICKETS, {"por_pagina": per_page}))

    assert len(sql) <= BUDGET["list"], "\n".join(sql)


def test_search_runs_at_most_4_statements(partner, organization, agent):
    busy_tickets(organization, agent, 10)

    sql = statements(lambda: partner.get(TICKETS, {"busca": "ticket 1", "prioridade": "media"}))

    assert len(sql) <= BUDGET["list"], "\n".join(sql)


def test_read_one_runs_at_most_4_statements(partner, organization, agent):
    busy_tickets(organization, agent, 1)
    ticket = organization.tickets.get()

    sql = statements(lambda: partner.get(f"{TICKETS}/{ticket.pk}"))

    assert len(sql) <= BUDGET["read_one"], "\n".join(sql)


def test_agents_run_at_most_3_statements(partner, organization):
    for n in range(12):
        make_agent(organization, name=f"Atendente {n}")

    sql = statements(lambda: partner.get("/api/v1/atendentes"))

    assert len(sql) <= BUDGET["agents"], "\n".join(sql)


def test_a_customer_reply_reads_its_ticket_once_under_the_lock(partner, organization):
    ticket = make_ticket(organization)

    sql = statements(lambda: partner.post(f"{TICKETS}/{ticket.pk}/respostas", {"mensagem": "Oi"}, format="json"))

    assert len(sql) <= BUDGET["customer_reply"], "\n".join(sql)
    assert sum(statement.lstrip().upper().startswith("SELECT") for statement in sql) == 2  # key, ticket (locked)


@pytest.mark.parametrize(
    ("action", "back", "budget", "reads"),
    [
        ("resolver", "aberto", "resolve", ["key", "ticket (locked)", "resolvido status", "replies"]),
        ("reabrir", "resolvido", "reopen", ["key", "ticket (locked)", "replies"]),
    ],
)
@pytest.mark.parametrize("incluir", ["", "?incluir=atendente,contato"])
def test_resolve_and_reopen_read_the_ticket_once_under_the_lock(
    partner, organization, agent, action, back, budget, reads, incluir
):
    busy_tickets(organization, agent, 1)
    ticket = organization.tickets.get()
    assert partner.post(f"{TICKETS}/{ticket.pk}/{action}").status_code == 200  # warm-up
    # Put back (by the system) so the measured request moves it again.
    ticket_update(ticket=Ticket.objects.get(pk=ticket.pk), status=status_of(organization, back))

    with CaptureQueriesContext(connection) as captured:
        response = partner.post(f"{TICKETS}/{ticket.pk}/{action}{incluir}")

    sql = [query["sql"] for query in captured.captured_queries]
    assert response.status_code == 200, response.content
    assert len(sql) <= BUDGET[budget], "\n".join(sql)
    writes = [statement for statement in sql if statement.lstrip().upper().startswith(("INSERT", "UPDATE"))]
    assert len(writes) == 2, "\n".join(writes)  # the ticket, its audit record
    assert sum(statement.lstrip().upper().startswith("SELECT") for statement in sql) == len(reads)


@pytest.mark.parametrize("action", ["resolver", "reabrir"])
def test_resolve_and_reopen_that_change_nothing_write_nothing(partner, organization, agent, action):
    busy_tickets(organization, agent, 1)
    ticket = organization.tickets.get()
    ticket_update(ticket=ticket, status=status_of(organization, {"resolver": "resolvido", "reabrir": "aberto"}[action]))

    sql = statements(lambda: partner.post(f"{TICKETS}/{ticket.pk}/{action}"))

    assert len(sql) <= BUDGET["resolve_or_reopen_unchanged"], "\n".join(sql)
    assert not [statement for statement in sql if statement.lstrip().upper().startswith(("INSERT", "UPDATE"))]


# Each matches the ticket made last (so every list below reads a page and its replies): issue 21's lookups,
# filters and orders, alone, in cursor mode and all together.
FILTERED_LISTS = {
    "external_id": {"external_id": "pedido-9"},
    "solicitante_external_id": {"solicitante_external_id": "cliente-9"},
    "solicitante_email": {"solicitante_email": "Cliente9@Example.test"},
    "status": {"status": ["aberto", "aguardando"]},
    "status and prioridade (the counters)": {"status": "aberto", "prioridade": "media"},
    "atualizado_desde": {"atualizado_desde": "2000-01-01T00:00:00Z"},
    "criado_desde and criado_ate": {"criado_desde": "2000-01-01T00:00:00Z", "criado_ate": "2100-01-01T00:00:00-03:00"},
    "ordenacao": {"ordenacao": "atualizado_em"},
    "cursor in another order": {"ordenacao": "-numero", "cursor": ""},
    "campo (issue 22)": {"campo.loja": "sul"},
    "campo of a multilista and ranges": {
        "campo.itens": "b",
        "campo.valor__de": "5",
        "campo.valor__ate": "10.0",
        "campo.entrega__de": "2026-01-01",
    },
    "tag (issue 22)": {"tag": "n9"},
    "tags, all of them": {"tag": ["todos", "N9"]},
    "tag and the counters' filters": {"tag": "todos", "prioridade": "media", "status": "aberto"},
    "all of them": {
        "campo.loja": "sul",
        "campo.valor__ate": "99",
        "external_id": "pedido-9",
        "solicitante_external_id": "cliente-9",
        "solicitante_email": "cliente9@example.test",
        "status": ["aberto", "resolvido"],
        "atualizado_desde": "2000-01-01T00:00:00Z",
        "criado_desde": "2000-01-01T00:00:00Z",
        "criado_ate": "2100-01-01T00:00:00Z",
        "prioridade": "media",
        "busca": "ticket",
        "ordenacao": "numero",
        "cursor": "",
        "tag": "n9",
    },
}


@pytest.mark.parametrize("case", FILTERED_LISTS)
def test_the_list_runs_as_many_statements_whatever_the_filters(partner, organization, agent, case):
    for n in range(10):
        ticket = make_ticket(
            organization,
            subject=f"Ticket {n}",
            external_id=f"pedido-{n}",
            requester=RequesterData(name=f"Cliente {n}", email=f"cliente{n}@example.test", external_id=f"cliente-{n}"),
            tags=["todos", f"n{n}"],
        )
        make_customer_reply(ticket, body="Cliente")
        make_agent_reply(ticket, agent, body="Atendente")
    define_fields(organization)
    ticket_fields_set(ticket=ticket, values=FIELD_VALUES, actor=SYSTEM)  # the last one
    plain = statements(lambda: partner.get(TICKETS))

    sql = statements(lambda: partner.get(TICKETS, FILTERED_LISTS[case]))

    assert partner.get(TICKETS, FILTERED_LISTS[case]).json()["data"]["data"], "the filters must match a ticket"
    assert len(sql) == len(plain) <= BUDGET["list"], "\n".join(sql)


# --- `incluir` blocks (issue 21): extra columns of the same statements, never a statement more ---------------

BLOCK_COMBINATIONS = [
    "atendente",
    "contato",
    "atendente,contato",
    "contato,atendente,contato",
    "tags",
    "tags,atendente",
    "campos,atendente",
    "campos,tags,contato,atendente",
    "sla",
    "metricas,sla",
    "metricas,campos,sla,tags,contato,atendente",
    "avaliacao",
    "avaliacao,metricas,campos,sla,tags,contato,atendente",
    "mesclagem",
    "mesclagem,avaliacao,metricas,campos,sla,tags,contato,atendente",
]


@pytest.fixture
def assigned_and_not(organization, agent):
    """30 busy tickets, every other one assigned, every third with custom fields, and the events of their agents'
    replies and field changes."""
    busy_tickets(organization, agent, 30)
    define_fields(organization)
    for ticket in organization.tickets.order_by("number")[::2]:
        ticket_update(ticket=ticket, assignee=agent)
    for ticket in organization.tickets.order_by("number")[::3]:
        ticket_fields_set(ticket=ticket, values=FIELD_VALUES, actor=SYSTEM)


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
@pytest.mark.parametrize("per_page", [1, 100])
def test_the_list_runs_the_same_statements_with_any_blocks(partner, assigned_and_not, incluir, per_page):
    plain = statements(lambda: partner.get(TICKETS, {"por_pagina": per_page}))
    with_blocks = statements(lambda: partner.get(TICKETS, {"por_pagina": per_page, "incluir": incluir}))

    assert len(with_blocks) == len(plain) <= BUDGET["list"], "\n".join(with_blocks)


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
def test_a_read_and_the_change_list_run_the_same_statements_with_any_blocks(
    partner, organization, assigned_and_not, incluir
):
    ticket = organization.tickets.filter(assignee__isnull=False).first()
    for path in (f"{TICKETS}/{ticket.pk}", f"{TICKETS}/alteracoes"):
        plain = statements(lambda path=path: partner.get(path))
        with_blocks = statements(lambda path=path: partner.get(path, {"incluir": incluir}))
        assert len(with_blocks) == len(plain), "\n".join(with_blocks)
    assert len(with_blocks) == 3  # the change list: key, page, replies


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
def test_the_event_feed_runs_the_same_statements_with_any_blocks(partner, assigned_and_not, incluir):
    plain = statements(lambda: partner.get("/api/v1/eventos"))
    with_blocks = statements(lambda: partner.get("/api/v1/eventos", {"incluir": incluir}))

    assert len(with_blocks) == len(plain) == 2, "\n".join(with_blocks)  # key, page


@pytest.mark.parametrize("incluir", BLOCK_COMBINATIONS)
def test_a_create_runs_the_same_statements_with_any_blocks(partner, organization, incluir):
    counter = iter(range(1_000))

    def create(params=""):
        return _create(partner, next(counter), params)

    plain = statements(create)
    with_blocks = statements(lambda: create(f"?incluir={incluir}"))
    existing = statements(lambda: _create(partner, 0, f"?incluir={incluir}"))

    assert len(with_blocks) == len(plain) <= BUDGET["create"], "\n".join(with_blocks)
    assert len(existing) <= BUDGET["create"], "\n".join(existing)


def test_a_create_with_custom_fields_runs_one_statement_more_whatever_their_number(partner, organization):
    """The values' rows are one INSERT (one row per value, one per option of a multilista); the fields are cached."""
    define_fields(organization)
    counter = iter(range(1_000))

    def create(campos=None):
        body = {"assunto": "Novo", "descricao": "x", "solicitante": {"nome": "Cliente"}}
        return partner.post(TICKETS + "?incluir=campos", {**body, "campos": campos or {}}, format="json")

    plain = statements(create)
    one = statements(lambda: create({"loja": "sul"}))
    every = statements(lambda: create(FIELD_VALUES))

    assert len(one) == len(every) == len(plain) + 1 <= BUDGET["create"] + 1, "\n".join(every)
    assert next(counter) == 0


def test_a_fields_patch_reads_the_ticket_once_and_writes_what_changed(partner, organization):
    define_fields(organization)
    ticket = make_ticket(organization)
    values = iter([{"loja": "sul", "valor": n} for n in range(1, 10)])

    sql = statements(lambda: partner.patch(f"{TICKETS}/{ticket.pk}/campos", next(values), format="json"))
    unchanged = statements(lambda: partner.patch(f"{TICKETS}/{ticket.pk}/campos", {"loja": "sul"}, format="json"))

    assert len(sql) <= BUDGET["fields_patch"], "\n".join(sql)
    assert sum(statement.lstrip().upper().startswith("SELECT") for statement in sql) == 2  # key, ticket (locked)
    assert not [statement for statement in unchanged if statement.lstrip().upper().startswith(("INSERT", "UPDATE"))]


# --- tags (issue 22) -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("incluir", ["", "?incluir=tags"])
def test_a_create_with_five_tags_runs_the_statements_of_one_without(partner, organization, incluir):
    counter = iter(range(1_000))

    def create(tags):
        body = {"assunto": "Novo", "descricao": "x", "external_id": f"pedido-{next(counter)}"}
        body["solicitante"] = {"nome": "Cliente", "external_id": "sempre-o-mesmo"}
        return partner.post(TICKETS + incluir, {**body, **tags}, format="json")

    plain = statements(lambda: create({}))
    tagged = statements(lambda: create({"tags": ["a", "b", "c", "d", "e"]}))

    assert len(tagged) == len(plain) <= BUDGET["create"], "\n".join(tagged)


def test_a_tags_change_reads_the_ticket_once_under_the_lock(partner, organization, agent):
    busy_tickets(organization, agent, 1)
    ticket = organization.tickets.get()
    flip = iter(range(1_000))

    def change():
        n = next(flip)
        return partner.patch(
            f"{TICKETS}/{ticket.pk}/tags", {"adicionar": [f"t{n}"], "remover": [f"t{n - 1}"]}, format="json"
        )

    sql = statements(change)

    assert len(sql) <= BUDGET["tags"], "\n".join(sql)
    writes = [statement for statement in sql if statement.lstrip().upper().startswith(("INSERT", "UPDATE"))]
    assert len(writes) == 2, "\n".join(writes)  # the ticket, its audit record
    assert sum(statement.lstrip().upper().startswith("SELECT") for statement in sql) == 2  # key, ticket locked


def test_a_tags_change_that_changes_nothing_writes_nothing(partner, organization, agent):
    busy_tickets(organization, agent, 1)
    ticket = organization.tickets.get()

    sql = statements(lambda: partner.patch(f"{TICKETS}/{ticket.pk}/tags", {"remover": ["nenhuma"]}, format="json"))

    assert len(sql) <= BUDGET["tags_unchanged"], "\n".join(sql)
    assert not [statement for statement in sql if statement.lstrip().upper().startswith(("INSERT", "UPDATE"))]
