"""Tags on tickets through the partner API (issue 22): `tags` on create, PATCH /api/v1/tickets/{id}/tags, the
`tags` block of `incluir`, and `?tag=` on the list."""

import json
import uuid

import pytest

from helpdesk.models import AuditRecord
from integrations.models import IdempotencyRecord, WebhookDelivery, WebhookEvent
from integrations.services import credential_create
from tests.assertions import assert_exact_validation_error, assert_success, assert_ticket_not_found
from tests.contract import TICKET_BODY
from tests.factories import make_ticket, make_webhook
from tickets.models import Ticket
from tickets.services import TagsChange, ticket_update

TICKETS = "/api/v1/tickets"
TOO_LONG = "x" * 51


def tags_url(ticket_id) -> str:
    return f"{TICKETS}/{ticket_id}/tags"


def invalid(given: str) -> str:
    return f"Tag inválida: {json.dumps(given, ensure_ascii=False)} (de 1 a 50 caracteres depois de normalizada)."


def stored(ticket: Ticket) -> dict:
    return Ticket.objects.filter(pk=ticket.pk).values().get()


@pytest.fixture
def ticket(organization):
    return make_ticket(organization, external_id="pedido-1")


def with_tags(ticket: Ticket, *tags: str) -> Ticket:
    return ticket_update(ticket=ticket, tags_add=list(tags))


# --- normalisation --------------------------------------------------------------------------------


def test_tags_are_trimmed_case_folded_inner_spaces_collapsed_to_one_dash_unique_and_sorted(partner, ticket):
    body = {"adicionar": ["  Cliente   VIP ", "URGENTE", "urgente", "Straße", "cliente\tvip"]}

    data = assert_success(partner.patch(tags_url(ticket.pk), body, format="json"), 200, "Tags atualizadas.")

    assert data == {"tags": ["cliente-vip", "strasse", "urgente"]}
    assert Ticket.objects.get(pk=ticket.pk).tags == ["cliente-vip", "strasse", "urgente"]


def test_a_tag_of_fifty_characters_after_normalisation_is_accepted_and_fifty_one_is_refused(partner, ticket):
    fifty = "  " + "A" * 50 + "  "

    assert_success(partner.patch(tags_url(ticket.pk), {"adicionar": [fifty]}, format="json"), 200, "Tags atualizadas.")
    response = partner.patch(tags_url(ticket.pk), {"adicionar": [TOO_LONG]}, format="json")

    assert_exact_validation_error(response, {"adicionar": [invalid(TOO_LONG)]})
    assert Ticket.objects.get(pk=ticket.pk).tags == ["a" * 50]


def test_every_refused_tag_is_named_in_the_order_given(partner, ticket):
    before = stored(ticket)
    body = {"adicionar": ["ok", "   ", 5, "a\x00b", TOO_LONG], "remover": [None]}

    response = partner.patch(tags_url(ticket.pk), body, format="json")

    assert_exact_validation_error(
        response,
        {
            "adicionar": [
                invalid("   "),
                "Tag inválida: 5 (uma tag é um texto).",
                'Tag inválida: "a\\u0000b" (sem o caractere NUL nem surrogates UTF-16 isolados).',
                invalid(TOO_LONG),
            ],
            "remover": ["Tag inválida: null (uma tag é um texto)."],
        },
    )
    assert stored(ticket) == before


def test_a_refused_tag_is_named_cut_at_sixty_characters(partner, ticket):
    given = "y" * 200

    response = partner.patch(tags_url(ticket.pk), {"adicionar": [given]}, format="json")

    named = json.dumps("y" * 60 + "…", ensure_ascii=False)
    assert_exact_validation_error(
        response, {"adicionar": [f"Tag inválida: {named} (de 1 a 50 caracteres depois de normalizada)."]}
    )


# --- PATCH /api/v1/tickets/{id}/tags --------------------------------------------------------------


