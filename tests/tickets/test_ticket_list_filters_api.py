"""GET /api/v1/tickets, issue 21: lookups by the partner's ids and the requester's e-mail, status categories,
time windows and orders; each combines with the others by AND, a bad value is a 422 on its field, and
cursor mode walks every order."""

from datetime import UTC, datetime, timedelta

import pytest

from helpdesk.actors import Actor
from tests.assertions import assert_exact_validation_error, assert_success, bearer_client
from tests.factories import make_key, make_ticket, status_of
from tickets.models import Ticket
from tickets.services import RequesterData, status_create, ticket_delete, ticket_update

URL = "/api/v1/tickets"
BAD_INSTANT = "Informe data e hora ISO 8601 com fuso (por exemplo, 2026-12-31T23:59:00Z)."
pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def listed(client, **params) -> dict:
    return assert_success(client.get(URL, params), 200, "Tickets listados.")


def numbers_of(client, **params) -> list[int]:
    return [item["numero"] for item in listed(client, por_pagina=100, **params)["data"]]


def too_long(limit: int) -> str:
    return f"Certifique-se de que este campo não tenha mais de {limit} caracteres."


def not_a_choice(value: str) -> str:
    return f'"{value}" não é uma escolha válida.'


def requester(name: str, *, email: str = "", external_id: str | None = None) -> RequesterData:
    return RequesterData(name=name, email=email, external_id=external_id)


def at(minutes: int) -> datetime:
    return datetime(2020, 3, 1, 12, 0, tzinfo=UTC) + timedelta(minutes=minutes)


def stamp(ticket: Ticket, *, created: int | None = None, updated: int | None = None) -> None:
    """Put a ticket at known instants (minutes after 2020-03-01T12:00Z), as an import or an old change would."""
    values = {}
    if created is not None:
        values["created_at"] = at(created)
    if updated is not None:
        values["updated_at"] = at(updated)
    Ticket.objects.filter(pk=ticket.pk).update(**values)


# --- external_id ---------------------------------------------------------------------------------


def test_external_id_longer_than_255_is_a_422(partner, organization):
    assert_exact_validation_error(partner.get(URL, {"external_id": "x" * 256}), {"external_id": [too_long(255)]})
    assert listed(partner, external_id="x" * 255)["total"] == 0


# --- solicitante_external_id ---------------------------------------------------------------------


def test_solicitante_external_id_lists_that_customers_tickets(partner, organization, other_organization):
    customer = requester("Maria", email="maria@example.test", external_id="cliente-42")
    first = make_ticket(organization, requester=customer)
    make_ticket(organization, requester=requester("Outra", external_id="cliente-420"))
    second = make_ticket(organization, requester=customer)
    by_email = make_ticket(organization, requester=requester("Sem id", email="maria@example.test"))  # her contact
    make_ticket(other_organization, requester=customer)

    found = listed(partner, solicitante_external_id="cliente-42")

    assert [item["numero"] for item in found["data"]] == [by_email.number, second.number, first.number]
    assert found["total"] == 3
    assert {item["solicitante"]["external_id"] for item in found["data"]} == {"cliente-42"}
    assert listed(partner, solicitante_external_id="CLIENTE-42")["total"] == 0  # exact, as the partner's ids are
    assert listed(partner, solicitante_external_id="cliente-4")["total"] == 0


def test_solicitante_external_id_longer_than_255_is_a_422(partner, organization):
    response = partner.get(URL, {"solicitante_external_id": "x" * 256})

    assert_exact_validation_error(response, {"solicitante_external_id": [too_long(255)]})


def test_an_unknown_solicitante_external_id_is_an_empty_list(partner, organization):
    make_ticket(organization)

    assert listed(partner, solicitante_external_id="ninguem") == {
        "data": [],
        "total": 0,
        "por_pagina": 15,
        "pagina_atual": 1,
        "ultima_pagina": 1,
    }


# --- solicitante_email ---------------------------------------------------------------------------


