"""Agent panel API (JWT): tickets with internal notes, replies, status/assignee/priority, statuses."""

import uuid

import pytest
from django.utils import timezone

from helpdesk.models import User
from helpdesk.services import agent_set_active
from tests.assertions import (
    assert_error,
    assert_reply_not_found,
    assert_ticket_not_found,
    assert_validation_error,
    numbers,
    panel_client,
    reply_state,
)
from tests.contract import PANEL_TICKET_FIELDS
from tests.factories import (
    PASSWORD,
    make_agent,
    make_agent_reply,
    make_customer_reply,
    make_searchable_ticket,
    make_ticket,
    status_of,
)
from tickets.models import Reply, Ticket
from tickets.services import RequesterData, ticket_update

TICKETS = "/api/tickets"
STATUSES = "/api/ticket-status"
PARTNER_TICKETS = "/api/v1/tickets"

REPLY_FIELDS = {"id", "mensagem", "origem", "editado", "autor", "criado_em", "interna"}


@pytest.fixture
def colleague(organization):
    return make_agent(organization, name="Carlos Colega")


@pytest.fixture
def other_agent(other_organization):
    return make_agent(other_organization, name="Globex Atendente")


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
def foreign_thread(other_organization, other_agent):
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


# --- List ---------------------------------------------------------------------------


def test_list_returns_the_paginated_envelope_with_the_whole_thread(agent_client, thread, organization, agent):
    response = agent_client.get(TICKETS)

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "success": True,
        "message": "Tickets listados.",
        "data": {"data": body["data"]["data"], "total": 1, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1},
        "errors": [],
    }
    [item] = body["data"]["data"]
    assert set(item) == PANEL_TICKET_FIELDS
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


def test_list_is_empty_without_tickets(agent_client):
    response = agent_client.get(TICKETS)

    assert response.json() == {
        "success": True,
        "message": "Tickets listados.",
        "data": {"data": [], "total": 0, "por_pagina": 15, "pagina_atual": 1, "ultima_pagina": 1},
        "errors": [],
    }


def test_list_is_newest_first_and_paginates(agent_client, organization):
    for n in range(5):
        make_searchable_ticket(organization, subject=f"T{n}")

    first = agent_client.get(TICKETS, {"por_pagina": 2})
    third = agent_client.get(TICKETS, {"por_pagina": 2, "page": 3})
    past_end = agent_client.get(TICKETS, {"por_pagina": 2, "page": 4})

    assert numbers(first) == [5, 4]
    assert {k: v for k, v in first.json()["data"].items() if k != "data"} == {
        "total": 5,
        "por_pagina": 2,
        "pagina_atual": 1,
        "ultima_pagina": 3,
    }
    assert numbers(third) == [1]
    assert numbers(past_end) == []


def test_list_filters_by_priority(agent_client, organization):
    make_searchable_ticket(organization, priority="alta")
    make_searchable_ticket(organization, priority="baixa")
    make_searchable_ticket(organization, priority="alta")

    assert numbers(agent_client.get(TICKETS, {"prioridade": "alta"})) == [3, 1]


def test_list_filters_by_number(agent_client, organization):
    for _ in range(3):
        make_searchable_ticket(organization)

    assert numbers(agent_client.get(TICKETS, {"numero": 2})) == [2]


def test_list_busca_matches_subject_description_requester_and_number(agent_client, organization):
    make_searchable_ticket(organization, subject="Impressora quebrada")
    make_searchable_ticket(organization, description="O MONITOR pisca")
    make_searchable_ticket(organization, name="Joana Monitora")
    make_searchable_ticket(organization, email="suporte@impressoras.test")

    assert numbers(agent_client.get(TICKETS, {"busca": "monitor"})) == [3, 2]
    assert numbers(agent_client.get(TICKETS, {"busca": "IMPRESSORA"})) == [4, 1]
    assert numbers(agent_client.get(TICKETS, {"busca": "2"})) == [2]


