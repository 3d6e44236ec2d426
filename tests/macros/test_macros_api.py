"""Panel API of macros: GET /api/macros and POST /api/tickets/{id}/macros/{macro} (JWT, any active agent)."""

import uuid

import pytest

from helpdesk.services import agent_set_active
from integrations.models import WebhookEvent
from macros.models import Assignment
from tests.assertions import (
    assert_error,
    assert_exact_validation_error,
    assert_success,
    assert_ticket_not_found,
    queries_of,
)
from tests.factories import make_agent, make_ticket, status_of
from tests.macros.helpers import event_kinds, make_macro
from tickets.models import Reply, Ticket
from tickets.services import RequesterData, ticket_update

MACROS = "/api/macros"


def apply_url(ticket, macro) -> str:
    return f"/api/tickets/{ticket.pk}/macros/{macro.pk}"


def assert_macro_not_found(response) -> None:
    assert_error(response, 404, "Macro não encontrada.", "macro")


@pytest.fixture
def ticket(organization):
    return make_ticket(organization, subject="Sem rede", requester=RequesterData(name="Maria", email="m@x.test"))


def stored(ticket) -> dict:
    return Ticket.objects.filter(pk=ticket.pk).values().get()


def test_an_agent_lists_the_organizations_macros_by_name_with_their_actions(agent_client, organization, agent):
    waiting = status_of(organization, "aguardando")
    full = make_macro(
        organization,
        name="Pedir dados",
        body="Olá {{solicitante.nome}}, precisamos de mais dados.",
        status=waiting,
        priority="alta",
        assignment=Assignment.AGENT,
        assignee=agent,
        tags_add=["Aguardando Dados"],
        tags_remove=["novo"],
    )
    note = make_macro(organization, name="Anotar VIP", body="VIP", internal=True, assignment=Assignment.ME)
    bare = make_macro(organization, name="Liberar", assignment=Assignment.NONE)

    response = agent_client.get(MACROS)

    assert assert_success(response, 200, "Macros listadas.") == [
        {
            "id": str(note.pk),
            "nome": "Anotar VIP",
            "mensagem": "VIP",
            "interna": True,
            "acoes": {
                "status_id": None,
                "prioridade": None,
                "atendente": "eu",
                "tags": {"adicionar": [], "remover": []},
            },
        },
        {
            "id": str(bare.pk),
            "nome": "Liberar",
            "mensagem": "",
            "interna": False,
            "acoes": {
                "status_id": None,
                "prioridade": None,
                "atendente": "nenhum",
                "tags": {"adicionar": [], "remover": []},
            },
        },
        {
            "id": str(full.pk),
            "nome": "Pedir dados",
            "mensagem": "Olá {{solicitante.nome}}, precisamos de mais dados.",
            "interna": False,
            "acoes": {
                "status_id": str(waiting.pk),
                "prioridade": "alta",
                "atendente": str(agent.pk),
                "tags": {"adicionar": ["aguardando-dados"], "remover": ["novo"]},
            },
        },
    ]


def test_a_macro_that_keeps_the_assignee_says_null(agent_client, organization):
    make_macro(organization, name="Só texto", body="Obrigado!")

    data = assert_success(agent_client.get(MACROS), 200, "Macros listadas.")

    assert data[0]["acoes"]["atendente"] is None


def test_the_macro_list_runs_the_same_queries_for_1_and_30_macros(manager, organization, generous_rate_limits):
    make_macro(organization, name="Macro 0", status=status_of(organization, "resolvido"))
    one_queries, one = queries_of(manager, MACROS)
    for n in range(1, 30):
        make_macro(organization, name=f"Macro {n}", status=status_of(organization, "resolvido"), priority="alta")

    thirty_queries, thirty = queries_of(manager, MACROS)

    assert (len(one), len(thirty)) == (1, 30)
    assert len(thirty_queries) == len(one_queries), "\n".join(thirty_queries)


def test_applying_a_macro_answers_the_ticket_as_the_panel_shows_it(agent_client, organization, agent, ticket):
    macro = make_macro(
        organization,
        body="Olá {{solicitante.nome}}, o ticket {{ticket.numero}} foi resolvido por {{atendente.nome}}.",
        status=status_of(organization, "resolvido"),
        priority="baixa",
        assignment=Assignment.ME,
        tags_add=["resolvido-na-hora"],
    )
    WebhookEvent.objects.all().delete()

    response = agent_client.post(apply_url(ticket, macro), {}, format="json")

    data = assert_success(response, 200, "Macro aplicada.")
    assert data == assert_success(agent_client.get(f"/api/tickets/{ticket.pk}"), 200, "Ticket encontrado.")
    assert (data["status"]["categoria"], data["prioridade"], data["atendente"]["id"], data["tags"]) == (
        "resolvido",
        "baixa",
        str(agent.pk),
        ["resolvido-na-hora"],
    )
    assert [(r["mensagem"], r["interna"]) for r in data["respostas"]] == [
        (f"Olá Maria, o ticket {ticket.number} foi resolvido por Beatriz Atendente.", False)
    ]
    assert event_kinds(ticket) == [
        "ticket.status_alterado",
        "ticket.resolvido",
        "ticket.prioridade_alterada",
        "ticket.atribuido",
        "ticket.tags_alteradas",
        "ticket.resposta_publica",
    ]