def test_solicitante_email_is_a_case_insensitive_exact_match(partner, organization, other_organization):
    with_id = make_ticket(organization, requester=requester("Maria", email="Maria@Example.test", external_id="m-1"))
    without_id = make_ticket(organization, requester=requester("Maria", email="maria@example.test"))
    make_ticket(organization, requester=requester("Mariana", email="mariana@example.test"))
    make_ticket(organization, requester=requester("Outra", email="maria@example.test.br"))
    make_ticket(other_organization, requester=requester("Maria", email="maria@example.test"))

    found = listed(partner, solicitante_email="MARIA@example.TEST")

    assert [item["id"] for item in found["data"]] == [str(without_id.pk), str(with_id.pk)]
    assert found["total"] == 2
    assert listed(partner, solicitante_email=" maria@example.test ")["total"] == 2
    assert listed(partner, solicitante_email="aria@example.test")["total"] == 0


@pytest.mark.parametrize(
    "email", ["maria", "maria@", "@example.test", "maria example.test", "maria@exa\u0000mple.test"]
)
def test_solicitante_email_that_is_not_an_email_is_a_422(partner, organization, email):
    response = partner.get(URL, {"solicitante_email": email})

    assert_exact_validation_error(response, {"solicitante_email": ["Informe um endereço de e-mail válido."]})


def test_solicitante_email_longer_than_254_is_a_422(partner, organization):
    response = partner.get(URL, {"solicitante_email": "a" * 243 + "@example.test"})

    assert_exact_validation_error(response, {"solicitante_email": [too_long(254)]})


@pytest.mark.parametrize("email", ['"maria..silva"@example.test', '"a\\b"@[192.0.2.1]', "maria@localhost"])
def test_any_address_an_email_may_have_is_looked_up(partner, organization, email):
    assert listed(partner, solicitante_email=email)["total"] == 0


# --- status --------------------------------------------------------------------------------------


@pytest.fixture
def by_category(organization):
    """Two tickets in each category but `fechado` (one), the `em_andamento` ones in two statuses of it."""
    tickets = {}
    for category in ("aberto", "em_andamento", "aguardando", "resolvido", "fechado"):
        tickets[category] = [make_ticket(organization) for _ in range(1 if category == "fechado" else 2)]
        for ticket in tickets[category]:
            if category != "aberto":
                ticket_update(ticket=ticket, status=status_of(organization, category))
    reviewing = status_create(
        organization_id=organization.pk, name="Em análise", category="em_andamento", color="#000000"
    )
    ticket_update(ticket=tickets["em_andamento"][1], status=reviewing)
    return {category: sorted((t.number for t in found), reverse=True) for category, found in tickets.items()}


def test_status_is_a_category_whatever_the_status_is_called(partner, by_category):
    found = listed(partner, status="em_andamento")

    assert [item["numero"] for item in found["data"]] == by_category["em_andamento"]
    assert [item["status"]["nome"] for item in found["data"]] == ["Em análise", "Em andamento"]
    assert found["total"] == 2
    assert numbers_of(partner, status="fechado") == by_category["fechado"]


def test_status_may_repeat_and_takes_any_of_them(partner, by_category):
    found = listed(partner, status=["aguardando", "resolvido", "aguardando"])

    assert [item["numero"] for item in found["data"]] == sorted(
        by_category["aguardando"] + by_category["resolvido"], reverse=True
    )
    assert found["total"] == 4


def test_a_category_without_tickets_lists_none_also_in_cursor_mode(partner, organization):
    make_ticket(organization)

    assert listed(partner, status="fechado")["total"] == 0
    walked = listed(partner, status="fechado", cursor="")
    assert (walked["data"], walked["total"], walked["proximo_cursor"]) == ([], 0, None)


def test_an_empty_status_counts_as_absent(partner, by_category):
    assert listed(partner, status="")["total"] == 9