def test_adding_and_removing_at_once_answers_the_tags_sorted_and_moves_atualizado_em(partner, ticket):
    with_tags(ticket, "b", "velha")
    before = Ticket.objects.get(pk=ticket.pk)

    response = partner.patch(tags_url(ticket.pk), {"adicionar": ["c", "a"], "remover": ["velha"]}, format="json")

    assert response.json() == {
        "success": True,
        "message": "Tags atualizadas.",
        "data": {"tags": ["a", "b", "c"]},
        "errors": [],
    }
    after = Ticket.objects.get(pk=ticket.pk)
    assert after.updated_at > before.updated_at
    assert (after.change_tx, after.change_seq) > (before.change_tx, before.change_seq)


def test_removing_a_tag_the_ticket_lacks_is_not_an_error(partner, ticket):
    with_tags(ticket, "a")

    data = assert_success(
        partner.patch(tags_url(ticket.pk), {"remover": ["zzz"]}, format="json"), 200, "Tags atualizadas."
    )

    assert data == {"tags": ["a"]}


def test_a_change_that_changes_nothing_writes_nothing_moves_nothing_and_records_nothing(partner, ticket):
    with_tags(ticket, "a")
    before = stored(ticket)
    audits = AuditRecord.objects.count()

    for body in ({"adicionar": ["A "]}, {"remover": ["b"]}, {"adicionar": [], "remover": []}):
        data = assert_success(partner.patch(tags_url(ticket.pk), body, format="json"), 200, "Tags atualizadas.")
        assert data == {"tags": ["a"]}

    assert stored(ticket) == before
    assert AuditRecord.objects.count() == audits


@pytest.mark.parametrize("body", [{}, {"outra": ["a"]}])
def test_neither_adicionar_nor_remover_is_a_422_on_body(partner, ticket, body):
    response = partner.patch(tags_url(ticket.pk), body, format="json")

    assert_exact_validation_error(response, {"body": ["Informe adicionar, remover ou os dois."]})


def test_a_tag_both_added_and_removed_is_a_422_on_remover_naming_it(partner, ticket):
    before = stored(ticket)

    response = partner.patch(tags_url(ticket.pk), {"adicionar": ["VIP", "a"], "remover": ["vip"]}, format="json")

    assert_exact_validation_error(response, {"remover": ['Tag em adicionar e em remover ao mesmo tempo: "vip".']})
    assert stored(ticket) == before


@pytest.mark.parametrize("value", ["vip", {"a": 1}, 3])
def test_a_list_that_is_not_a_list_is_a_422(partner, ticket, value):
    response = partner.patch(tags_url(ticket.pk), {"remover": value}, format="json")

    assert_exact_validation_error(response, {"remover": ["Informe uma lista de tags."]})


def test_more_than_twenty_tags_on_the_ticket_is_a_422_saying_the_limit_and_nothing_changes(partner, ticket):
    with_tags(ticket, *[f"t{n:02}" for n in range(18)])
    before = stored(ticket)

    response = partner.patch(tags_url(ticket.pk), {"adicionar": ["x", "y", "z"]}, format="json")

    assert_exact_validation_error(response, {"tags": ["Um ticket tem no máximo 20 tags."]})
    assert stored(ticket) == before
    # Removing makes room in the same request: what counts is what the ticket ends up with.
    body = {"adicionar": ["x", "y", "z"], "remover": ["t00"]}
    data = assert_success(partner.patch(tags_url(ticket.pk), body, format="json"), 200, "Tags atualizadas.")
    assert len(data["tags"]) == 20


def test_another_organizations_ticket_or_a_malformed_id_is_the_404_even_with_a_bad_body(
    partner, other_organization, ticket
):
    theirs = make_ticket(other_organization)
    before = stored(theirs)

    for ticket_id in (theirs.pk, uuid.uuid4(), "abc"):
        for body in ({"adicionar": ["a"]}, {}):
            assert_ticket_not_found(partner.patch(tags_url(ticket_id), body, format="json"))

    assert stored(theirs) == before


def test_the_partners_change_emits_no_event_and_is_audited_with_its_key(partner, organization, ticket, example_dns):
    make_webhook(organization, events=["ticket.tags_alteradas"])

    partner.patch(tags_url(ticket.pk), {"adicionar": ["vip"]}, format="json")

    assert WebhookEvent.objects.count() == 0
    assert WebhookDelivery.objects.count() == 0
    record = AuditRecord.objects.get(action="ticket.tags_alteradas")
    assert (record.resource_type, record.resource_id) == ("ticket", str(ticket.pk))
    assert record.actor_type == AuditRecord.ACTOR_CREDENTIAL
    assert record.changes == {"tags": {"antes": [], "depois": ["vip"]}}


