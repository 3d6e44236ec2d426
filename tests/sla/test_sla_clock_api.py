"""The SLA clock through the HTTP client: `incluir=sla` and `incluir=metricas` on the partner's tickets, the
filter `sla=violado` / `sla=em_risco` on the partner's and the panel's lists, and what moves deadlines: replies,
waiting for the customer, resolving, a priority change, and a change of the policies or the calendar (the beat's
re-target). The calendar is Monday to Friday, 09:00-18:00 in São Paulo (UTC-3); the wall clock is set."""

from datetime import datetime

import pytest

from sla.models import SlaRetarget
from sla.policies import Policy
from sla.services import sla_policies_set
from tests.assertions import assert_exact_validation_error, assert_success
from tests.factories import make_agent, make_ticket, status_of
from tests.sla.moments import local, wall_clock, z
from tickets.models import StatusCategory, Ticket
from tickets.service_levels import sla_retargets_run
from tickets.services import reply_create_by_agent, ticket_update

TICKETS = "/api/v1/tickets"
HOURS_SET = "Horário de atendimento atualizado."
POLICIES_SET = "Políticas de SLA atualizadas."
OFFICE = {
    "fuso_horario": "America/Sao_Paulo",
    "intervalos": [{"dia_semana": day, "inicio": "09:00", "fim": "18:00"} for day in range(5)],
    "feriados": [],
}
POLICIES = {
    "politicas": [
        {"prioridade": "media", "primeira_resposta": 120, "proxima_resposta": 60, "resolucao": 540},
        {"prioridade": "urgente", "primeira_resposta": 30, "resolucao": 240},
    ]
}

pytestmark = pytest.mark.usefixtures("generous_rate_limits")


def target(tipo, vence_em, cumprida_em=None, violada=False, pausada=False) -> dict:
    return {"tipo": tipo, "vence_em": vence_em, "cumprida_em": cumprida_em, "violada": violada, "pausada": pausada}


@pytest.fixture
def service_levels(manager):
    assert_success(manager.put("/api/horario-atendimento", OFFICE, format="json"), 200, HOURS_SET)
    assert_success(manager.put("/api/sla", POLICIES, format="json"), 200, POLICIES_SET)
    SlaRetarget.objects.all().delete()  # no ticket yet: nothing to move


def create(partner, at: datetime, **extra) -> dict:
    body = {"assunto": "Pedido", "descricao": "Não chegou", "solicitante": {"nome": "Ana"}, **extra}
    with wall_clock(at):
        return assert_success(
            partner.post(f"{TICKETS}?incluir=sla,metricas", body, format="json"), 201, "Ticket criado."
        )


def read(partner, ticket_id, at: datetime) -> dict:
    with wall_clock(at):
        return assert_success(partner.get(f"{TICKETS}/{ticket_id}?incluir=sla,metricas"), 200, "Ticket encontrado.")


@pytest.mark.usefixtures("service_levels")
def test_a_new_ticket_shows_its_deadlines_in_business_hours(partner):
    ticket = create(partner, local(27, 17))  # Friday 17:00: one business hour left this week

    assert ticket["sla"] == {
        "politica": "media",
        "metas": [target("primeira_resposta", z(local(30, 10))), target("resolucao", z(local(30, 17)))],
    }
    assert ticket["metricas"] == {
        "primeira_resposta_em": None,
        "tempo_primeira_resposta_min": None,
        "tempo_resolucao_min": None,
        "reaberturas": 0,
        "respostas_agente": 0,
        "respostas_cliente": 0,
    }


@pytest.mark.usefixtures("service_levels")
def test_replies_meet_and_start_targets_and_are_counted(partner, organization):
    agent = make_agent(organization)
    ticket_id = create(partner, local(26, 10))["id"]
    ticket = Ticket.objects.get(pk=ticket_id)
    with wall_clock(local(26, 11)):
        reply_create_by_agent(ticket=ticket, agent=agent, body="Olá")
        reply_create_by_agent(ticket=ticket, agent=agent, body="Nota", internal=True)
    with wall_clock(local(26, 14)):
        assert_success(
            partner.post(f"{TICKETS}/{ticket_id}/respostas", {"mensagem": "E aí?"}, format="json"),
            201,
            "Resposta enviada.",
        )

    shown = read(partner, ticket_id, local(26, 14, 30))

    assert shown["sla"]["metas"] == [
        target("primeira_resposta", z(local(26, 12)), cumprida_em=z(local(26, 11))),
        target("proxima_resposta", z(local(26, 15))),
        target("resolucao", z(local(27, 10))),
    ]
    assert shown["metricas"] | {"primeira_resposta_em": None} == {
        "primeira_resposta_em": None,
        "tempo_primeira_resposta_min": 60,
        "tempo_resolucao_min": None,
        "reaberturas": 0,
        "respostas_agente": 1,
        "respostas_cliente": 1,
    }
    assert shown["metricas"]["primeira_resposta_em"] == z(local(26, 11))
    # Past the next response's deadline, still unanswered: breached.
    assert read(partner, ticket_id, local(26, 15, 1))["sla"]["metas"][1]["violada"] is True