def test_list_filters_by_status_id(agent_client, organization, agent):
    waiting = status_of(organization, "aguardando")
    make_searchable_ticket(organization)
    moved = make_searchable_ticket(organization)
    ticket_update(ticket=moved, status=waiting)

    response = agent_client.get(TICKETS, {"status": str(waiting.pk)})

    assert numbers(response) == [2]
    assert response.json()["data"]["data"][0]["status"]["id"] == str(waiting.pk)
    assert numbers(agent_client.get(TICKETS, {"status": str(status_of(organization, "aberto").pk)})) == [1]


def test_list_filters_by_agent_id(agent_client, organization, agent, colleague):
    ticket_update(ticket=make_searchable_ticket(organization), assignee=agent)
    ticket_update(ticket=make_searchable_ticket(organization), assignee=colleague)
    make_searchable_ticket(organization)

    response = agent_client.get(TICKETS, {"atendente": str(colleague.pk)})

    assert numbers(response) == [2]
    assert response.json()["data"]["data"][0]["atendente"] == {"id": str(colleague.pk), "nome": "Carlos Colega"}
    assert numbers(agent_client.get(TICKETS, {"atendente": str(agent.pk)})) == [1]


def test_list_filters_combine_with_and(agent_client, organization, agent):
    ticket_update(ticket=make_searchable_ticket(organization, subject="Rede", priority="alta"), assignee=agent)
    make_searchable_ticket(organization, subject="Rede", priority="alta")
    ticket_update(ticket=make_searchable_ticket(organization, subject="Rede", priority="baixa"), assignee=agent)
    ticket_update(ticket=make_searchable_ticket(organization, subject="Email", priority="alta"), assignee=agent)

    response = agent_client.get(TICKETS, {"busca": "rede", "prioridade": "alta", "atendente": str(agent.pk)})

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
def test_list_with_an_invalid_query_is_a_validation_error(agent_client, organization, params, field):
    make_searchable_ticket(organization)

    assert_validation_error(agent_client.get(TICKETS, params), field)


def test_list_never_shows_another_organizations_tickets(agent_client, organization, other_organization, foreign_thread):
    own = make_searchable_ticket(organization, subject="Nosso")

    everything = agent_client.get(TICKETS)
    by_number = agent_client.get(TICKETS, {"numero": 1})
    by_search = agent_client.get(TICKETS, {"busca": "Globex"})

    assert [item["id"] for item in everything.json()["data"]["data"]] == [str(own.pk)]
    assert [item["id"] for item in by_number.json()["data"]["data"]] == [str(own.pk)]
    assert by_search.json()["data"]["total"] == 0
    for response in (everything, by_number, by_search):
        assert str(foreign_thread["ticket"].pk) not in response.content.decode()
        assert "Globex" not in response.content.decode()


def test_list_by_another_organizations_status_or_agent_is_empty(
    agent_client, organization, other_organization, foreign_thread
):
    make_searchable_ticket(organization)
    foreign_open = status_of(other_organization, "aberto")
    foreign_agent = foreign_thread["reply"].author_agent
    ticket_update(ticket=foreign_thread["ticket"], assignee=foreign_agent)

    by_status = agent_client.get(TICKETS, {"status": str(foreign_open.pk)})
    by_agent = agent_client.get(TICKETS, {"atendente": str(foreign_agent.pk)})

    assert numbers(by_status) == []
    assert numbers(by_agent) == []


# --- Detail ---------------------------------------------------------------------------


def test_detail_shows_internal_notes_marked_and_public_replies_unmarked(agent_client, thread, organization, agent):
    response = agent_client.get(f"{TICKETS}/{thread['ticket'].pk}")

    assert response.status_code == 200
    body = response.json()
    assert body == {"success": True, "message": "Ticket encontrado.", "data": body["data"], "errors": []}
    data = body["data"]
    assert set(data) == PANEL_TICKET_FIELDS
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