def test_an_idempotency_key_replays_the_first_answer(partner, ticket):
    headers = {"HTTP_IDEMPOTENCY_KEY": "tags-1"}
    first = partner.patch(tags_url(ticket.pk), {"adicionar": ["a"]}, format="json", **headers)
    ticket_update(ticket=ticket, tags_add=["b"])

    again = partner.patch(tags_url(ticket.pk), {"adicionar": ["a"]}, format="json", **headers)
    other = partner.patch(tags_url(ticket.pk), {"adicionar": ["c"]}, format="json", **headers)

    assert assert_success(first, 200, "Tags atualizadas.") == {"tags": ["a"]}
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert_exact_validation_error(other, {"Idempotency-Key": ["Esta chave já foi usada com outra requisição."]})
    assert IdempotencyRecord.objects.count() == 1
    assert Ticket.objects.get(pk=ticket.pk).tags == ["a", "b"]


def test_a_key_without_tickets_escrever_is_refused_before_anything(organization, ticket, client):
    key = credential_create(organization=organization, name="Leitura", scopes=["tickets:ler"])[1]

    response = client.patch(
        tags_url(ticket.pk), {"adicionar": ["a"]}, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )

    assert response.status_code == 403
    assert response.json()["errors"]["field"] == "escopo"
    assert Ticket.objects.get(pk=ticket.pk).tags == []


# --- POST /api/v1/tickets with tags --------------------------------------------------------------


def test_a_ticket_is_created_with_its_tags_normalised(partner):
    response = partner.post(
        f"{TICKETS}?incluir=tags", {**TICKET_BODY, "tags": ["Loja Centro", "VIP", "vip"]}, format="json"
    )

    data = assert_success(response, 201, "Ticket criado.")
    assert data["tags"] == ["loja-centro", "vip"]
    assert Ticket.objects.get(pk=data["id"]).tags == ["loja-centro", "vip"]


def test_a_ticket_created_without_tags_has_none_and_its_answer_is_the_contracts(partner):
    data = assert_success(partner.post(TICKETS, TICKET_BODY, format="json"), 201, "Ticket criado.")

    assert "tags" not in data
    assert Ticket.objects.get(pk=data["id"]).tags == []


def test_a_create_with_a_bad_tag_or_too_many_creates_nothing(partner):
    too_many = [f"t{n}" for n in range(21)]

    bad = partner.post(TICKETS, {**TICKET_BODY, "tags": ["ok", ""]}, format="json")
    many = partner.post(TICKETS, {**TICKET_BODY, "tags": too_many}, format="json")
    not_a_list = partner.post(TICKETS, {**TICKET_BODY, "tags": "vip"}, format="json")

    assert_exact_validation_error(bad, {"tags": [invalid("")]})
    assert_exact_validation_error(many, {"tags": ["Um ticket tem no máximo 20 tags."]})
    assert_exact_validation_error(not_a_list, {"tags": ["Informe uma lista de tags."]})
    assert Ticket.objects.count() == 0


def test_twenty_duplicates_and_twenty_distinct_tags_are_accepted_on_create(partner):
    body = {**TICKET_BODY, "tags": [f"t{n:02}" for n in range(20)] + ["T00"] * 5}

    data = assert_success(partner.post(f"{TICKETS}?incluir=tags", body, format="json"), 201, "Ticket criado.")

    assert len(data["tags"]) == 20


def test_a_known_external_id_returns_the_existing_ticket_with_its_own_tags(partner, ticket):
    with_tags(ticket, "antiga")

    body = {**TICKET_BODY, "external_id": "pedido-1", "tags": ["nova"]}
    data = assert_success(
        partner.post(f"{TICKETS}?incluir=tags", body, format="json"), 200, "Ticket já existente para este external_id."
    )

    assert data["tags"] == ["antiga"]


# --- the block and the filter ---------------------------------------------------------------------