@pytest.mark.usefixtures("service_levels")
def test_waiting_for_the_customer_pauses_and_the_customer_reply_resumes(partner, organization):
    ticket_id = create(partner, local(26, 10))["id"]
    waiting = status_of(organization, StatusCategory.WAITING)
    with wall_clock(local(26, 11)):
        ticket_update(ticket=Ticket.objects.get(pk=ticket_id), status=waiting)

    paused = read(partner, ticket_id, local(27, 16))["sla"]["metas"]
    assert paused == [target("primeira_resposta", None, pausada=True), target("resolucao", None, pausada=True)]

    with wall_clock(local(27, 10)):  # 8 business hours later the customer answers: deadlines move by them
        assert_success(
            partner.post(f"{TICKETS}/{ticket_id}/respostas", {"mensagem": "Pronto"}, format="json"),
            201,
            "Resposta enviada.",
        )
    metas = read(partner, ticket_id, local(27, 10, 5))["sla"]["metas"]
    assert metas == [target("primeira_resposta", z(local(27, 11))), target("resolucao", z(local(27, 18)))]


@pytest.mark.usefixtures("service_levels")
def test_resolving_meets_everything_and_reopening_is_counted(partner):
    ticket_id = create(partner, local(26, 10))["id"]
    with wall_clock(local(26, 11, 30)):
        resolved = assert_success(
            partner.post(f"{TICKETS}/{ticket_id}/resolver?incluir=sla,metricas"), 200, "Ticket resolvido."
        )
    assert resolved["sla"]["metas"] == [
        target("primeira_resposta", z(local(26, 12)), cumprida_em=z(local(26, 11, 30))),
        target("resolucao", z(local(27, 10)), cumprida_em=z(local(26, 11, 30))),
    ]
    assert resolved["metricas"]["tempo_resolucao_min"] == 90

    with wall_clock(local(27, 9)):
        reopened = assert_success(
            partner.post(f"{TICKETS}/{ticket_id}/reabrir?incluir=sla,metricas"), 200, "Ticket reaberto."
        )
    assert reopened["sla"]["metas"][1] == target("resolucao", z(local(27, 16, 30)))  # 450 left from 09:00
    assert (reopened["metricas"]["reaberturas"], reopened["metricas"]["tempo_resolucao_min"]) == (1, None)


@pytest.mark.usefixtures("service_levels")
def test_a_priority_change_retargets_from_the_start_keeping_the_time_spent(partner, organization):
    ticket_id = create(partner, local(26, 10))["id"]
    with wall_clock(local(26, 10, 20)):
        ticket_update(ticket=Ticket.objects.get(pk=ticket_id), priority="urgente")

    shown = read(partner, ticket_id, local(26, 10, 21))["sla"]
    assert shown == {
        "politica": "urgente",
        "metas": [target("primeira_resposta", z(local(26, 10, 30))), target("resolucao", z(local(26, 14)))],
    }


def test_without_a_policy_the_block_is_null_and_metrics_still_count(partner):
    ticket = create(partner, local(26, 10))

    assert ticket["sla"] is None
    assert ticket["metricas"]["reaberturas"] == 0


def test_a_change_of_policies_moves_open_tickets_when_the_beat_runs(partner, manager):
    assert_success(manager.put("/api/horario-atendimento", OFFICE, format="json"), 200, HOURS_SET)
    SlaRetarget.objects.all().delete()
    ticket_id = create(partner, local(26, 10))["id"]
    before = read(partner, ticket_id, local(26, 10, 30))
    assert before["sla"] is None

    with wall_clock(local(26, 11)):
        assert_success(manager.put("/api/sla", POLICIES, format="json"), 200, POLICIES_SET)
    changed_at = SlaRetarget.objects.get().changed_at
    with wall_clock(local(26, 11)):
        assert sla_retargets_run(now=changed_at) == 1

    after = read(partner, ticket_id, local(26, 11, 1))
    assert after["sla"]["metas"] == [
        target("primeira_resposta", z(local(26, 12))),
        target("resolucao", z(local(27, 10))),
    ]
    assert after["atualizado_em"] > before["atualizado_em"]  # new deadlines move the ticket in the change list
    # A second pass once the cache of the settings expired, then the change is done.
    assert sla_retargets_run(now=changed_at) == 0 and SlaRetarget.objects.count() == 1
    assert sla_retargets_run(now=local(26, 12)) == 0 and not SlaRetarget.objects.exists()