def test_detail_shows_the_assigned_agent(agent_client, thread, colleague):
    ticket_update(ticket=thread["ticket"], assignee=colleague)

    response = agent_client.get(f"{TICKETS}/{thread['ticket'].pk}")

    assert response.json()["data"]["atendente"] == {"id": str(colleague.pk), "nome": "Carlos Colega"}


@pytest.mark.parametrize("ticket_id", [str(uuid.uuid4()), "abc", "1"])
def test_detail_of_an_unknown_ticket_is_not_found(agent_client, thread, ticket_id):
    assert_ticket_not_found(agent_client.get(f"{TICKETS}/{ticket_id}"))


# --- Replies ------------------------------------------------------------------------------


def test_agent_public_reply_is_created_and_seen_by_the_partner(agent_client, partner, thread, agent):
    t = thread["ticket"]

    response = agent_client.post(
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


def test_agent_internal_note_is_hidden_from_the_partner(agent_client, partner, thread):
    t = thread["ticket"]

    response = agent_client.post(
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
    panel_view = agent_client.get(f"{TICKETS}/{t.pk}").json()["data"]["respostas"]
    assert panel_view[-1]["id"] == str(note.pk)
    assert panel_view[-1]["interna"] is True


def test_reply_without_interna_is_public(agent_client, thread):
    response = agent_client.post(f"{TICKETS}/{thread['ticket'].pk}/respostas", {"mensagem": "Pública"}, format="json")

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
def test_invalid_reply_is_refused_and_writes_nothing(agent_client, thread, body, field):
    before = ticket_state(thread["ticket"])

    response = agent_client.post(f"{TICKETS}/{thread['ticket'].pk}/respostas", body, format="json")

    assert_validation_error(response, field)
    assert ticket_state(thread["ticket"]) == before


def test_agent_edits_own_reply(agent_client, partner, thread):
    mine = thread["mine"]

    response = agent_client.patch(
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


def test_agent_edits_own_internal_note_which_stays_internal(agent_client, thread):
    note = thread["my_note"]

    response = agent_client.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{note.pk}", {"mensagem": "Nota revista"}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["data"]["interna"] is True
    assert response.json()["data"]["editado"] is True
    assert reply_state(note)[:3] == ("Nota revista", True, True)


@pytest.mark.parametrize("which", ["customer", "colleague", "colleague_note"])
def test_agent_cannot_edit_a_reply_that_is_not_theirs(agent_client, thread, which):
    reply = thread[which]
    before = reply_state(reply)

    response = agent_client.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{reply.pk}", {"mensagem": "Reescrito"}, format="json"
    )

    assert_error(response, 403, "Acesso negado.", "resposta")
    assert reply_state(reply) == before


@pytest.mark.parametrize("reply_id", [str(uuid.uuid4()), "abc"])
def test_editing_an_unknown_reply_is_not_found(agent_client, thread, reply_id):
    before = ticket_state(thread["ticket"])

    response = agent_client.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{reply_id}", {"mensagem": "x"}, format="json"
    )

    assert_reply_not_found(response)
    assert ticket_state(thread["ticket"]) == before


def test_editing_a_reply_of_another_ticket_of_the_same_organization_is_not_found(
    agent_client, thread, organization, agent
):
    elsewhere = make_agent_reply(make_searchable_ticket(organization), agent, body="Em outro ticket")
    before = reply_state(elsewhere)

    response = agent_client.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{elsewhere.pk}", {"mensagem": "x"}, format="json"
    )

    assert_reply_not_found(response)
    assert reply_state(elsewhere) == before


@pytest.mark.parametrize("body", [{}, {"mensagem": ""}, {"mensagem": 1}], ids=["missing", "blank", "number"])
def test_invalid_edit_is_refused_and_changes_nothing(agent_client, thread, body):
    mine = thread["mine"]
    before = reply_state(mine)

    response = agent_client.patch(f"{TICKETS}/{thread['ticket'].pk}/respostas/{mine.pk}", body, format="json")

    assert_validation_error(response, "mensagem")
    assert reply_state(mine) == before