@pytest.mark.parametrize(
    ("values", "unknown"),
    [
        (["encerrado"], ["encerrado"]),
        (["aberto", "Fechado", "x"], ["Fechado", "x"]),
        (["aberto\u0000"], ["aberto\u0000"]),
        (["em andamento"], ["em andamento"]),
    ],
)
def test_an_unknown_status_category_is_a_422_on_status(partner, organization, values, unknown):
    response = partner.get(URL, {"status": values})

    assert_exact_validation_error(response, {"status": [not_a_choice(value) for value in unknown]})


def test_a_status_id_is_not_a_category(partner, organization):
    status_id = str(status_of(organization, "aberto").pk)

    assert_exact_validation_error(partner.get(URL, {"status": status_id}), {"status": [not_a_choice(status_id)]})


# --- atualizado_desde, criado_desde, criado_ate --------------------------------------------------


@pytest.fixture
def timeline(organization):
    """Five tickets created a minute apart (minutes 0..4); ticket 2 updated at minute 30, the others as created."""
    tickets = [make_ticket(organization) for _ in range(5)]
    for minute, ticket in enumerate(tickets):
        stamp(ticket, created=minute, updated=30 if minute == 2 else minute)
    return [ticket.number for ticket in tickets]


def test_atualizado_desde_lists_what_changed_at_or_after_the_instant(partner, timeline):
    assert numbers_of(partner, atualizado_desde="2020-03-01T12:03:00Z") == [timeline[4], timeline[3], timeline[2]]
    assert numbers_of(partner, atualizado_desde="2020-03-01T12:05:00Z") == [timeline[2]]
    assert numbers_of(partner, atualizado_desde="2020-03-01T09:03:00-03:00") == numbers_of(
        partner, atualizado_desde="2020-03-01T12:03:00Z"
    )
    assert numbers_of(partner, atualizado_desde="2020-03-01T12:30:00.000001Z") == []


def test_criado_desde_and_criado_ate_keep_the_tickets_created_within_both_ends_included(partner, timeline):
    window = {"criado_desde": "2020-03-01T12:01:00Z", "criado_ate": "2020-03-01T12:03:00Z"}

    assert numbers_of(partner, **window) == [timeline[3], timeline[2], timeline[1]]
    assert numbers_of(partner, criado_desde="2020-03-01T12:04:00Z") == [timeline[4]]
    assert numbers_of(partner, criado_ate="2020-03-01T12:00:59.999999Z") == [timeline[0]]
    inverted = {"criado_desde": "2020-03-01T12:03:00Z", "criado_ate": "2020-03-01T12:01:00Z"}
    assert listed(partner, **inverted)["total"] == 0


@pytest.mark.parametrize("field", ["atualizado_desde", "criado_desde", "criado_ate"])
@pytest.mark.parametrize(
    "value",
    [
        "2020-03-01T12:00:00",  # no offset: which instant?
        "2020-03-01",
        "ontem",
        "2026-13-01T12:00:00Z",
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
    ],
)
def test_a_time_that_is_not_an_instant_with_its_offset_is_a_422_on_its_field(partner, organization, field, value):
    assert_exact_validation_error(partner.get(URL, {field: value}), {field: [BAD_INSTANT]})


@pytest.mark.parametrize("field", ["atualizado_desde", "criado_desde", "criado_ate"])
def test_a_time_with_a_nul_character_is_a_422_on_its_field(partner, organization, field):
    response = partner.get(URL, {field: "2020-03-01T12:00:00Z\u0000"})  # Python's parser would take it

    assert_exact_validation_error(response, {field: ["Caracteres nulos não são permitidos."]})


def test_an_empty_time_counts_as_absent(partner, timeline):
    assert listed(partner, atualizado_desde="", criado_desde="", criado_ate="")["total"] == 5


# --- ordenacao -----------------------------------------------------------------------------------


