"""GET /api/v1/tickets: pagination, order, filters, validation of the query."""

import pytest

from tests.assertions import assert_validation_error, numbers
from tests.contract import TICKET_FIELDS
from tests.factories import make_agent_reply, make_customer_reply, make_searchable_ticket

URL = "/api/v1/tickets"


# --- Envelope and pagination ----------------------------------------------


def test_list_returns_the_paginated_envelope(partner, organization):
    created = make_searchable_ticket(organization, subject="Impressora", email="maria@example.com")

    response = partner.get(URL)

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "success": True,
        "message": "Tickets listados.",
        "data": {
            "data": body["data"]["data"],
            "total": 1,
            "por_pagina": 15,
            "pagina_atual": 1,
            "ultima_pagina": 1,
        },
        "errors": [],
    }
    [item] = body["data"]["data"]
    assert set(item) == TICKET_FIELDS
    assert item["id"] == str(created.pk)
    assert item["numero"] == 1
    assert item["assunto"] == "Impressora"
    assert item["status"] == {"nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"}
    assert item["solicitante"] == {
        "nome": "Cliente",
        "email": "maria@example.com",
        "telefone": None,
        "external_id": None,
    }
    assert item["criado_em"].endswith("Z")
    assert item["respostas"] == []


def test_list_is_empty_with_last_page_1(partner, organization):
    response = partner.get(URL)

    assert response.json()["data"] == {"data": [], "total": 0, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1}


def test_default_page_size_is_15(partner, organization):
    for _ in range(16):
        make_searchable_ticket(organization)

    first = partner.get(URL)
    second = partner.get(URL, {"page": 2})

    assert first.json()["data"]["por_pagina"] == 15
    assert first.json()["data"]["total"] == 16
    assert first.json()["data"]["ultima_pagina"] == 2
    assert numbers(first) == list(range(16, 1, -1))
    assert second.json()["data"]["pagina_atual"] == 2
    assert numbers(second) == [1]


def test_por_pagina_sets_the_page_size(partner, organization):
    for _ in range(5):
        make_searchable_ticket(organization)

    response = partner.get(URL, {"por_pagina": 2, "page": 2})

    assert response.json()["data"] == {
        "data": response.json()["data"]["data"],
        "total": 5,
        "por_pagina": 2,
        "pagina_atual": 2,
        "ultima_pagina": 3,
    }
    assert numbers(response) == [3, 2]


@pytest.mark.parametrize("per_page", [1, 100])
def test_por_pagina_limits_are_accepted(partner, organization, per_page):
    make_searchable_ticket(organization)

    response = partner.get(URL, {"por_pagina": per_page})

    assert response.status_code == 200
    assert response.json()["data"]["por_pagina"] == per_page


def test_page_past_the_end_is_empty(partner, organization):
    make_searchable_ticket(organization)
    make_searchable_ticket(organization)

    response = partner.get(URL, {"page": 5})

    assert response.status_code == 200
    assert response.json()["data"] == {"data": [], "total": 2, "por_pagina": 15, "pagina_atual": 5, "ultima_pagina": 1}


def test_list_is_newest_first(partner, organization):
    first = make_searchable_ticket(organization)
    second = make_searchable_ticket(organization)
    third = make_searchable_ticket(organization)

    response = partner.get(URL)

    assert [item["id"] for item in response.json()["data"]["data"]] == [str(third.pk), str(second.pk), str(first.pk)]


def test_list_shows_only_the_callers_organization(partner, organization, other_organization):
    ours = make_searchable_ticket(organization)
    make_searchable_ticket(other_organization)

    response = partner.get(URL)

    assert [item["id"] for item in response.json()["data"]["data"]] == [str(ours.pk)]
    assert response.json()["data"]["total"] == 1


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        pytest.param({"por_pagina": 0}, {"por_pagina"}, id="por_pagina-0"),
        pytest.param({"por_pagina": 101}, {"por_pagina"}, id="por_pagina-101"),
        pytest.param({"por_pagina": -1}, {"por_pagina"}, id="por_pagina-negative"),
        pytest.param({"por_pagina": "abc"}, {"por_pagina"}, id="por_pagina-abc"),
        pytest.param({"page": 0}, {"page"}, id="page-0"),
        pytest.param({"page": "abc"}, {"page"}, id="page-abc"),
        pytest.param({"prioridade": "x"}, {"prioridade"}, id="prioridade-x"),
        pytest.param({"numero": "abc"}, {"numero"}, id="numero-abc"),
        pytest.param({"numero": 0}, {"numero"}, id="numero-0"),
        pytest.param(
            {"por_pagina": 0, "page": "abc", "prioridade": "x"}, {"por_pagina", "page", "prioridade"}, id="all"
        ),
    ],
)
def test_invalid_query_is_422_naming_the_field(partner, organization, query, fields):
    make_searchable_ticket(organization)

    response = partner.get(URL, query)

    assert_validation_error(response, fields)


# --- Filters --------------------------------------------------------------


def test_filter_by_priority(partner, organization):
    make_searchable_ticket(organization, priority="baixa")
    urgent = make_searchable_ticket(organization, priority="urgente")

    response = partner.get(URL, {"prioridade": "urgente"})

    assert [item["id"] for item in response.json()["data"]["data"]] == [str(urgent.pk)]
    assert response.json()["data"]["total"] == 1


def test_filter_by_number(partner, organization, other_organization):
    make_searchable_ticket(organization)
    second = make_searchable_ticket(organization)
    make_searchable_ticket(other_organization)
    make_searchable_ticket(other_organization)

    response = partner.get(URL, {"numero": 2})

    assert [item["id"] for item in response.json()["data"]["data"]] == [str(second.pk)]


