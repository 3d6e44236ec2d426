"""Agent panel API (JWT): tickets with internal notes, replies, status/assignee/priority, statuses."""

import uuid

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from helpdesk.models import User
from helpdesk.services import agent_set_active
from tests.assertions import assert_error, assert_validation_error, panel_client
from tests.factories import (
    PASSWORD,
    make_agent,
    make_agent_reply,
    make_customer_reply,
    make_ticket,
    status_of,
)
from tickets.models import Reply, Ticket
from tickets.services import RequesterData, ticket_update

TICKETS = "/api/tickets"
STATUSES = "/api/ticket-status"
PARTNER_TICKETS = "/api/v1/tickets"

TICKET_FIELDS = {
    "id",
    "numero",
    "assunto",
    "descricao",
    "prioridade",
    "canal_origem",
    "status",
    "solicitante",
    "external_id",
    "origem_sistema",
    "criado_em",
    "atualizado_em",
    "resolvido_em",
    "atendente",
    "respostas",
}
REPLY_FIELDS = {"id", "mensagem", "origem", "editado", "autor", "criado_em", "interna"}


@pytest.fixture
def panel(agent) -> APIClient:
    """Beatriz, a plain agent of `organization` (no api_publica:gerenciar)."""
    return panel_client(agent.user.email)


@pytest.fixture
def colleague(organization):
    return make_agent(organization, name="Carlos Colega")


@pytest.fixture
def other_agent(other_organization):
    return make_agent(other_organization, name="Globex Atendente")


def ticket(organization, subject="Assunto", description="Descrição", name="Cliente", email="", **overrides) -> Ticket:
    return make_ticket(
        organization,
        subject=subject,
        description=description,
        requester=RequesterData(name=name, email=email),
        **overrides,
    )


@pytest.fixture
def thread(organization, agent, colleague):
    """A ticket of `organization` with public replies and internal notes of two agents and the customer."""
    t = make_ticket(
        organization,
        subject="Impressora",
        description="Não imprime",
        requester=RequesterData(name="Ana", email="ana@example.test", external_id="cli-ana"),
    )
    replies = {
        "customer": make_customer_reply(t, body="Ainda não funciona"),
        "mine": make_agent_reply(t, agent, body="Vamos verificar"),
        "my_note": make_agent_reply(t, agent, body="Nota: cliente VIP", internal=True),
        "colleague": make_agent_reply(t, colleague, body="Resposta do colega"),
        "colleague_note": make_agent_reply(t, colleague, body="Nota do colega", internal=True),
    }
    return {"ticket": t, **replies}


@pytest.fixture
def foreign(other_organization, other_agent):
    """A ticket of `other_organization` (B) with a public reply and an internal note."""
    t = make_ticket(
        other_organization,
        subject="Segredo da Globex",
        description="Só da Globex",
        requester=RequesterData(name="Bruno", email="bruno@globex.test", external_id="cli-bruno"),
    )
    return {
        "ticket": t,
        "reply": make_agent_reply(t, other_agent, body="Resposta da Globex"),
        "note": make_agent_reply(t, other_agent, body="Nota da Globex", internal=True),
        "customer": make_customer_reply(t, body="Cliente da Globex"),
    }


def ticket_state(t: Ticket) -> dict:
    t.refresh_from_db()
    return {
        "status_id": t.status_id,
        "assignee_id": t.assignee_id,
        "priority": t.priority,
        "resolved_at": t.resolved_at,
        "updated_at": t.updated_at,
        "replies": sorted(
            (str(r.pk), r.body, r.edited, r.is_internal, str(r.updated_at)) for r in Reply.objects.filter(ticket=t)
        ),
    }


def reply_state(reply: Reply) -> tuple:
    reply.refresh_from_db()
    return (reply.body, reply.edited, reply.is_internal, reply.updated_at)


def assert_ticket_not_found(response) -> None:
    assert_error(response, 404, "Ticket não encontrado.", "id")


def assert_reply_not_found(response) -> None:
    assert_error(response, 404, "Resposta não encontrada.", "resposta")