@pytest.fixture
def shuffled(organization):
    """Four tickets whose creation, change and number orders all differ (number 3 imported as the oldest)."""
    tickets = [make_ticket(organization) for _ in range(4)]
    for ticket, created, updated in zip(tickets, [1, 2, 0, 3], [9, 5, 7, 6], strict=True):
        stamp(ticket, created=created, updated=updated)
    return tickets


@pytest.mark.parametrize(
    ("ordenacao", "expected"),
    [
        ("-criado_em", [4, 2, 1, 3]),
        ("criado_em", [3, 1, 2, 4]),
        ("-atualizado_em", [1, 3, 4, 2]),
        ("atualizado_em", [2, 4, 3, 1]),
        ("numero", [1, 2, 3, 4]),
        ("-numero", [4, 3, 2, 1]),
    ],
)
def test_ordenacao_orders_the_list(partner, shuffled, ordenacao, expected):
    assert numbers_of(partner, ordenacao=ordenacao) == expected


def test_ties_in_time_are_broken_by_the_number(partner, organization):
    tickets = [make_ticket(organization) for _ in range(3)]
    for ticket in tickets:
        stamp(ticket, created=0, updated=0)

    assert numbers_of(partner, ordenacao="criado_em") == [1, 2, 3]
    assert numbers_of(partner, ordenacao="-atualizado_em") == [3, 2, 1]
    assert numbers_of(partner, ordenacao="atualizado_em") == [1, 2, 3]


def test_the_default_order_answers_byte_for_byte_as_without_ordenacao(partner, shuffled):
    assert partner.get(URL, {"ordenacao": "-criado_em"}).content == partner.get(URL).content
    assert partner.get(URL, {"ordenacao": ""}).content == partner.get(URL).content


@pytest.mark.parametrize("value", ["criado", "+criado_em", "-CRIADO_EM", "prioridade", "numero,-criado_em", "-"])
def test_an_unknown_ordenacao_is_a_422(partner, organization, value):
    assert_exact_validation_error(partner.get(URL, {"ordenacao": value}), {"ordenacao": [not_a_choice(value)]})


def test_ordered_pages_split_the_order(partner, shuffled):
    pages = [listed(partner, ordenacao="atualizado_em", por_pagina=3, page=page) for page in (1, 2)]

    assert [[item["numero"] for item in page["data"]] for page in pages] == [[2, 4, 3], [1]]
    assert {page["total"] for page in pages} == {4}


# --- everything by AND ---------------------------------------------------------------------------


def test_every_filter_combines_with_the_others_by_and(partner, organization):
    maria = requester("Maria", email="maria@example.test", external_id="cli-maria")
    wanted = make_ticket(organization, requester=maria, priority="alta", external_id="pedido-1", subject="Boleto")
    others = [
        make_ticket(organization, requester=maria, priority="baixa", subject="Boleto"),
        make_ticket(organization, requester=requester("João", email="joao@example.test"), priority="alta"),
        make_ticket(organization, requester=maria, priority="alta", subject="Boleto"),
    ]
    for ticket in (wanted, *others):
        ticket_update(ticket=ticket, status=status_of(organization, "aguardando"))
    ticket_update(ticket=others[2], status=status_of(organization, "resolvido"))
    for minute, ticket in enumerate([wanted, *others]):
        stamp(ticket, created=minute, updated=minute)
    everything = {
        "external_id": "pedido-1",
        "solicitante_external_id": "cli-maria",
        "solicitante_email": "MARIA@example.test",
        "status": ["aguardando", "fechado"],
        "atualizado_desde": "2020-03-01T12:00:00Z",
        "criado_desde": "2020-03-01T12:00:00Z",
        "criado_ate": "2020-03-01T12:00:00Z",
        "prioridade": "alta",
        "busca": "boleto",
        "numero": wanted.number,
        "ordenacao": "numero",
    }

    assert numbers_of(partner, **everything) == [wanted.number]
    assert listed(partner, **everything)["total"] == 1
    narrowed = {
        "external_id": "pedido-2",
        "solicitante_external_id": "cli-joao",
        "solicitante_email": "joao@example.test",
        "status": "resolvido",
        "atualizado_desde": "2020-03-01T12:00:01Z",
        "criado_desde": "2020-03-01T12:00:01Z",
        "criado_ate": "2020-03-01T11:59:59Z",
        "prioridade": "baixa",
    }
    for name, value in narrowed.items():
        assert listed(partner, **{**everything, name: value})["total"] == 0, name
    counted = {"status": "aguardando", "prioridade": "alta"}  # the counters answer these two: a sum, not a count
    assert numbers_of(partner, **counted) == [others[1].number, wanted.number]
    assert listed(partner, **counted)["total"] == 2


