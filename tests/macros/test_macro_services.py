"""macros.services: placeholders filled by plain substitution and refused when unknown, the macro's checks and
audit trail, and macro_apply: the ticket services' changes and the reply in one transaction, all or nothing."""

import pytest

from foundation.exceptions import ValidationFailed
from helpdesk.actors import Actor
from helpdesk.models import AuditRecord
from helpdesk.services import agent_set_active
from integrations.models import WebhookEvent
from macros.exceptions import MacroNotFound
from macros.models import Assignment, Macro
from macros.placeholders import placeholders_fill, placeholders_values
from macros.services import MacroValues, macro_apply, macro_delete, macro_update
from tests.factories import make_agent, make_ticket, status_of
from tests.macros.helpers import event_kinds, make_macro
from tickets.models import Reply, Ticket
from tickets.services import RequesterData, reply_create_by_agent, status_create, status_delete, ticket_update

KNOWN = "{{solicitante.nome}}, {{ticket.numero}}, {{ticket.assunto}}, {{atendente.nome}}"


@pytest.fixture
def ticket(organization):
    return make_ticket(
        organization, subject="Impressora parada", requester=RequesterData(name="Maria Souza", email="m@x.test")
    )


def stored(ticket) -> dict:
    return Ticket.objects.filter(pk=ticket.pk).values().get()


def test_the_four_placeholders_are_filled_spaces_inside_the_braces_tolerated(organization, agent, ticket):
    macro = make_macro(
        organization,
        body="Olá {{solicitante.nome}}, o ticket #{{ ticket.numero }} ({{  ticket.assunto}}) está comigo, "
        "{{atendente.nome }}.",
    )

    _, reply = macro_apply(ticket=ticket, macro=macro, agent=agent)

    assert reply.body == (
        f"Olá Maria Souza, o ticket #{ticket.number} (Impressora parada) está comigo, Beatriz Atendente."
    )
    assert (reply.is_internal, reply.author_agent_id) == (False, agent.pk)


def test_an_unknown_placeholder_is_refused_when_the_macro_is_saved_and_named(organization):
    with pytest.raises(ValidationFailed) as refused:
        make_macro(organization, name="Vazamento", body="{{ticket.organization.api_credentials}} e {{ x }} e {{x}}")

    assert refused.value.errors == {
        "mensagem": [
            f"Variável desconhecida: {{{{ticket.organization.api_credentials}}}}, {{{{x}}}}. Use somente {KNOWN}."
        ]
    }
    assert not Macro.objects.exists()
    assert not AuditRecord.objects.filter(action="macro.criada").exists()


def test_an_update_to_an_unknown_placeholder_is_refused_and_changes_nothing(organization):
    macro = make_macro(organization, name="Saudação", body="Olá {{solicitante.nome}}")

    with pytest.raises(ValidationFailed) as refused:
        macro_update(macro=macro, values=MacroValues(name="Saudação", body="{{ settings.SECRET_KEY }}"))

    assert list(refused.value.errors) == ["mensagem"]
    assert Macro.objects.get(pk=macro.pk).body == "Olá {{solicitante.nome}}"


def test_template_tags_stay_as_typed_and_applying_shows_nothing_but_the_four_values(organization, agent):
    # A subject a customer typed with placeholders and template syntax in it: substituted once, never read again.
    ticket = make_ticket(
        organization, subject="{{atendente.nome}} {% debug %}", requester=RequesterData(name="{{ticket.numero}}")
    )
    macro = make_macro(
        organization, body="{% load static %}{% debug %}{{ticket.assunto}}|{{solicitante.nome}}|{ ticket.numero }"
    )

    _, reply = macro_apply(ticket=ticket, macro=macro, agent=agent)

    assert (
        reply.body == "{% load static %}{% debug %}{{atendente.nome}} {% debug %}|{{ticket.numero}}|{ ticket.numero }"
    )


def test_filling_reads_only_its_mapping_never_an_attribute():
    values = {"ticket.numero": "7"}

    assert placeholders_fill("{{ticket.numero}} {{ticket.organization}} {{ticket.__class__}}", values) == (
        "7 {{ticket.organization}} {{ticket.__class__}}"
    )


def test_the_values_are_the_four_texts_and_nothing_else(organization, agent, ticket):
    assert placeholders_values(ticket=ticket, agent=agent) == {
        "solicitante.nome": "Maria Souza",
        "ticket.numero": str(ticket.number),
        "ticket.assunto": "Impressora parada",
        "atendente.nome": "Beatriz Atendente",
    }