def numbers(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [item["numero"] for item in response.json()["data"]["data"]]


# --- List ---------------------------------------------------------------------------


def test_list_returns_the_paginated_envelope_with_the_whole_thread(panel, thread, organization, agent):
    response = panel.get(TICKETS)

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "success": True,
        "message": "Tickets listados.",
        "data": {"data": body["data"]["data"], "total": 1, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1},
        "errors": [],
    }
    [item] = body["data"]["data"]
    assert set(item) == TICKET_FIELDS
    assert item["id"] == str(thread["ticket"].pk)
    opened = status_of(organization, "aberto")
    assert item["status"] == {"id": str(opened.pk), "nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"}
    assert item["atendente"] is None
    assert [(r["mensagem"], r["interna"]) for r in item["respostas"]] == [
        ("Ainda não funciona", False),
        ("Vamos verificar", False),
        ("Nota: cliente VIP", True),
        ("Resposta do colega", False),
        ("Nota do colega", True),
    ]
    assert all(set(r) == REPLY_FIELDS for r in item["respostas"])


def test_list_is_empty_without_tickets(panel):
    response = panel.get(TICKETS)

    assert response.json() == {
        "success": True,
        "message": "Tickets listados.",
        "data": {"data": [], "total": 0, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1},
        "errors": [],
    }


def test_list_is_newest_first_and_paginates(panel, organization):
    for n in range(5):
        ticket(organization, subject=f"T{n}")

    first = panel.get(TICKETS, {"por_pagina": 2})
    third = panel.get(TICKETS, {"por_pagina": 2, "page": 3})
    past_end = panel.get(TICKETS, {"por_pagina": 2, "page": 4})

    assert numbers(first) == [5, 4]
    assert {k: v for k, v in first.json()["data"].items() if k != "data"} == {
        "total": 5,
        "por_pagina": 2,
        "pagina_atual": 1,
        "ultima_pagina": 3,
    }
    assert numbers(third) == [1]
    assert numbers(past_end) == []


def test_list_filters_by_priority(panel, organization):
    ticket(organization, priority="alta")
    ticket(organization, priority="baixa")
    ticket(organization, priority="alta")

    assert numbers(panel.get(TICKETS, {"prioridade": "alta"})) == [3, 1]


def test_list_filters_by_number(panel, organization):
    for _ in range(3):
        ticket(organization)

    assert numbers(panel.get(TICKETS, {"numero": 2})) == [2]


def test_list_busca_matches_subject_description_requester_and_number(panel, organization):
    ticket(organization, subject="Impressora quebrada")
    ticket(organization, description="O MONITOR pisca")
    ticket(organization, name="Joana Monitora")
    ticket(organization, email="suporte@impressoras.test")

    assert numbers(panel.get(TICKETS, {"busca": "monitor"})) == [3, 2]
    assert numbers(panel.get(TICKETS, {"busca": "IMPRESSORA"})) == [4, 1]
    assert numbers(panel.get(TICKETS, {"busca": "2"})) == [2]


def test_list_filters_by_status_id(panel, organization, agent):
    waiting = status_of(organization, "aguardando")
    ticket(organization)
    moved = ticket(organization)
    ticket_update(ticket=moved, status=waiting)

    response = panel.get(TICKETS, {"status": str(waiting.pk)})

    assert numbers(response) == [2]
    assert response.json()["data"]["data"][0]["status"]["id"] == str(waiting.pk)
    assert numbers(panel.get(TICKETS, {"status": str(status_of(organization, "aberto").pk)})) == [1]


def test_list_filters_by_agent_id(panel, organization, agent, colleague):
    ticket_update(ticket=ticket(organization), assignee=agent)
    ticket_update(ticket=ticket(organization), assignee=colleague)
    ticket(organization)

    response = panel.get(TICKETS, {"atendente": str(colleague.pk)})

    assert numbers(response) == [2]
    assert response.json()["data"]["data"][0]["atendente"] == {"id": str(colleague.pk), "nome": "Carlos Colega"}
    assert numbers(panel.get(TICKETS, {"atendente": str(agent.pk)})) == [1]