def test_filter_by_unknown_number_is_empty(partner, organization):
    make_searchable_ticket(organization)

    response = partner.get(URL, {"numero": 99})

    assert response.status_code == 200
    assert response.json()["data"] == {"data": [], "total": 0, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1}


@pytest.mark.parametrize(
    ("busca", "field_values"),
    [
        pytest.param("IMPRESSORA", {"subject": "Impressora quebrada"}, id="assunto"),
        pytest.param("toner", {"description": "Acabou o TONER da sala 3"}, id="descricao"),
        pytest.param("souza", {"name": "Maria SOUZA"}, id="solicitante-nome"),
        pytest.param("@ACME.example", {"email": "maria@acme.example"}, id="solicitante-email"),
        pytest.param("pressor", {"subject": "Impressora"}, id="substring"),
    ],
)
def test_search_matches_case_insensitive_substring(partner, organization, busca, field_values):
    match = make_searchable_ticket(organization, **field_values)
    make_searchable_ticket(
        organization, subject="Rede", description="Sem internet", name="João", email="joao@example.com"
    )

    response = partner.get(URL, {"busca": busca})

    assert [item["id"] for item in response.json()["data"]["data"]] == [str(match.pk)]
    assert response.json()["data"]["total"] == 1


def test_search_is_case_insensitive_for_accented_letters(partner, organization):
    match = make_searchable_ticket(organization, subject="INSTALAÇÃO DO SISTEMA", name="JOÃO")
    make_searchable_ticket(organization, subject="Rede")

    by_subject = partner.get(URL, {"busca": "instalação"})
    by_name = partner.get(URL, {"busca": "joão"})

    assert [item["id"] for item in by_subject.json()["data"]["data"]] == [str(match.pk)]
    assert [item["id"] for item in by_name.json()["data"]["data"]] == [str(match.pk)]


def test_search_with_a_number_also_matches_the_ticket_number(partner, organization):
    first = make_searchable_ticket(organization, subject="Impressora")
    make_searchable_ticket(organization, subject="Rede")
    mentions_one = make_searchable_ticket(organization, subject="Sala 1 sem luz")

    response = partner.get(URL, {"busca": "1"})

    assert [item["id"] for item in response.json()["data"]["data"]] == [str(mentions_one.pk), str(first.pk)]


def test_search_treats_like_wildcards_literally(partner, organization):
    make_searchable_ticket(organization, subject="Desconto de 100%")
    make_searchable_ticket(organization, subject="Desconto de 1000")
    make_searchable_ticket(organization, subject="campo_a")
    make_searchable_ticket(organization, subject="campoXa")

    percent = partner.get(URL, {"busca": "100%"})
    underscore = partner.get(URL, {"busca": "o_a"})

    assert [item["assunto"] for item in percent.json()["data"]["data"]] == ["Desconto de 100%"]
    assert [item["assunto"] for item in underscore.json()["data"]["data"]] == ["campo_a"]


def test_search_without_match_is_empty(partner, organization):
    make_searchable_ticket(organization, subject="Impressora")

    response = partner.get(URL, {"busca": "inexistente"})

    assert response.json()["data"]["data"] == []
    assert response.json()["data"]["total"] == 0


def test_search_does_not_look_into_replies(partner, organization, agent):
    created = make_searchable_ticket(organization, subject="Impressora")
    make_agent_reply(created, agent, body="palavra-secreta")
    make_agent_reply(created, agent, body="nota-secreta", internal=True)

    assert partner.get(URL, {"busca": "palavra-secreta"}).json()["data"]["data"] == []
    assert partner.get(URL, {"busca": "nota-secreta"}).json()["data"]["data"] == []


def test_filters_combine_with_and(partner, organization):
    make_searchable_ticket(organization, subject="Impressora", priority="baixa")
    wanted = make_searchable_ticket(organization, subject="Impressora", priority="alta")
    make_searchable_ticket(organization, subject="Rede", priority="alta")

    response = partner.get(URL, {"prioridade": "alta", "busca": "impressora"})
    with_number = partner.get(URL, {"prioridade": "alta", "busca": "impressora", "numero": 1})

    assert [item["id"] for item in response.json()["data"]["data"]] == [str(wanted.pk)]
    assert with_number.json()["data"]["data"] == []


def test_search_applies_before_pagination(partner, organization):
    for _ in range(3):
        make_searchable_ticket(organization, subject="Rede")
    for _ in range(3):
        make_searchable_ticket(organization, subject="Impressora")

    response = partner.get(URL, {"busca": "impressora", "por_pagina": 2})

    assert response.json()["data"]["total"] == 3
    assert response.json()["data"]["ultima_pagina"] == 2
    assert numbers(response) == [6, 5]


# --- Replies inside the list ----------------------------------------------


def test_list_shows_public_replies_and_hides_internal_notes(partner, organization, agent):
    created = make_searchable_ticket(organization)
    public = make_agent_reply(created, agent, body="Estamos verificando.")
    make_agent_reply(created, agent, body="Cliente difícil, cuidado.", internal=True)
    customer = make_customer_reply(created, body="Obrigada!")

    response = partner.get(URL)

    [item] = response.json()["data"]["data"]
    assert [reply["id"] for reply in item["respostas"]] == [str(public.pk), str(customer.pk)]
    assert [reply["mensagem"] for reply in item["respostas"]] == ["Estamos verificando.", "Obrigada!"]
    assert "Cliente difícil" not in response.content.decode()