def test_the_tags_block_is_on_the_read_the_list_and_the_change_list(partner, ticket):
    with_tags(ticket, "b", "a")

    read = assert_success(partner.get(f"{TICKETS}/{ticket.pk}", {"incluir": "tags"}), 200, "Ticket encontrado.")
    listed = assert_success(partner.get(TICKETS, {"incluir": "atendente,tags"}), 200, "Tickets listados.")
    changes = assert_success(partner.get(f"{TICKETS}/alteracoes", {"incluir": "tags"}), 200, "Alterações listadas.")

    assert read["tags"] == ["a", "b"]
    assert list(read)[-1] == "tags"
    assert list(listed["data"][0])[-2:] == ["atendente", "tags"]
    assert listed["data"][0]["tags"] == ["a", "b"]
    assert changes["itens"][0]["tags"] == ["a", "b"]


def test_a_ticket_without_tags_shows_an_empty_list(partner, ticket):
    read = assert_success(partner.get(f"{TICKETS}/{ticket.pk}", {"incluir": "tags"}), 200, "Ticket encontrado.")

    assert read["tags"] == []


def test_the_list_filters_by_every_tag_asked_normalised(partner, organization):
    first = with_tags(make_ticket(organization), "vip", "loja-centro")
    second = with_tags(make_ticket(organization), "vip")
    make_ticket(organization)

    def ids(*tags):
        data = assert_success(partner.get(TICKETS, {"tag": list(tags)}), 200, "Tickets listados.")
        return data["total"], [item["id"] for item in data["data"]]

    assert ids("VIP") == (2, [str(second.pk), str(first.pk)])
    assert ids("vip", " Loja  Centro ") == (1, [str(first.pk)])
    assert ids("vip", "outra") == (0, [])
    assert ids("") == (3, ids()[1])


def test_the_filter_works_in_cursor_mode_and_beside_other_filters(partner, organization):
    first = with_tags(make_ticket(organization, priority="alta"), "vip")
    with_tags(make_ticket(organization, priority="baixa"), "vip")

    data = assert_success(
        partner.get(TICKETS, {"tag": "vip", "prioridade": "alta", "cursor": ""}), 200, "Tickets listados."
    )

    assert (data["total"], [item["id"] for item in data["data"]], data["proximo_cursor"]) == (1, [str(first.pk)], None)


def test_a_bad_tag_in_the_filter_is_a_422_naming_it(partner):
    response = partner.get(TICKETS, {"tag": ["ok", TOO_LONG]})

    assert_exact_validation_error(response, {"tag": [invalid(TOO_LONG)]})


def test_another_organizations_tags_never_match(partner, organization, other_organization):
    with_tags(make_ticket(other_organization), "vip")

    data = assert_success(partner.get(TICKETS, {"tag": "vip"}), 200, "Tickets listados.")

    assert (data["total"], data["data"]) == (0, [])


def test_the_panel_list_filters_by_tag_too(manager, organization):
    tagged = with_tags(make_ticket(organization), "vip")
    make_ticket(organization)

    data = assert_success(manager.get("/api/tickets", {"tag": "VIP"}), 200, "Tickets listados.")

    assert [item["id"] for item in data["data"]] == [str(tagged.pk)]
    assert data["data"][0]["tags"] == ["vip"]


def test_tags_change_is_a_service_rule_for_every_caller(ticket):
    """The admin's form and the panel call the same rule: normalised, 422 on the fields named."""
    change = TagsChange.of([" A b "], ["C"], fields=("tags.adicionar", "tags.remover"))

    assert (change.add, change.remove) == (("a-b",), ("c",))


def test_a_method_the_route_does_not_serve_is_a_405_even_with_a_used_idempotency_key(partner, ticket):
    """Found by the contract fuzzing: the key was claimed before the 405, which then answered a 422."""
    headers = {"HTTP_IDEMPOTENCY_KEY": "usada"}
    assert partner.patch(tags_url(ticket.pk), {"adicionar": ["a"]}, format="json", **headers).status_code == 200

    response = partner.post(tags_url(ticket.pk), {"adicionar": []}, format="json", **headers)

    assert response.status_code == 405
    assert response["Allow"] == "PATCH"
    assert IdempotencyRecord.objects.count() == 1