def test_list_filters_combine_with_and(panel, organization, agent):
    ticket_update(ticket=ticket(organization, subject="Rede", priority="alta"), assignee=agent)
    ticket(organization, subject="Rede", priority="alta")
    ticket_update(ticket=ticket(organization, subject="Rede", priority="baixa"), assignee=agent)
    ticket_update(ticket=ticket(organization, subject="Email", priority="alta"), assignee=agent)

    response = panel.get(TICKETS, {"busca": "rede", "prioridade": "alta", "atendente": str(agent.pk)})

    assert numbers(response) == [1]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param({"status": "abc"}, "status", id="status-not-uuid"),
        pytest.param({"status": "123"}, "status", id="status-number"),
        pytest.param({"atendente": "abc"}, "atendente", id="atendente-not-uuid"),
        pytest.param({"prioridade": "altissima"}, "prioridade", id="prioridade-unknown"),
        pytest.param({"numero": "um"}, "numero", id="numero-not-int"),
        pytest.param({"por_pagina": "0"}, "por_pagina", id="por_pagina-0"),
        pytest.param({"por_pagina": "101"}, "por_pagina", id="por_pagina-101"),
        pytest.param({"page": "abc"}, "page", id="page-not-int"),
    ],
)
def test_list_with_an_invalid_query_is_a_validation_error(panel, organization, params, field):
    ticket(organization)

    assert_validation_error(panel.get(TICKETS, params), field)


def test_list_never_shows_another_organizations_tickets(panel, organization, other_organization, foreign):
    own = ticket(organization, subject="Nosso")

    everything = panel.get(TICKETS)
    by_number = panel.get(TICKETS, {"numero": 1})
    by_search = panel.get(TICKETS, {"busca": "Globex"})

    assert [item["id"] for item in everything.json()["data"]["data"]] == [str(own.pk)]
    assert [item["id"] for item in by_number.json()["data"]["data"]] == [str(own.pk)]
    assert by_search.json()["data"]["total"] == 0
    for response in (everything, by_number, by_search):
        assert str(foreign["ticket"].pk) not in response.content.decode()
        assert "Globex" not in response.content.decode()


def test_list_by_another_organizations_status_or_agent_is_empty(panel, organization, other_organization, foreign):
    ticket(organization)
    foreign_open = status_of(other_organization, "aberto")
    foreign_agent = foreign["reply"].author_agent
    ticket_update(ticket=foreign["ticket"], assignee=foreign_agent)

    by_status = panel.get(TICKETS, {"status": str(foreign_open.pk)})
    by_agent = panel.get(TICKETS, {"atendente": str(foreign_agent.pk)})

    assert numbers(by_status) == []
    assert numbers(by_agent) == []


# --- Detail ---------------------------------------------------------------------------


def test_detail_shows_internal_notes_marked_and_public_replies_unmarked(panel, thread, organization, agent):
    response = panel.get(f"{TICKETS}/{thread['ticket'].pk}")

    assert response.status_code == 200
    body = response.json()
    assert body == {"success": True, "message": "Ticket encontrado.", "data": body["data"], "errors": []}
    data = body["data"]
    assert set(data) == TICKET_FIELDS
    assert data["status"] == {
        "id": str(status_of(organization, "aberto").pk),
        "nome": "Aberto",
        "categoria": "aberto",
        "cor": "#3B82F6",
    }
    assert data["atendente"] is None
    assert data["solicitante"] == {
        "nome": "Ana",
        "email": "ana@example.test",
        "telefone": None,
        "external_id": "cli-ana",
    }
    by_id = {r["id"]: r for r in data["respostas"]}
    assert [r["id"] for r in data["respostas"]] == [
        str(thread[k].pk) for k in ("customer", "mine", "my_note", "colleague", "colleague_note")
    ]
    assert by_id[str(thread["my_note"].pk)] == {
        "id": str(thread["my_note"].pk),
        "mensagem": "Nota: cliente VIP",
        "origem": "agente",
        "editado": False,
        "autor": {"tipo": "agente", "nome": "Beatriz Atendente", "email": None, "external_id": None},
        "criado_em": by_id[str(thread["my_note"].pk)]["criado_em"],
        "interna": True,
    }
    assert by_id[str(thread["customer"].pk)] == {
        "id": str(thread["customer"].pk),
        "mensagem": "Ainda não funciona",
        "origem": "cliente_api",
        "editado": False,
        "autor": {"tipo": "cliente", "nome": "Ana", "email": "ana@example.test", "external_id": "cli-ana"},
        "criado_em": by_id[str(thread["customer"].pk)]["criado_em"],
        "interna": False,
    }
    assert by_id[str(thread["colleague_note"].pk)]["interna"] is True
    assert by_id[str(thread["colleague"].pk)]["interna"] is False
    assert by_id[str(thread["mine"].pk)]["interna"] is False