def test_mensagem_overrides_the_filled_text_and_empty_posts_no_reply(agent_client, organization, ticket):
    macro = make_macro(organization, body="Texto da macro", internal=True, priority="alta")

    edited = agent_client.post(apply_url(ticket, macro), {"mensagem": "Editado pelo atendente"}, format="json")
    empty = agent_client.post(apply_url(ticket, macro), {"mensagem": ""}, format="json")

    assert [(r["mensagem"], r["interna"]) for r in assert_success(edited, 200, "Macro aplicada.")["respostas"]] == [
        ("Editado pelo atendente", True)
    ]
    assert len(assert_success(empty, 200, "Macro aplicada.")["respostas"]) == 1


def test_bad_input_is_a_4xx_and_writes_nothing(agent_client, organization, ticket):
    macro = make_macro(organization, body="Olá", priority="urgente")
    before = stored(ticket)

    not_text = agent_client.post(apply_url(ticket, macro), {"mensagem": 5}, format="json")
    too_long = agent_client.post(apply_url(ticket, macro), {"mensagem": "x" * 65536}, format="json")
    not_object = agent_client.post(apply_url(ticket, macro), [1], format="json")
    malformed = agent_client.generic("POST", apply_url(ticket, macro), "{", content_type="application/json")

    assert_exact_validation_error(not_text, {"mensagem": ["Informe um texto."]})
    assert too_long.status_code == 422 and list(too_long.json()["errors"]) == ["mensagem"]
    assert (not_object.status_code, not_object.json()["errors"]["field"]) == (400, "body")
    assert (malformed.status_code, malformed.json()["errors"]["field"]) == (400, "body")
    assert stored(ticket) == before
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_another_organizations_macro_or_ticket_answers_like_a_missing_one(
    agent_client, organization, other_organization, ticket
):
    mine = make_macro(organization, body="Minha", priority="urgente")
    theirs = make_macro(other_organization, body="Deles", priority="urgente")
    their_ticket = make_ticket(other_organization)
    before, theirs_before = stored(ticket), stored(their_ticket)

    foreign_macro = agent_client.post(apply_url(ticket, theirs), {}, format="json")
    missing_macro = agent_client.post(f"/api/tickets/{ticket.pk}/macros/{uuid.uuid4()}", {}, format="json")
    malformed_macro = agent_client.post(f"/api/tickets/{ticket.pk}/macros/nao-e-id", {}, format="json")
    foreign_ticket = agent_client.post(apply_url(their_ticket, mine), {"mensagem": 5}, format="json")
    missing_ticket = agent_client.post(f"/api/tickets/{uuid.uuid4()}/macros/{mine.pk}", {}, format="json")

    for response in (foreign_macro, missing_macro, malformed_macro):
        assert_macro_not_found(response)
    assert foreign_macro.json() == missing_macro.json()
    assert_ticket_not_found(foreign_ticket)  # before the body is looked at
    assert_ticket_not_found(missing_ticket)
    assert (stored(ticket), stored(their_ticket)) == (before, theirs_before)
    assert not Reply.objects.exists()


def test_a_macro_assigning_an_inactive_agent_is_a_422_and_writes_nothing(agent_client, organization, ticket):
    colleague = make_agent(organization, name="Saiu")
    macro = make_macro(organization, body="Olá", priority="alta", assignment=Assignment.AGENT, assignee=colleague)
    agent_set_active(agent=colleague, is_active=False)
    before = stored(ticket)

    response = agent_client.post(apply_url(ticket, macro), {}, format="json")

    assert_exact_validation_error(response, {"macro": ["O atendente desta macro está inativo ou não existe mais."]})
    assert stored(ticket) == before
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_a_ticket_at_its_tag_limit_refuses_the_macro_with_a_422(agent_client, organization, ticket):
    ticket_update(ticket=ticket, tags_add=[f"t{n}" for n in range(20)])
    macro = make_macro(organization, body="Olá", tags_add=["mais"])

    response = agent_client.post(apply_url(ticket, macro), {}, format="json")

    assert_exact_validation_error(response, {"tags": ["Um ticket tem no máximo 20 tags."]})
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_without_a_token_both_routes_are_401(anon_client, organization, ticket):
    macro = make_macro(organization, body="Olá")

    for response in (anon_client.get(MACROS), anon_client.post(apply_url(ticket, macro), {}, format="json")):
        assert_error(response, 401, "Não autenticado.", "token")
    assert not Reply.objects.exists()