def test_applying_changes_the_ticket_and_replies_with_the_events_of_the_same_single_actions(organization, agent):
    waiting = status_of(organization, "aguardando")
    macro = make_macro(
        organization,
        body="Aguardamos o seu retorno.",
        status=waiting,
        priority="alta",
        assignment=Assignment.ME,
        tags_add=["Retorno Pendente"],
        tags_remove=["novo"],
    )
    applied, alone = make_ticket(organization), make_ticket(organization)
    for ticket in (applied, alone):
        ticket_update(ticket=ticket, tags_add=["novo"])
    WebhookEvent.objects.all().delete()

    ticket, _ = macro_apply(ticket=applied, macro=macro, agent=agent)
    ticket_update(
        ticket=alone,
        status=waiting,
        priority="alta",
        assignee=agent,
        tags_add=["retorno-pendente"],
        tags_remove=["novo"],
        actor=Actor.of_agent(agent),
    )
    reply_create_by_agent(ticket=alone, agent=agent, body="Aguardamos o seu retorno.")

    row = Ticket.objects.get(pk=applied.pk)
    assert (row.status_id, row.priority, row.assignee_id, row.tags) == (
        waiting.pk,
        "alta",
        agent.pk,
        ["retorno-pendente"],
    )
    assert ticket.updated_at == row.updated_at
    assert list(Reply.objects.filter(ticket=applied).values_list("body", "is_internal")) == [
        ("Aguardamos o seu retorno.", False)
    ]
    assert event_kinds(applied) == [
        "ticket.status_alterado",
        "ticket.prioridade_alterada",
        "ticket.atribuido",
        "ticket.tags_alteradas",
        "ticket.resposta_publica",
    ]
    assert event_kinds(applied) == event_kinds(alone)


def test_an_internal_macro_writes_a_note_that_emits_nothing(organization, agent, ticket):
    macro = make_macro(organization, body="Cliente VIP, priorizar.", internal=True)
    WebhookEvent.objects.all().delete()

    _, reply = macro_apply(ticket=ticket, macro=macro, agent=agent)

    assert (reply.body, reply.is_internal) == ("Cliente VIP, priorizar.", True)
    assert event_kinds() == []


def test_the_agents_edited_text_is_posted_as_typed_and_an_empty_one_posts_nothing(organization, agent, ticket):
    macro = make_macro(organization, body="Olá {{solicitante.nome}}", priority="urgente", assignment=Assignment.NONE)

    _, edited = macro_apply(ticket=ticket, macro=macro, agent=agent, body="Texto meu {{ticket.numero}}")
    _, nothing = macro_apply(ticket=ticket, macro=macro, agent=agent, body="  ")

    assert edited.body == "Texto meu {{ticket.numero}}"
    assert nothing is None
    assert Reply.objects.filter(ticket=ticket).count() == 1
    assert Ticket.objects.get(pk=ticket.pk).priority == "urgente"


def test_a_macro_without_a_message_only_changes_the_ticket(organization, agent, ticket):
    ticket_update(ticket=ticket, assignee=agent)
    macro = make_macro(organization, assignment=Assignment.NONE)

    _, reply = macro_apply(ticket=ticket, macro=macro, agent=agent)

    assert reply is None
    assert Ticket.objects.get(pk=ticket.pk).assignee_id is None
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_a_failing_reply_rolls_the_changes_back(organization, agent, ticket, monkeypatch):
    macro = make_macro(organization, body="Resolvido!", status=status_of(organization, "resolvido"), priority="baixa")
    before, events, records = stored(ticket), WebhookEvent.objects.count(), AuditRecord.objects.count()

    def refuse(**kwargs):
        raise ValidationFailed({"mensagem": ["Recusada."]})

    monkeypatch.setattr("macros.services.reply_create_by_agent", refuse)
    with pytest.raises(ValidationFailed):
        macro_apply(ticket=ticket, macro=macro, agent=agent)

    assert stored(ticket) == before
    assert (WebhookEvent.objects.count(), AuditRecord.objects.count()) == (events, records)
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_a_ticket_past_its_tag_limit_refuses_the_macro_and_writes_nothing(organization, agent, ticket):
    ticket_update(ticket=ticket, tags_add=[f"t{n}" for n in range(20)])
    macro = make_macro(organization, body="Olá", priority="alta", tags_add=["mais-uma"])
    before = stored(ticket)

    with pytest.raises(ValidationFailed) as refused:
        macro_apply(ticket=ticket, macro=macro, agent=agent)

    assert refused.value.errors == {"tags": ["Um ticket tem no máximo 20 tags."]}
    assert stored(ticket) == before
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_another_organizations_macro_is_not_found_and_writes_nothing(organization, other_organization, agent, ticket):
    foreign = make_macro(other_organization, body="Intrusão", priority="urgente")
    before, events = stored(ticket), WebhookEvent.objects.count()

    with pytest.raises(MacroNotFound):
        macro_apply(ticket=ticket, macro=foreign, agent=agent)

    assert (stored(ticket), WebhookEvent.objects.count()) == (before, events)
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_a_macro_assigning_an_agent_who_left_is_refused_before_anything_is_written(organization, agent, ticket):
    colleague = make_agent(organization, name="Carlos")
    macro = make_macro(
        organization, body="Com o Carlos", priority="alta", assignment=Assignment.AGENT, assignee=colleague
    )
    agent_set_active(agent=colleague, is_active=False)
    before = stored(ticket)

    with pytest.raises(ValidationFailed) as refused:
        macro_apply(ticket=ticket, macro=Macro.objects.get(pk=macro.pk), agent=agent)

    assert refused.value.errors == {"macro": ["O atendente desta macro está inativo ou não existe mais."]}
    assert stored(ticket) == before
    assert not Reply.objects.filter(ticket=ticket).exists()