def test_detail_shows_the_assigned_agent(panel, thread, colleague):
    ticket_update(ticket=thread["ticket"], assignee=colleague)

    response = panel.get(f"{TICKETS}/{thread['ticket'].pk}")

    assert response.json()["data"]["atendente"] == {"id": str(colleague.pk), "nome": "Carlos Colega"}


@pytest.mark.parametrize("ticket_id", [str(uuid.uuid4()), "abc", "1"])
def test_detail_of_an_unknown_ticket_is_not_found(panel, thread, ticket_id):
    assert_ticket_not_found(panel.get(f"{TICKETS}/{ticket_id}"))


# --- Replies ------------------------------------------------------------------------------


def test_agent_public_reply_is_created_and_seen_by_the_partner(panel, partner, thread, agent):
    t = thread["ticket"]

    response = panel.post(
        f"{TICKETS}/{t.pk}/respostas", {"mensagem": "Resolvemos o driver", "interna": False}, format="json"
    )

    assert response.status_code == 201
    body = response.json()
    reply = Reply.objects.get(ticket=t, body="Resolvemos o driver")
    assert body == {
        "success": True,
        "message": "Resposta enviada.",
        "data": {
            "id": str(reply.pk),
            "mensagem": "Resolvemos o driver",
            "origem": "agente",
            "editado": False,
            "autor": {"tipo": "agente", "nome": "Beatriz Atendente", "email": None, "external_id": None},
            "criado_em": body["data"]["criado_em"],
            "interna": False,
        },
        "errors": [],
    }
    assert body["data"]["criado_em"].endswith("Z")
    assert (reply.origin, reply.author_agent_id, reply.is_internal) == ("agente", agent.pk, False)
    seen = partner.get(f"{PARTNER_TICKETS}/{t.pk}").json()["data"]["respostas"]
    assert seen[-1]["id"] == str(reply.pk)
    assert seen[-1]["autor"]["tipo"] == "agente"


def test_agent_internal_note_is_hidden_from_the_partner(panel, partner, thread):
    t = thread["ticket"]

    response = panel.post(
        f"{TICKETS}/{t.pk}/respostas", {"mensagem": "NOTA-SIGILOSA-42", "interna": True}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["data"]["interna"] is True
    note = Reply.objects.get(ticket=t, body="NOTA-SIGILOSA-42")
    assert note.is_internal is True
    for partner_response in (partner.get(f"{PARTNER_TICKETS}/{t.pk}"), partner.get(PARTNER_TICKETS)):
        assert partner_response.status_code == 200
        assert "NOTA-SIGILOSA-42" not in partner_response.content.decode()
        assert str(note.pk) not in partner_response.content.decode()
    panel_view = panel.get(f"{TICKETS}/{t.pk}").json()["data"]["respostas"]
    assert panel_view[-1]["id"] == str(note.pk)
    assert panel_view[-1]["interna"] is True


def test_reply_without_interna_is_public(panel, thread):
    response = panel.post(f"{TICKETS}/{thread['ticket'].pk}/respostas", {"mensagem": "Pública"}, format="json")

    assert response.status_code == 201
    assert response.json()["data"]["interna"] is False
    assert Reply.objects.get(body="Pública").is_internal is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({}, "mensagem", id="mensagem-missing"),
        pytest.param({"mensagem": ""}, "mensagem", id="mensagem-blank"),
        pytest.param({"mensagem": "   "}, "mensagem", id="mensagem-whitespace"),
        pytest.param({"mensagem": 42}, "mensagem", id="mensagem-number"),
        pytest.param({"mensagem": "x" * 65536}, "mensagem", id="mensagem-too-long"),
        pytest.param({"mensagem": "ok", "interna": "true"}, "interna", id="interna-string"),
        pytest.param({"mensagem": "ok", "interna": 1}, "interna", id="interna-number"),
    ],
)
def test_invalid_reply_is_refused_and_writes_nothing(panel, thread, body, field):
    before = ticket_state(thread["ticket"])

    response = panel.post(f"{TICKETS}/{thread['ticket'].pk}/respostas", body, format="json")

    assert_validation_error(response, field)
    assert ticket_state(thread["ticket"]) == before


