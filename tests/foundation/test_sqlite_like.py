"""The embedded database's LIKE folds case for all of Unicode, and a crafted pattern cannot stall it."""

import time

import pytest

from foundation.db.sqlite import unicode_like


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("%instalação%", "ERRO NA INSTALAÇÃO DO APP", True),
        ("%INSTALAÇÃO%", "erro na instalação", True),
        ("%ação%", "Acao", False),
        ("impressora%", "Impressora quebrada", True),
        ("impressora%", "A impressora", False),
        ("%quebrada", "Impressora QUEBRADA", True),
        ("maria@example.com", "MARIA@EXAMPLE.COM", True),
        ("maria@example.com", "maria@example.com.br", False),
        ("%a%b%c%", "xxAyyBzzC", True),
        ("%a%b%c%", "xxCyyBzzA", False),
        ("%", "", True),
        ("%x%", "", False),
        ("ab%ba", "aba", False),
        ("%straße%", "STRASSE", True),
        ("p_dido", "pedido", True),
        ("p_dido", "ppedido", False),
        ("%p_d%o", "um pedido", True),
    ],
)
def test_like_matches_as_a_case_insensitive_pattern(pattern, value, expected):
    assert unicode_like(pattern, value) is expected


def test_escaped_wildcards_are_literal():
    assert unicode_like(r"%50\%%", "desconto de 50% hoje", "\\") is True
    assert unicode_like(r"%50\%%", "desconto de 500 hoje", "\\") is False
    assert unicode_like(r"%a\_b%", "xa_bx", "\\") is True
    assert unicode_like(r"%a\_b%", "xacbx", "\\") is False


def test_null_is_unknown():
    assert unicode_like(None, "x") is None
    assert unicode_like("%x%", None) is None


def test_a_crafted_pattern_costs_linear_time_not_backtracking():
    # A regex for this pattern backtracks through every way of placing the a's: seconds per row.
    pattern = "%" + "a%" * 30 + "b"
    value = "a" * 20_000

    started = time.perf_counter()
    matched = unicode_like(pattern, value)

    assert matched is False
    assert time.perf_counter() - started < 1.0  # a complexity guard with a wide margin, not a benchmark


def test_busca_through_the_api_folds_accents_on_every_database(partner, organization):
    from tests.factories import make_ticket

    make_ticket(organization, subject="ERRO NA INSTALAÇÃO")

    found = partner.get("/api/v1/tickets", {"busca": "instalação"}).json()["data"]

    assert [ticket["assunto"] for ticket in found["data"]] == ["ERRO NA INSTALAÇÃO"]