def test_another_organizations_tickets_never_show_under_any_filter(partner, organization, other_organization):
    ours = make_ticket(organization, requester=requester("Ana", email="ana@example.test", external_id="c-1"))
    theirs = make_ticket(
        other_organization, requester=requester("Ana", email="ana@example.test", external_id="c-1"), external_id="p-1"
    )
    ticket_update(ticket=theirs, status=status_of(other_organization, "fechado"))
    queries = [
        {"external_id": "p-1"},
        {"status": "fechado"},
        {"atualizado_desde": "2000-01-01T00:00:00Z"},
        {"criado_desde": "2000-01-01T00:00:00Z", "criado_ate": "2100-01-01T00:00:00Z"},
        {"solicitante_external_id": "c-1"},
        {"solicitante_email": "ana@example.test"},
        {"ordenacao": "numero"},
        {"ordenacao": "atualizado_em", "cursor": ""},
    ]

    for query in queries:
        response = partner.get(URL, query)
        data = assert_success(response, 200, "Tickets listados.")
        assert str(theirs.pk) not in response.content.decode(), query
        assert [item["id"] for item in data["data"]] in ([], [str(ours.pk)]), query
        assert data["total"] == len(data["data"]), query


# --- cursor mode in every order ------------------------------------------------------------------


def walk(client, per_page: int, between=None, **params) -> tuple[list[int], list[dict]]:
    numbers, pages, cursor = [], [], ""
    while cursor is not None:
        page = listed(client, por_pagina=per_page, cursor=cursor, **params)
        pages.append(page)
        numbers += [item["numero"] for item in page["data"]]
        cursor = page["proximo_cursor"]
        if between:
            between()
    return numbers, pages


@pytest.mark.parametrize(
    "ordenacao", ["-criado_em", "criado_em", "-atualizado_em", "atualizado_em", "numero", "-numero"]
)
def test_the_cursor_walks_each_order_once_as_the_pages_read_it(partner, organization, ordenacao):
    tickets = [make_ticket(organization) for _ in range(9)]
    for n, ticket in enumerate(tickets):
        stamp(ticket, created=[3, 1, 4, 1, 5, 9, 2, 6, 5][n], updated=[2, 7, 1, 8, 2, 8, 1, 8, 2][n])  # ties too

    walked, pages = walk(partner, 2, ordenacao=ordenacao)

    assert walked == numbers_of(partner, ordenacao=ordenacao)
    assert sorted(walked) == list(range(1, 10))
    assert [page["pagina_atual"] for page in pages] == [1, 2, 3, 4, 5]
    assert pages[-1]["proximo_cursor"] is None


def test_a_filtered_walk_in_another_order_keeps_its_filters(partner, by_category):
    walked, _ = walk(partner, 1, status=["aberto", "fechado"], ordenacao="numero")

    assert walked == sorted(by_category["aberto"] + by_category["fechado"])


def test_walking_by_atualizado_em_a_ticket_changed_meanwhile_comes_again_at_the_end(partner, organization):
    tickets = [make_ticket(organization) for _ in range(4)]
    for minute, ticket in enumerate(tickets):
        stamp(ticket, created=minute, updated=minute)
    first = listed(partner, por_pagina=2, cursor="", ordenacao="atualizado_em")
    ticket_update(ticket=Ticket.objects.get(pk=tickets[0].pk), priority="urgente")  # read already: it moves last

    rest = listed(partner, por_pagina=3, cursor=first["proximo_cursor"], ordenacao="atualizado_em")

    assert [item["numero"] for item in first["data"]] == [1, 2]
    assert [item["numero"] for item in rest["data"]] == [3, 4, 1]
    assert rest["data"][-1]["prioridade"] == "urgente"