def test_agent_edits_own_reply(panel, partner, thread):
    mine = thread["mine"]

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{mine.pk}", {"mensagem": "Corrigido"}, format="json"
    )

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "success": True,
        "message": "Resposta atualizada.",
        "data": {
            "id": str(mine.pk),
            "mensagem": "Corrigido",
            "origem": "agente",
            "editado": True,
            "autor": {"tipo": "agente", "nome": "Beatriz Atendente", "email": None, "external_id": None},
            "criado_em": body["data"]["criado_em"],
            "interna": False,
        },
        "errors": [],
    }
    assert reply_state(mine)[:3] == ("Corrigido", True, False)
    seen = partner.get(f"{PARTNER_TICKETS}/{thread['ticket'].pk}").json()["data"]["respostas"]
    assert {"id": str(mine.pk), "mensagem": "Corrigido", "editado": True}.items() <= next(
        r for r in seen if r["id"] == str(mine.pk)
    ).items()


def test_agent_edits_own_internal_note_which_stays_internal(panel, thread):
    note = thread["my_note"]

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{note.pk}", {"mensagem": "Nota revista"}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["data"]["interna"] is True
    assert response.json()["data"]["editado"] is True
    assert reply_state(note)[:3] == ("Nota revista", True, True)


@pytest.mark.parametrize("which", ["customer", "colleague", "colleague_note"])
def test_agent_cannot_edit_a_reply_that_is_not_theirs(panel, thread, which):
    reply = thread[which]
    before = reply_state(reply)

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{reply.pk}", {"mensagem": "Reescrito"}, format="json"
    )

    assert_error(response, 403, "Acesso negado.", "resposta")
    assert reply_state(reply) == before


@pytest.mark.parametrize("reply_id", [str(uuid.uuid4()), "abc"])
def test_editing_an_unknown_reply_is_not_found(panel, thread, reply_id):
    before = ticket_state(thread["ticket"])

    response = panel.patch(f"{TICKETS}/{thread['ticket'].pk}/respostas/{reply_id}", {"mensagem": "x"}, format="json")

    assert_reply_not_found(response)
    assert ticket_state(thread["ticket"]) == before


def test_editing_a_reply_of_another_ticket_of_the_same_organization_is_not_found(panel, thread, organization, agent):
    elsewhere = make_agent_reply(ticket(organization), agent, body="Em outro ticket")
    before = reply_state(elsewhere)

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{elsewhere.pk}", {"mensagem": "x"}, format="json"
    )

    assert_reply_not_found(response)
    assert reply_state(elsewhere) == before


@pytest.mark.parametrize("body", [{}, {"mensagem": ""}, {"mensagem": 1}], ids=["missing", "blank", "number"])
def test_invalid_edit_is_refused_and_changes_nothing(panel, thread, body):
    mine = thread["mine"]
    before = reply_state(mine)

    response = panel.patch(f"{TICKETS}/{thread['ticket'].pk}/respostas/{mine.pk}", body, format="json")

    assert_validation_error(response, "mensagem")
    assert reply_state(mine) == before


# --- Ticket update ------------------------------------------------------------------------