@pytest.mark.usefixtures("service_levels")
def test_a_change_of_the_calendar_moves_running_deadlines_keeping_what_they_spent(partner, manager):
    ticket_id = create(partner, local(26, 10))["id"]
    longer = {**OFFICE, "intervalos": [{"dia_semana": day, "inicio": "09:00", "fim": "20:00"} for day in range(5)]}
    with wall_clock(local(26, 17)):
        assert_success(manager.put("/api/horario-atendimento", longer, format="json"), 200, HOURS_SET)
    sla_retargets_run(now=local(26, 17))

    metas = read(partner, ticket_id, local(26, 17, 1))["sla"]["metas"]
    # The first response was due at 12:00, breached: kept. The resolution spent 7 hours; 2 left until 19:00.
    assert metas == [target("primeira_resposta", z(local(26, 12)), violada=True), target("resolucao", z(local(26, 19)))]


@pytest.mark.usefixtures("service_levels")
def test_the_sla_filter_finds_breached_and_at_risk_tickets_of_the_organization_only(
    partner, other_partner, manager, organization, other_organization
):
    breached = create(partner, local(26, 9))["id"]  # first response due 11:00
    at_risk = create(partner, local(26, 10))["id"]  # due 12:00, at risk from 11:36
    create(partner, local(26, 11, 30))  # due 13:30: on time
    with wall_clock(local(26, 11, 30)):
        answered_late = make_ticket(organization)  # as if met after its deadline: breached for good
    Ticket.objects.filter(pk=answered_late.pk).update(sla_breached=True)
    sla_policies_set(organization=other_organization, policies=[Policy("media", first_response=120)])
    with wall_clock(local(26, 9)):
        foreign = make_ticket(other_organization)  # breached too, in the other organization

    def ids(client, url):
        with wall_clock(local(26, 11, 40)):
            return {ticket["id"] for ticket in assert_success(client.get(url), 200, "Tickets listados.")["data"]}

    assert ids(partner, f"{TICKETS}?sla=violado") == {breached, str(answered_late.pk)}
    assert ids(partner, f"{TICKETS}?sla=em_risco") == {at_risk}
    assert ids(other_partner, f"{TICKETS}?sla=violado") == {str(foreign.pk)}
    assert ids(manager, "/api/tickets?sla=violado") == {breached, str(answered_late.pk)}
    assert ids(manager, "/api/tickets?sla=em_risco&prioridade=media") == {at_risk}


def test_an_unknown_sla_filter_is_a_422_naming_it(partner):
    assert_exact_validation_error(
        partner.get(f"{TICKETS}?sla=atrasado"), {"sla": ['"atrasado" não é uma escolha válida.']}
    )


@pytest.mark.usefixtures("service_levels")
def test_docs_sla_example_table(partner, organization):
    """docs/sla.md, "Deadlines on tickets", the example's table, row by row."""
    agent = make_agent(organization)
    ticket_id = create(partner, local(26, 10))["id"]

    def metas(at):
        return {meta["tipo"]: meta for meta in read(partner, ticket_id, at)["sla"]["metas"]}

    def reply_as_customer(at):
        with wall_clock(at):
            response = partner.post(f"{TICKETS}/{ticket_id}/respostas", {"mensagem": "Oi"}, format="json")
            assert_success(response, 201, "Resposta enviada.")

    with wall_clock(local(26, 11)):
        reply_create_by_agent(ticket=Ticket.objects.get(pk=ticket_id), agent=agent, body="Olá")
    reply_as_customer(local(26, 14))
    assert metas(local(26, 14))["proxima_resposta"]["vence_em"] == z(local(26, 15))
    with wall_clock(local(26, 14, 30)):
        ticket_update(ticket=Ticket.objects.get(pk=ticket_id), status=status_of(organization, StatusCategory.WAITING))
    paused = metas(local(26, 16))
    assert paused["proxima_resposta"]["pausada"] and paused["resolucao"]["pausada"]
    reply_as_customer(local(27, 9))
    running = metas(local(27, 9))
    assert (running["proxima_resposta"]["vence_em"], running["resolucao"]["vence_em"]) == (
        z(local(27, 9, 30)),
        z(local(27, 13, 30)),
    )
    assert metas(local(27, 9, 45))["proxima_resposta"]["violada"] is True
    with wall_clock(local(27, 11)):
        assert_success(partner.post(f"{TICKETS}/{ticket_id}/resolver"), 200, "Ticket resolvido.")
    done = metas(local(27, 11, 1))
    assert done["primeira_resposta"] == target("primeira_resposta", z(local(26, 12)), cumprida_em=z(local(26, 11)))
    assert done["proxima_resposta"] == target(
        "proxima_resposta", z(local(27, 9, 30)), cumprida_em=z(local(27, 11)), violada=True
    )
    assert done["resolucao"] == target("resolucao", z(local(27, 13, 30)), cumprida_em=z(local(27, 11)))