def test_a_removed_status_leaves_the_macro_without_a_status_change(organization, agent, ticket):
    extra = status_create(organization_id=organization.pk, name="Em análise", category="em_andamento", color="#123456")
    macro = make_macro(organization, status=extra, priority="alta")
    status_delete(status=extra)

    macro_apply(ticket=ticket, macro=Macro.objects.get(pk=macro.pk), agent=agent)

    row = Ticket.objects.select_related("status").get(pk=ticket.pk)
    assert (row.status.category, row.priority) == ("aberto", "alta")


def test_a_macros_rules_name_each_refused_field(organization, other_organization):
    make_macro(organization, name="Fechar")
    foreign_status = status_of(other_organization, "resolvido")
    foreign_agent = make_agent(other_organization)

    with pytest.raises(ValidationFailed) as refused:
        make_macro(
            organization,
            name=" fechar ",
            status=foreign_status,
            priority="altíssima",
            assignment=Assignment.AGENT,
            assignee=foreign_agent,
            tags_add=["VIP"],
            tags_remove=["vip"],
        )

    assert refused.value.errors == {
        "nome": ["Já existe uma macro com este nome."],
        "status_id": ["Status inexistente nesta organização."],
        "prioridade": ["Prioridade inválida."],
        "atendente_id": ["Escolha um atendente desta organização."],
        "tags.remover": ['Tag em adicionar e em remover ao mesmo tempo: "vip".'],
    }
    assert Macro.objects.filter(organization=organization).count() == 1


def test_the_same_name_in_another_organization_is_fine(organization, other_organization):
    make_macro(organization, name="Fechar")
    make_macro(other_organization, name="Fechar")

    assert Macro.objects.filter(name="Fechar").count() == 2


def test_writes_of_a_macro_are_in_the_audit_trail_without_its_text(organization, agent):
    macro = make_macro(organization, name="Fechar", body="Segredo do texto", priority="baixa", tags_add=["Fim"])
    macro_update(
        macro=macro,
        values=MacroValues(
            name="Fechar", body="Outro texto", priority="alta", assignment=Assignment.AGENT, assignee=agent
        ),
    )
    macro_delete(macro=Macro.objects.get(pk=macro.pk))

    records = list(AuditRecord.objects.filter(resource_type="macro").order_by("created_at", "pk"))
    assert [(r.action, r.resource_id) for r in records] == [
        ("macro.criada", str(macro.pk)),
        ("macro.atualizada", str(macro.pk)),
        ("macro.excluida", str(macro.pk)),
    ]
    assert records[0].changes["nome"] == {"antes": None, "depois": "Fechar"}
    assert records[0].changes["tags_adicionar"] == {"antes": None, "depois": ["fim"]}
    assert records[1].changes == {
        "prioridade": {"antes": "baixa", "depois": "alta"},
        "atendente": {"antes": "manter", "depois": "atendente"},
        "atendente_id": {"antes": None, "depois": str(agent.pk)},
        "tags_adicionar": {"antes": ["fim"], "depois": []},
        "mensagem_alterada": True,
    }
    assert records[2].changes == {"nome": {"antes": "Fechar", "depois": None}}
    assert "texto" not in str([r.changes for r in records])
    assert not Macro.objects.exists()