def test_update_changes_status_assignee_and_priority(panel, thread, organization, colleague):
    t = thread["ticket"]
    in_progress = status_of(organization, "em_andamento")

    response = panel.patch(
        f"{TICKETS}/{t.pk}",
        {"status_id": str(in_progress.pk), "atendente_id": str(colleague.pk), "prioridade": "urgente"},
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body == {"success": True, "message": "Ticket atualizado.", "data": body["data"], "errors": []}
    data = body["data"]
    assert set(data) == TICKET_FIELDS
    assert data["id"] == str(t.pk)
    assert data["status"] == {
        "id": str(in_progress.pk),
        "nome": "Em andamento",
        "categoria": "em_andamento",
        "cor": "#F59E0B",
    }
    assert data["atendente"] == {"id": str(colleague.pk), "nome": "Carlos Colega"}
    assert data["prioridade"] == "urgente"
    assert data["resolvido_em"] is None
    assert len(data["respostas"]) == 5
    state = ticket_state(t)
    assert (state["status_id"], state["assignee_id"], state["priority"]) == (in_progress.pk, colleague.pk, "urgente")


def test_update_changes_only_the_given_fields(panel, thread, organization, agent):
    t = thread["ticket"]
    waiting = status_of(organization, "aguardando")
    ticket_update(ticket=t, status=waiting, assignee=agent)
    before = ticket_state(t)

    response = panel.patch(f"{TICKETS}/{t.pk}", {"prioridade": "baixa"}, format="json")

    assert response.status_code == 200
    after = ticket_state(t)
    assert after == {**before, "priority": "baixa", "updated_at": after["updated_at"]}


def test_moving_to_resolvido_sets_resolvido_em_and_leaving_clears_it(panel, partner, thread, organization):
    t = thread["ticket"]
    resolved = status_of(organization, "resolvido")
    started = timezone.now()

    response = panel.patch(f"{TICKETS}/{t.pk}", {"status_id": str(resolved.pk)}, format="json")

    assert response.status_code == 200
    resolvido_em = response.json()["data"]["resolvido_em"]
    assert resolvido_em is not None
    assert resolvido_em.endswith("Z")
    assert response.json()["data"]["status"]["categoria"] == "resolvido"
    t.refresh_from_db()
    assert started <= t.resolved_at <= timezone.now()
    partner_view = partner.get(f"{PARTNER_TICKETS}/{t.pk}").json()["data"]
    assert partner_view["resolvido_em"] == resolvido_em
    assert partner_view["status"] == {"nome": "Resolvido", "categoria": "resolvido", "cor": "#10B981"}

    reopened = panel.patch(
        f"{TICKETS}/{t.pk}", {"status_id": str(status_of(organization, "em_andamento").pk)}, format="json"
    )

    assert reopened.status_code == 200
    assert reopened.json()["data"]["resolvido_em"] is None
    t.refresh_from_db()
    assert t.resolved_at is None
    assert partner.get(f"{PARTNER_TICKETS}/{t.pk}").json()["data"]["resolvido_em"] is None


def test_setting_resolvido_again_keeps_the_first_resolution_time(panel, thread, organization):
    t = thread["ticket"]
    resolved = status_of(organization, "resolvido")
    first = panel.patch(f"{TICKETS}/{t.pk}", {"status_id": str(resolved.pk)}, format="json").json()

    again = panel.patch(f"{TICKETS}/{t.pk}", {"status_id": str(resolved.pk)}, format="json").json()

    assert again["data"]["resolvido_em"] == first["data"]["resolvido_em"]


def test_null_atendente_id_unassigns(panel, thread, agent):
    t = thread["ticket"]
    ticket_update(ticket=t, assignee=agent)

    response = panel.patch(f"{TICKETS}/{t.pk}", {"atendente_id": None}, format="json")

    assert response.status_code == 200
    assert response.json()["data"]["atendente"] is None
    assert ticket_state(t)["assignee_id"] is None


def test_update_without_atendente_id_keeps_the_assignee(panel, thread, agent, organization):
    t = thread["ticket"]
    ticket_update(ticket=t, assignee=agent)

    response = panel.patch(
        f"{TICKETS}/{t.pk}", {"status_id": str(status_of(organization, "em_andamento").pk)}, format="json"
    )

    assert response.json()["data"]["atendente"] == {"id": str(agent.pk), "nome": "Beatriz Atendente"}
    assert ticket_state(t)["assignee_id"] == agent.pk


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"prioridade": "altissima"}, "prioridade", id="prioridade-unknown"),
        pytest.param({"prioridade": None}, "prioridade", id="prioridade-null"),
        pytest.param({"status_id": "abc"}, "status_id", id="status-not-uuid"),
        pytest.param({"status_id": None}, "status_id", id="status-null"),
        pytest.param({"status_id": 7}, "status_id", id="status-number"),
        pytest.param({"atendente_id": "abc"}, "atendente_id", id="atendente-not-uuid"),
        pytest.param({"atendente_id": 7}, "atendente_id", id="atendente-number"),
    ],
)
def test_invalid_ticket_update_is_refused_and_changes_nothing(panel, thread, body, field):
    before = ticket_state(thread["ticket"])

    response = panel.patch(f"{TICKETS}/{thread['ticket'].pk}", body, format="json")

    assert_validation_error(response, field)
    assert ticket_state(thread["ticket"]) == before