# --- Ticket update ------------------------------------------------------------------------


def test_update_changes_status_assignee_and_priority(agent_client, thread, organization, colleague):
    t = thread["ticket"]
    in_progress = status_of(organization, "em_andamento")

    response = agent_client.patch(
        f"{TICKETS}/{t.pk}",
        {"status_id": str(in_progress.pk), "atendente_id": str(colleague.pk), "prioridade": "urgente"},
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body == {"success": True, "message": "Ticket atualizado.", "data": body["data"], "errors": []}
    data = body["data"]
    assert set(data) == PANEL_TICKET_FIELDS
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


def test_update_changes_only_the_given_fields(agent_client, thread, organization, agent):
    t = thread["ticket"]
    waiting = status_of(organization, "aguardando")
    ticket_update(ticket=t, status=waiting, assignee=agent)
    before = ticket_state(t)

    response = agent_client.patch(f"{TICKETS}/{t.pk}", {"prioridade": "baixa"}, format="json")

    assert response.status_code == 200
    after = ticket_state(t)
    assert after == {**before, "priority": "baixa", "updated_at": after["updated_at"]}


def test_moving_to_resolvido_sets_resolvido_em_and_leaving_clears_it(agent_client, partner, thread, organization):
    t = thread["ticket"]
    resolved = status_of(organization, "resolvido")
    started = timezone.now()

    response = agent_client.patch(f"{TICKETS}/{t.pk}", {"status_id": str(resolved.pk)}, format="json")

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

    reopened = agent_client.patch(
        f"{TICKETS}/{t.pk}", {"status_id": str(status_of(organization, "em_andamento").pk)}, format="json"
    )

    assert reopened.status_code == 200
    assert reopened.json()["data"]["resolvido_em"] is None
    t.refresh_from_db()
    assert t.resolved_at is None
    assert partner.get(f"{PARTNER_TICKETS}/{t.pk}").json()["data"]["resolvido_em"] is None


def test_setting_resolvido_again_keeps_the_first_resolution_time(agent_client, thread, organization):
    t = thread["ticket"]
    resolved = status_of(organization, "resolvido")
    first = agent_client.patch(f"{TICKETS}/{t.pk}", {"status_id": str(resolved.pk)}, format="json").json()

    again = agent_client.patch(f"{TICKETS}/{t.pk}", {"status_id": str(resolved.pk)}, format="json").json()

    assert again["data"]["resolvido_em"] == first["data"]["resolvido_em"]


def test_null_atendente_id_unassigns(agent_client, thread, agent):
    t = thread["ticket"]
    ticket_update(ticket=t, assignee=agent)

    response = agent_client.patch(f"{TICKETS}/{t.pk}", {"atendente_id": None}, format="json")

    assert response.status_code == 200
    assert response.json()["data"]["atendente"] is None
    assert ticket_state(t)["assignee_id"] is None


def test_update_without_atendente_id_keeps_the_assignee(agent_client, thread, agent, organization):
    t = thread["ticket"]
    ticket_update(ticket=t, assignee=agent)

    response = agent_client.patch(
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
def test_invalid_ticket_update_is_refused_and_changes_nothing(agent_client, thread, body, field):
    before = ticket_state(thread["ticket"])

    response = agent_client.patch(f"{TICKETS}/{thread['ticket'].pk}", body, format="json")

    assert_validation_error(response, field)
    assert ticket_state(thread["ticket"]) == before


def test_unknown_status_id_is_not_found_and_changes_nothing(agent_client, thread):
    before = ticket_state(thread["ticket"])

    response = agent_client.patch(
        f"{TICKETS}/{thread['ticket'].pk}", {"status_id": str(uuid.uuid4()), "prioridade": "urgente"}, format="json"
    )

    assert_error(response, 404, "Status não encontrado.", "status_id")
    assert ticket_state(thread["ticket"]) == before


def test_unknown_atendente_id_is_not_found_and_changes_nothing(agent_client, thread):
    before = ticket_state(thread["ticket"])

    response = agent_client.patch(
        f"{TICKETS}/{thread['ticket'].pk}", {"atendente_id": str(uuid.uuid4()), "prioridade": "urgente"}, format="json"
    )

    assert_error(response, 404, "Atendente não encontrado.", "atendente_id")
    assert ticket_state(thread["ticket"]) == before


# --- Statuses --------------------------------------------------------------------------------


def test_status_list_has_the_five_default_statuses(agent_client, organization, other_organization):
    response = agent_client.get(STATUSES)

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


def test_a_deactivated_agents_tokens_stop_working_at_once(agent_client, thread, organization, agent):
    # Offboarding: deactivating the agent deactivates its user, so its token is refused (not just its role).
    agent_set_active(agent=agent, is_active=False)
    before = ticket_state(thread["ticket"])

    for method, path, body in panel_requests(thread["ticket"], thread["mine"], status_of(organization, "fechado").pk):
        response = getattr(agent_client, method)(path, body, format="json")
        assert_error(response, 401, "Não autenticado.", "token")

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


def test_another_organizations_ticket_is_not_found_everywhere(
    agent_client, foreign_thread, other_organization, organization
):
    t = foreign_thread["ticket"]
    before = ticket_state(t)

    responses = [
        agent_client.get(f"{TICKETS}/{t.pk}"),
        agent_client.patch(
            f"{TICKETS}/{t.pk}",
            {"status_id": str(status_of(organization, "resolvido").pk), "prioridade": "urgente"},
            format="json",
        ),
        agent_client.patch(
            f"{TICKETS}/{t.pk}",
            {"status_id": str(status_of(other_organization, "resolvido").pk), "atendente_id": None},
            format="json",
        ),
        agent_client.post(f"{TICKETS}/{t.pk}/respostas", {"mensagem": "Invasão", "interna": True}, format="json"),
        agent_client.patch(
            f"{TICKETS}/{t.pk}/respostas/{foreign_thread['reply'].pk}", {"mensagem": "Invasão"}, format="json"
        ),
    ]

    for response in responses:
        assert_ticket_not_found(response)
        assert "Globex" not in response.content.decode()
    assert ticket_state(t) == before
    assert not Reply.objects.filter(body="Invasão").exists()


def test_another_organizations_ticket_answers_like_a_missing_one(agent_client, foreign_thread):
    assert (
        agent_client.get(f"{TICKETS}/{foreign_thread['ticket'].pk}").json()
        == agent_client.get(f"{TICKETS}/{uuid.uuid4()}").json()
    )


@pytest.mark.parametrize("which", ["reply", "note", "customer"])
def test_another_organizations_reply_on_own_ticket_is_not_found(agent_client, thread, foreign_thread, which):
    reply = foreign_thread[which]
    before = reply_state(reply)
    own_before = ticket_state(thread["ticket"])

    response = agent_client.patch(
        f"{TICKETS}/{thread['ticket'].pk}/respostas/{reply.pk}", {"mensagem": "Invasão"}, format="json"
    )

    assert_reply_not_found(response)
    assert reply_state(reply) == before
    assert ticket_state(thread["ticket"]) == own_before


def test_another_organizations_status_id_is_not_found(
    agent_client, thread, foreign_thread, other_organization, colleague
):
    before = ticket_state(thread["ticket"])
    foreign_before = ticket_state(foreign_thread["ticket"])

    response = agent_client.patch(
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
    assert ticket_state(foreign_thread["ticket"]) == foreign_before


def test_another_organizations_agent_id_is_not_found(agent_client, thread, foreign_thread, organization, other_agent):
    before = ticket_state(thread["ticket"])
    foreign_before = ticket_state(foreign_thread["ticket"])

    response = agent_client.patch(
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
    assert ticket_state(foreign_thread["ticket"]) == foreign_before
