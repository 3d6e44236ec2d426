"""Merging duplicates through the APIs (issue 24): the panel's POST /api/tickets/{id}/mesclar, and what partners see
of a merged ticket (GET with `incluir=mesclagem`, the 409 on a reply, the create's idempotency, the change list)."""

import pytest

from helpdesk.actors import SYSTEM
from tests.assertions import (
    assert_error,
    assert_exact_validation_error,
    assert_success,
    assert_ticket_not_found,
    organization_snapshot,
)
from tests.factories import make_customer_reply, make_ticket
from tickets.merging import tickets_merge
from tickets.models import Reply, StatusCategory, Ticket

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def _merge(client, target, sources):
    return client.post(
        f"/api/tickets/{target.pk}/mesclar", {"origens": [str(source.pk) for source in sources]}, format="json"
    )


# --- the panel --------------------------------------------------------------------------------------------------


def test_the_panel_merges_and_answers_the_target_with_the_whole_thread(agent_client, organization):
    target = make_ticket(organization, description="Primeira vez")
    source = make_ticket(organization, description="De novo")
    make_customer_reply(source, body="Ainda sem solução")

    data = assert_success(_merge(agent_client, target, [source]), 200, "Tickets mesclados.")

    assert data["id"] == str(target.pk)
    assert [(reply["mensagem"], reply["interna"]) for reply in data["respostas"]] == [
        ("De novo", False),
        ("Ainda sem solução", False),
        (f"Mesclados neste ticket: #{source.number}.", True),
    ]
    source = Ticket.objects.select_related("status").get(pk=source.pk)
    assert (source.merged_into_id, source.status.category) == (target.pk, StatusCategory.CLOSED)


def test_another_organizations_ids_answer_like_missing_ones_and_merge_nothing(
    agent_client, organization, other_organization
):
    mine, also_mine = make_ticket(organization), make_ticket(organization)
    theirs, also_theirs = make_ticket(other_organization), make_ticket(other_organization)
    before = (organization_snapshot(organization), organization_snapshot(other_organization))

    as_target = _merge(agent_client, theirs, [mine])
    as_source = _merge(agent_client, mine, [also_mine, theirs])
    missing = agent_client.post(
        f"/api/tickets/{mine.pk}/mesclar", {"origens": ["8a3f3c58-1d2b-4f7e-8e55-0b6a3c1c9d10"]}, format="json"
    )

    assert_ticket_not_found(as_target)
    assert_error(as_source, 404, "Ticket não encontrado.", "origens")
    assert_error(missing, 404, "Ticket não encontrado.", "origens")
    # The same sentence shape for both: nothing tells another organization's ticket from a missing one.
    assert as_source.json()["errors"]["message"] == f"Ticket inexistente nesta organização: {theirs.pk}."
    assert (organization_snapshot(organization), organization_snapshot(other_organization)) == before
    assert also_theirs.merged_into_id is None


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({}, {"origens": ["Este campo é obrigatório."]}),
        ({"origens": []}, {"origens": ["Certifique-se de que este campo tenha pelo menos 1 elementos."]}),
        ({"origens": "abc"}, {"origens": ['Esperava uma lista de itens, mas recebeu tipo "str".']}),
        ({"origens": [7]}, {"origens.0": ["Deve ser um UUID válido."]}),
    ],
)
def test_bad_input_is_a_422_in_the_envelope(agent_client, organization, body, errors):
    target = make_ticket(organization)
    before = organization_snapshot(organization)

    response = agent_client.post(f"/api/tickets/{target.pk}/mesclar", body, format="json")

    assert_exact_validation_error(response, errors)
    assert organization_snapshot(organization) == before


def test_the_target_among_the_sources_or_twenty_one_tickets_is_a_422(agent_client, organization):
    tickets = [make_ticket(organization) for _ in range(21)]
    before = organization_snapshot(organization)

    itself = _merge(agent_client, tickets[0], [tickets[1], tickets[0]])
    too_many = _merge(agent_client, tickets[0], tickets[1:])

    assert_exact_validation_error(itself, {"origens": ["O ticket de destino não pode estar entre as origens."]})
    assert_exact_validation_error(
        too_many, {"origens": ["Certifique-se de que este campo não tenha mais que 19 elementos."]}
    )
    assert organization_snapshot(organization) == before