def test_unknown_status_id_is_not_found_and_changes_nothing(panel, thread):
    before = ticket_state(thread["ticket"])

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}", {"status_id": str(uuid.uuid4()), "prioridade": "urgente"}, format="json"
    )

    assert_error(response, 404, "Status não encontrado.", "status_id")
    assert ticket_state(thread["ticket"]) == before


def test_unknown_atendente_id_is_not_found_and_changes_nothing(panel, thread):
    before = ticket_state(thread["ticket"])

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}", {"atendente_id": str(uuid.uuid4()), "prioridade": "urgente"}, format="json"
    )

    assert_error(response, 404, "Atendente não encontrado.", "atendente_id")
    assert ticket_state(thread["ticket"]) == before


# --- Statuses --------------------------------------------------------------------------------


def test_status_list_has_the_five_default_statuses(panel, organization, other_organization):
    response = panel.get(STATUSES)

    assert response.status_code == 200
    body = response.json()
    ids = {category: str(status_of(organization, category).pk) for category in ("aberto", "em_andamento")}
    ids |= {category: str(status_of(organization, category).pk) for category in ("aguardando", "resolvido", "fechado")}
    assert body == {
        "success": True,
        "message": "Status listados.",
        "data": [
            {"id": ids["aberto"], "nome": "Aberto", "categoria": "aberto", "cor": "#3B82F6"},
            {"id": ids["em_andamento"], "nome": "Em andamento", "categoria": "em_andamento", "cor": "#F59E0B"},
            {"id": ids["aguardando"], "nome": "Aguardando cliente", "categoria": "aguardando", "cor": "#8B5CF6"},
            {"id": ids["resolvido"], "nome": "Resolvido", "categoria": "resolvido", "cor": "#10B981"},
            {"id": ids["fechado"], "nome": "Fechado", "categoria": "fechado", "cor": "#6B7280"},
        ],
        "errors": [],
    }
    for category in ("aberto", "resolvido"):
        assert str(status_of(other_organization, category).pk) not in response.content.decode()


# --- Access -----------------------------------------------------------------------------------


def panel_requests(t: Ticket, reply: Reply, status_id) -> list[tuple[str, str, dict | None]]:
    return [
        ("get", TICKETS, None),
        ("get", f"{TICKETS}/{t.pk}", None),
        ("patch", f"{TICKETS}/{t.pk}", {"status_id": str(status_id), "prioridade": "urgente"}),
        ("post", f"{TICKETS}/{t.pk}/respostas", {"mensagem": "Invasão", "interna": False}),
        ("patch", f"{TICKETS}/{t.pk}/respostas/{reply.pk}", {"mensagem": "Invasão"}),
        ("get", STATUSES, None),
    ]


def test_panel_user_who_is_not_an_agent_gets_403(thread, organization):
    User.objects.create_user(email="gerente@acme.test", password=PASSWORD, name="Gerente", organization=organization)
    client = panel_client("gerente@acme.test")
    before = ticket_state(thread["ticket"])

    for method, path, body in panel_requests(thread["ticket"], thread["mine"], status_of(organization, "fechado").pk):
        response = getattr(client, method)(path, body, format="json")
        assert_error(response, 403, "Acesso negado.", "permissao")

    assert ticket_state(thread["ticket"]) == before