def test_deleted_tickets_never_break_a_walk(partner, organization, agent):
    tickets = [make_ticket(organization) for _ in range(6)]
    first = listed(partner, por_pagina=2, cursor="", ordenacao="numero")
    for ticket in tickets[1:3]:  # the last one read, and the next one
        ticket_delete(ticket=ticket, actor=Actor.of_agent(agent))

    rest, _ = walk(partner, 10, ordenacao="numero")
    after = listed(partner, por_pagina=10, cursor=first["proximo_cursor"], ordenacao="numero")

    assert rest == [1, 4, 5, 6]
    assert [item["numero"] for item in after["data"]] == [4, 5, 6]


@pytest.mark.parametrize(
    ("made_with", "used_with"),
    [
        ({}, {"ordenacao": "numero"}),
        ({"ordenacao": "numero"}, {}),
        ({"ordenacao": "numero"}, {"ordenacao": "-numero"}),
        ({"ordenacao": "atualizado_em"}, {"ordenacao": "-criado_em"}),
    ],
)
def test_a_cursor_made_for_another_ordenacao_is_a_422_on_cursor(partner, organization, made_with, used_with):
    for _ in range(3):
        make_ticket(organization)
    cursor = listed(partner, por_pagina=1, cursor="", **made_with)["proximo_cursor"]

    response = partner.get(URL, {"cursor": cursor, **used_with})

    assert_exact_validation_error(
        response,
        {
            "cursor": [
                "Este proximo_cursor é de outra ordenacao: use a mesma ordenacao em todas as páginas, ou deixe o "
                "cursor vazio para começar do início."
            ]
        },
    )


def test_another_organizations_cursor_in_another_order_does_not_load(partner, organization, other_organization):
    for _ in range(3):
        make_ticket(other_organization)
    other = bearer_client(make_key(other_organization))
    cursor = listed(other, por_pagina=1, cursor="", ordenacao="atualizado_em")["proximo_cursor"]

    response = partner.get(URL, {"cursor": cursor, "ordenacao": "atualizado_em"})

    assert_exact_validation_error(
        response,
        {
            "cursor": [
                "Informe o proximo_cursor de uma resposta anterior, ou deixe vazio para começar do início da lista."
            ]
        },
    )


# --- the same list inside a contact (its own endpoint passes the requester) ------------------------


def test_a_contacts_list_takes_the_same_query_within_its_tickets(organization):
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from tickets.api.pages import ticket_list_payload
    from tickets.api.serializers import TicketListQuery
    from tickets.payloads import TICKET_COLUMNS, tickets_public

    maria = requester("Maria", external_id="cli-maria")
    mine = [make_ticket(organization, requester=maria) for _ in range(3)]
    make_ticket(organization)
    ticket_update(ticket=mine[1], status=status_of(organization, "resolvido"))

    def page(**params) -> dict:
        request = Request(APIRequestFactory().get(URL, params))
        query = TicketListQuery.from_request(request, organization)
        return ticket_list_payload(
            query, organization, columns=TICKET_COLUMNS, build=tickets_public, requester_id=mine[0].requester_id
        )

    assert [item["numero"] for item in page()["data"]] == [mine[2].number, mine[1].number, mine[0].number]
    first = page(status="aberto", ordenacao="numero", por_pagina=1, cursor="")
    second = page(status="aberto", ordenacao="numero", por_pagina=1, cursor=first["proximo_cursor"])
    assert [item["numero"] for item in first["data"] + second["data"]] == [mine[0].number, mine[2].number]
    assert (first["total"], second["proximo_cursor"]) == (2, None)
