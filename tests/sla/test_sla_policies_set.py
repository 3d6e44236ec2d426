"""sla.services.sla_policies_set: the policy set replaced whole, its 422s (sla.rules), its audit record, the cached
set dropped, and policy_for."""

import pytest

from foundation.exceptions import ValidationFailed
from helpdesk.models import AuditRecord
from sla.models import SlaPolicies
from sla.policies import NO_POLICIES, PRIORITIES, PRIORITY_LABELS, Policy, PolicySet
from sla.selectors import sla_policies
from sla.services import sla_policies_set
from tickets.models import Priority

MINUTES = "Informe um número inteiro de minutos, de 1 a 525600, ou null."


def refused(organization, policies) -> dict:
    """The errors of a refused write, after checking nothing was written."""
    with pytest.raises(ValidationFailed) as error:
        sla_policies_set(organization=organization, policies=policies)
    assert not SlaPolicies.objects.exists()
    assert not AuditRecord.objects.filter(action="sla.politicas_alteradas").exists()
    return error.value.errors


def test_without_stored_policies_there_are_none(organization):
    policies = sla_policies(organization.pk)

    assert policies == NO_POLICIES
    assert [policies.policy_for(p) for p in ("baixa", "media", "alta", "urgente", None)] == [None] * 5


def test_policies_are_stored_in_priority_order_and_audited(organization):
    policy_set = sla_policies_set(
        organization=organization,
        policies=[
            Policy(None, resolution=2400),
            Policy("urgente", 30, 60, 240),
            Policy("baixa", first_response=480),
        ],
    )

    assert policy_set == PolicySet(
        (Policy("baixa", 480, None, None), Policy("urgente", 30, 60, 240), Policy(None, None, None, 2400))
    )
    assert sla_policies(organization.pk) == policy_set
    assert SlaPolicies.objects.get(organization=organization).policies[0] == {
        "priority": "baixa",
        "first_response": 480,
        "next_response": None,
        "resolution": None,
    }
    record = AuditRecord.objects.get(action="sla.politicas_alteradas")
    assert (record.organization_id, record.resource_type, record.resource_id) == (
        organization.pk,
        "sla",
        str(organization.pk),
    )
    assert record.changes == {
        "politicas": {
            "antes": [],
            "depois": [
                {"prioridade": "baixa", "primeira_resposta": 480, "proxima_resposta": None, "resolucao": None},
                {"prioridade": "urgente", "primeira_resposta": 30, "proxima_resposta": 60, "resolucao": 240},
                {"prioridade": None, "primeira_resposta": None, "proxima_resposta": None, "resolucao": 2400},
            ],
        }
    }


def test_policy_for_finds_each_priority_and_the_policy_without_priority(organization):
    sla_policies_set(organization=organization, policies=[Policy("alta", 60), Policy(None, 120)])

    policies = sla_policies(organization.pk)

    assert policies.policy_for("alta") == Policy("alta", 60)
    assert policies.policy_for(None) == Policy(None, 120)
    assert policies.policy_for("media") is None


def test_a_change_drops_the_cached_set(organization):
    assert sla_policies(organization.pk) == NO_POLICIES  # now cached

    sla_policies_set(organization=organization, policies=[Policy("media", resolution=960)])

    assert sla_policies(organization.pk).policy_for("media") == Policy("media", resolution=960)


def test_a_warm_read_costs_no_query(organization, django_assert_num_queries):
    sla_policies_set(organization=organization, policies=[Policy("urgente", 15)])
    sla_policies(organization.pk)

    with django_assert_num_queries(0):
        assert sla_policies(organization.pk).policy_for("urgente") == Policy("urgente", 15)


def test_an_empty_list_clears_every_policy(organization):
    sla_policies_set(organization=organization, policies=[Policy("media", 60)])

    assert sla_policies_set(organization=organization, policies=[]) == NO_POLICIES

    assert sla_policies(organization.pk) == NO_POLICIES
    assert SlaPolicies.objects.get().policies == []
    assert AuditRecord.objects.filter(action="sla.politicas_alteradas").count() == 2


def test_the_same_set_again_in_another_order_writes_and_records_nothing(organization):
    sla_policies_set(organization=organization, policies=[Policy("media", 60), Policy("alta", 30)])
    updated_at = SlaPolicies.objects.get().updated_at

    sla_policies_set(organization=organization, policies=[Policy("alta", 30), Policy("media", 60)])

    assert SlaPolicies.objects.get().updated_at == updated_at
    assert AuditRecord.objects.filter(action="sla.politicas_alteradas").count() == 1


def test_no_policies_sent_without_a_row_stores_nothing(organization):
    sla_policies_set(organization=organization, policies=[])

    assert not SlaPolicies.objects.exists()
    assert not AuditRecord.objects.filter(action="sla.politicas_alteradas").exists()


def test_an_unknown_priority_is_refused_naming_the_accepted_ones(organization):
    assert refused(organization, [Policy("media", 60), Policy("critica", 30)]) == {
        "politicas.1.prioridade": ["Prioridade desconhecida: use baixa, media, alta, urgente ou null (sem prioridade)."]
    }


def test_a_repeated_priority_is_refused_naming_the_first(organization):
    policies = [Policy(None, 60), Policy("alta", 30), Policy(None, 90), Policy("alta", 10)]

    assert refused(organization, policies) == {
        "politicas.2.prioridade": ["Prioridade repetida: já está em politicas.0."],
        "politicas.3.prioridade": ["Prioridade repetida: já está em politicas.1."],
    }


@pytest.mark.parametrize("minutes", [0, -5, 525_601, True, 30.0, "30"])
def test_a_target_outside_1_to_525600_whole_minutes_is_refused(organization, minutes):
    assert refused(organization, [Policy("baixa", 60, 60, 60), Policy("alta", 60, minutes, 60)]) == {
        "politicas.1.proxima_resposta": [MINUTES]
    }


def test_the_bounds_themselves_are_kept(organization):
    sla_policies_set(organization=organization, policies=[Policy("baixa", 1, 525_600, None)])

    assert sla_policies(organization.pk).policy_for("baixa") == Policy("baixa", 1, 525_600, None)


def test_a_policy_without_any_target_is_refused(organization):
    assert refused(organization, [Policy("baixa", 60), Policy("alta")]) == {
        "politicas.1": ["Informe ao menos um prazo: primeira_resposta, proxima_resposta ou resolucao."]
    }


def test_more_policies_than_priorities_are_refused(organization):
    policies = [Policy(p, 60) for p in ("baixa", "media", "alta", "urgente", None, "baixa")]

    assert refused(organization, policies) == {"politicas": ["Informe no máximo 5 políticas, uma por prioridade."]}


def test_the_priorities_are_the_tickets_and_none():
    assert (*Priority.values, None) == PRIORITIES
    assert dict(Priority.choices) == PRIORITY_LABELS