def test_deactivated_agent_gets_403(panel, thread, organization, agent):
    agent_set_active(agent=agent, is_active=False)
    before = ticket_state(thread["ticket"])

    for method, path, body in panel_requests(thread["ticket"], thread["mine"], status_of(organization, "fechado").pk):
        response = getattr(panel, method)(path, body, format="json")
        assert_error(response, 403, "Acesso negado.", "permissao")

    assert ticket_state(thread["ticket"]) == before


@pytest.mark.parametrize("authorization", [None, "Bearer abc.def.ghi"])
def test_request_without_a_valid_token_gets_401(anon_client, thread, organization, authorization):
    if authorization:
        anon_client.credentials(HTTP_AUTHORIZATION=authorization)
    before = ticket_state(thread["ticket"])

    for method, path, body in panel_requests(thread["ticket"], thread["mine"], status_of(organization, "fechado").pk):
        response = getattr(anon_client, method)(path, body, format="json")
        assert_error(response, 401, "Não autenticado.", "token")

    assert ticket_state(thread["ticket"]) == before


# --- Tenancy ----------------------------------------------------------------------------------


def test_another_organizations_ticket_is_not_found_everywhere(panel, foreign, other_organization, organization):
    t = foreign["ticket"]
    before = ticket_state(t)

    responses = [
        panel.get(f"{TICKETS}/{t.pk}"),
        panel.patch(
            f"{TICKETS}/{t.pk}",
            {"status_id": str(status_of(organization, "resolvido").pk), "prioridade": "urgente"},
            format="json",
        ),
        panel.patch(
            f"{TICKETS}/{t.pk}",
            {"status_id": str(status_of(other_organization, "resolvido").pk), "atendente_id": None},
            format="json",
        ),
        panel.post(f"{TICKETS}/{t.pk}/respostas", {"mensagem": "Invasão", "interna": True}, format="json"),
        panel.patch(f"{TICKETS}/{t.pk}/respostas/{foreign['reply'].pk}", {"mensagem": "Invasão"}, format="json"),
    ]

    for response in responses:
        assert_ticket_not_found(response)
        assert "Globex" not in response.content.decode()
    assert ticket_state(t) == before
    assert not Reply.objects.filter(body="Invasão").exists()


def test_another_organizations_ticket_answers_like_a_missing_one(panel, foreign):
    assert panel.get(f"{TICKETS}/{foreign['ticket'].pk}").json() == panel.get(f"{TICKETS}/{uuid.uuid4()}").json()


@pytest.mark.parametrize("which", ["reply", "note", "customer"])
def test_another_organizations_reply_on_own_ticket_is_not_found(panel, thread, foreign, which):
    reply = foreign[which]
    before = reply_state(reply)
    own_before = ticket_state(thread["ticket"])

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{reply.pk}", {"mensagem": "Invasão"}, format="json"
    )

    assert_reply_not_found(response)
    assert reply_state(reply) == before
    assert ticket_state(thread["ticket"]) == own_before


def test_another_organizations_status_id_is_not_found(panel, thread, foreign, other_organization, colleague):
    before = ticket_state(thread["ticket"])
    foreign_before = ticket_state(foreign["ticket"])

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}",
        {
            "status_id": str(status_of(other_organization, "resolvido").pk),
            "atendente_id": str(colleague.pk),
            "prioridade": "urgente",
        },
        format="json",
    )

    assert_error(response, 404, "Status não encontrado.", "status_id")
    assert ticket_state(thread["ticket"]) == before
    assert ticket_state(foreign["ticket"]) == foreign_before


def test_another_organizations_agent_id_is_not_found(panel, thread, foreign, organization, other_agent):
    before = ticket_state(thread["ticket"])
    foreign_before = ticket_state(foreign["ticket"])

    response = panel.patch(
        f"{TICKETS}/{thread['ticket'].pk}",
        {
            "atendente_id": str(other_agent.pk),
            "status_id": str(status_of(organization, "resolvido").pk),
            "prioridade": "urgente",
        },
        format="json",
    )

    assert_error(response, 404, "Atendente não encontrado.", "atendente_id")
    assert ticket_state(thread["ticket"]) == before
    assert ticket_state(foreign["ticket"]) == foreign_before
