"""`GET/PUT /api/sla` (panel, api_publica:gerenciar): the organization's SLA policies through the HTTP client, the
envelope and every 422 exactly, each writing nothing."""

import json
import re
from pathlib import Path

import pytest

from helpdesk.models import AuditRecord
from sla.models import SlaPolicies
from sla.policies import Policy
from sla.selectors import sla_policies
from tests.assertions import assert_error, assert_exact_validation_error, assert_success

URL = "/api/sla"
MINUTES = "Informe um número inteiro de minutos, de 1 a 525600, ou null."
PRIORITY = "Prioridade desconhecida: use baixa, media, alta, urgente ou null (sem prioridade)."


def policy(prioridade, primeira_resposta=None, proxima_resposta=None, resolucao=None) -> dict:
    return {
        "prioridade": prioridade,
        "primeira_resposta": primeira_resposta,
        "proxima_resposta": proxima_resposta,
        "resolucao": resolucao,
    }


def put(client, payload):
    return client.put(URL, payload, format="json")


def test_without_policies_the_answer_is_an_empty_list(manager):
    assert assert_success(manager.get(URL), 200, "Políticas de SLA encontradas.") == {"politicas": []}


def test_policies_are_replaced_whole_and_read_back_in_priority_order(manager, organization):
    payload = {
        "politicas": [
            policy(None, resolucao=4800),
            {"prioridade": "urgente", "primeira_resposta": 30, "proxima_resposta": 60, "resolucao": 240},
            {"prioridade": "baixa", "resolucao": 2400, "organizacao": "ignorada"},
            policy("media", 240, 480, 1440),
        ],
        "organizacao": "ignorada",
    }
    expected = {
        "politicas": [
            policy("baixa", resolucao=2400),
            policy("media", 240, 480, 1440),
            policy("urgente", 30, 60, 240),
            policy(None, resolucao=4800),
        ]
    }

    assert assert_success(put(manager, payload), 200, "Políticas de SLA atualizadas.") == expected
    assert assert_success(manager.get(URL), 200, "Políticas de SLA encontradas.") == expected
    assert sla_policies(organization.pk).policy_for("urgente") == Policy("urgente", 30, 60, 240)
    record = AuditRecord.objects.get(action="sla.politicas_alteradas")
    assert (record.organization_id, record.actor_type) == (organization.pk, AuditRecord.ACTOR_USER)
    assert record.changes == {"politicas": {"antes": [], "depois": expected["politicas"]}}


def test_a_put_replaces_the_previous_set_and_an_empty_list_clears_it(manager):
    put(manager, {"politicas": [policy("alta", 60), policy("baixa", 480)]})

    answer = assert_success(put(manager, {"politicas": [policy("media", 120)]}), 200, "Políticas de SLA atualizadas.")
    assert answer == {"politicas": [policy("media", 120)]}
    assert assert_success(put(manager, {"politicas": []}), 200, "Políticas de SLA atualizadas.") == {"politicas": []}
    assert assert_success(manager.get(URL), 200, "Políticas de SLA encontradas.") == {"politicas": []}


def test_the_set_already_kept_writes_and_records_nothing(manager):
    put(manager, {"politicas": [policy("alta", 60), policy(None, 90)]})
    updated_at = SlaPolicies.objects.get().updated_at

    response = put(manager, {"politicas": [policy(None, 90), {"prioridade": "alta", "primeira_resposta": 60}]})

    assert assert_success(response, 200, "Políticas de SLA atualizadas.") == {
        "politicas": [policy("alta", 60), policy(None, 90)]
    }
    assert SlaPolicies.objects.get().updated_at == updated_at
    assert AuditRecord.objects.filter(action="sla.politicas_alteradas").count() == 1


def refused(manager, payload, errors: dict) -> None:
    assert_exact_validation_error(put(manager, payload), errors)
    assert not SlaPolicies.objects.exists()
    assert not AuditRecord.objects.filter(action="sla.politicas_alteradas").exists()


def test_a_repeated_priority_is_a_422_naming_the_first(manager):
    politicas = [policy(None, 60), policy("alta", 30), policy(None, 120)]

    refused(
        manager, {"politicas": politicas}, {"politicas.2.prioridade": ["Prioridade repetida: já está em politicas.0."]}
    )


@pytest.mark.parametrize("prioridade", ["critica", "Alta", "", 1, True, "null"])
def test_an_unknown_priority_is_a_422_with_the_accepted_values(manager, prioridade):
    refused(manager, {"politicas": [policy(prioridade, 60)]}, {"politicas.0.prioridade": [PRIORITY]})


def test_prioridade_is_required_in_each_policy(manager):
    refused(manager, {"politicas": [{"resolucao": 60}]}, {"politicas.0.prioridade": ["Este campo é obrigatório."]})


@pytest.mark.parametrize("minutes", ["30", 30.0, 30.5, True, False, 0, -1, 525_601, [30], {"minutos": 30}])
def test_minutes_are_whole_numbers_from_1_to_525600(manager, minutes):
    refused(
        manager,
        {"politicas": [policy("baixa", 60), policy("alta", 60, 60, minutes)]},
        {"politicas.1.resolucao": [MINUTES]},
    )


def test_a_policy_without_any_target_is_a_422_on_the_policy(manager):
    refused(
        manager,
        {"politicas": [policy("baixa", 60), {"prioridade": "alta"}]},
        {"politicas.1": ["Informe ao menos um prazo: primeira_resposta, proxima_resposta ou resolucao."]},
    )


def test_politicas_is_required_and_a_list_of_objects(manager):
    refused(manager, {}, {"politicas": ["Este campo é obrigatório."]})
    refused(manager, {"politicas": None}, {"politicas": ["Este campo não pode ser nulo."]})
    refused(
        manager,
        {"politicas": {"prioridade": "alta"}},
        {"politicas": ['Esperava uma lista de itens, mas recebeu tipo "dict".']},
    )
    refused(
        manager, {"politicas": ["alta"]}, {"politicas.0": ["Dado inválido. Esperava um dicionário, mas recebeu str."]}
    )


def test_more_than_five_policies_are_a_422(manager):
    politicas = [policy(p, 60) for p in ("baixa", "media", "alta", "urgente", None)]

    refused(
        manager,
        {"politicas": [*politicas, policy("alta", 30)]},
        {"politicas": ["Informe no máximo 5 políticas, uma por prioridade."]},
    )
    assert_success(put(manager, {"politicas": politicas}), 200, "Políticas de SLA atualizadas.")


def test_a_list_far_too_long_is_refused_for_its_length_alone(manager):
    """Its items are not looked at (DRF would check each one and answer an error per item)."""
    refused(
        manager, {"politicas": ["alta"] * 20_000}, {"politicas": ["Informe no máximo 5 políticas, uma por prioridade."]}
    )


def test_a_body_that_is_not_an_object_is_a_400(manager):
    response = put(manager, [policy("alta", 60)])

    assert_error(response, 400, "JSON inválido.", "body")
    assert not SlaPolicies.objects.exists()


DOCS = Path(__file__).resolve().parents[2] / "docs" / "sla.md"


def test_the_example_of_docs_sla_md_answers_as_documented(manager):
    text = DOCS.read_text()
    request = re.search(r"```http\nPUT /api/sla\n.*?\n\n(.*?)```", text, re.S).group(1)
    answer = re.search(r"```json\n(.*?)```", text[text.index("PUT /api/sla") :], re.S).group(1)

    data = assert_success(put(manager, json.loads(request)), 200, "Políticas de SLA atualizadas.")

    assert data == json.loads(answer)