def test_a_ticket_already_merged_is_a_409_and_nothing_changes(agent_client, organization):
    a, b, c = (make_ticket(organization) for _ in range(3))
    tickets_merge(target=a, sources=[b], actor=SYSTEM)
    before = organization_snapshot(organization)

    response = _merge(agent_client, c, [b])

    assert_error(response, 409, "Ticket mesclado.", "origens")
    assert response.json()["errors"]["message"] == f"O ticket #{b.number} já foi mesclado no ticket #{a.number}."
    assert organization_snapshot(organization) == before


# --- what partners see ------------------------------------------------------------------------------------------


@pytest.fixture
def merged(organization):
    """A partner's ticket (external_id `pedido-9`) merged into another one."""
    target = make_ticket(organization, external_id="pedido-1")
    source = make_ticket(organization, external_id="pedido-9", description="Duplicado")
    make_customer_reply(source, body="Oi?")
    tickets_merge(target=target, sources=[source], actor=SYSTEM)
    return target, source


def test_a_merged_ticket_still_answers_closed_without_its_replies(partner, merged):
    target, source = merged

    data = assert_success(partner.get(f"/api/v1/tickets/{source.pk}"), 200, "Ticket encontrado.")

    assert data["status"]["categoria"] == "fechado"
    assert data["respostas"] == []  # its thread is the target's now (internal notes never show)
    assert "mesclado_em" not in data  # only when asked for


def test_incluir_mesclagem_names_the_target_and_null_for_a_ticket_not_merged(partner, merged):
    target, source = merged

    read = partner.get(f"/api/v1/tickets/{source.pk}", {"incluir": "mesclagem"})
    one = assert_success(read, 200, "Ticket encontrado.")
    listed = assert_success(partner.get("/api/v1/tickets", {"incluir": "mesclagem"}), 200, "Tickets listados.")

    assert one["mesclado_em"] == {"id": str(target.pk), "numero": target.number}
    assert {ticket["numero"]: ticket["mesclado_em"] for ticket in listed["data"]} == {
        target.number: None,
        source.number: {"id": str(target.pk), "numero": target.number},
    }
    target_thread = assert_success(partner.get(f"/api/v1/tickets/{target.pk}"), 200, "Ticket encontrado.")["respostas"]
    assert [(reply["mensagem"], reply["origem"]) for reply in target_thread] == [
        ("Duplicado", "cliente_api"),
        ("Oi?", "cliente_api"),
    ]


def test_a_customer_reply_to_a_merged_ticket_is_a_409_naming_the_target(partner, merged, organization):
    target, source = merged
    replies = Reply.objects.count()

    response = partner.post(f"/api/v1/tickets/{source.pk}/respostas", {"mensagem": "Alguém?"}, format="json")

    assert_error(response, 409, "Ticket mesclado.", "id")
    assert response.json()["errors"]["message"] == (
        f"Este ticket foi mesclado no ticket #{target.number} (id {target.pk}); responda nele."
    )
    assert Reply.objects.count() == replies


def test_a_create_with_a_merged_tickets_external_id_answers_the_target(partner, merged):
    target, _source = merged
    tickets = Ticket.objects.count()

    response = partner.post(
        "/api/v1/tickets",
        {"assunto": "De novo", "descricao": "Repetido", "external_id": "pedido-9", "solicitante": {"nome": "Ana"}},
        format="json",
    )

    data = assert_success(response, 200, "Ticket já existente para este external_id.")
    assert (data["id"], data["external_id"]) == (str(target.pk), "pedido-1")
    assert Ticket.objects.count() == tickets


def test_both_tickets_move_in_the_change_list(partner, organization):
    target, source, untouched = (make_ticket(organization) for _ in range(3))
    first = assert_success(partner.get("/api/v1/tickets/alteracoes"), 200, "Alterações listadas.")

    tickets_merge(target=target, sources=[source], actor=SYSTEM)
    after = partner.get("/api/v1/tickets/alteracoes", {"desde": first["proximo_cursor"], "incluir": "mesclagem"})

    changed = assert_success(after, 200, "Alterações listadas.")["itens"]
    assert {ticket["numero"]: ticket["mesclado_em"] for ticket in changed} == {
        target.number: None,
        source.number: {"id": str(target.pk), "numero": target.number},
    }
    assert untouched.number not in {ticket["numero"] for ticket in changed}
