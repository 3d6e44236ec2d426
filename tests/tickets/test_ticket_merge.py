"""Merging duplicate tickets (issue 24): tickets.merging.tickets_merge, the one path of the admin and the panel."""

import json
from datetime import timedelta
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from foundation.exceptions import ValidationFailed
from helpdesk.actors import SYSTEM, Actor
from helpdesk.models import AuditRecord
from integrations.models import EventKind, WebhookEvent
from tests.factories import make_agent_reply, make_customer_reply, make_ticket, make_webhook, status_of
from tickets import merging
from tickets.attachments.services import attachment_add_by_partner, reply_create_with_attachments
from tickets.exceptions import StatusUnavailable, TicketMerged
from tickets.merging import tickets_merge
from tickets.models import Attachment, Reply, StatusCategory, Ticket, TicketStatus
from tickets.services import ticket_update


def _thread(ticket) -> list[tuple]:
    """The ticket's thread as the admin shows it, oldest first: (text, internal, mark of the source ticket)."""
    replies = Reply.objects.filter(ticket=ticket).order_by("created_at", "id")
    return [(reply.body, reply.is_internal, reply.merged_from_number) for reply in replies]


def _events(organization, kind) -> list[dict]:
    events = WebhookEvent.objects.filter(organization=organization, kind=kind).order_by("created_at", "id")
    return [json.loads(event.body)["data"] for event in events]


def _snapshot(organization) -> dict:
    """Every row a merge could touch, as stored."""
    return {
        "tickets": list(Ticket.objects.filter(organization=organization).order_by("number").values()),
        "replies": list(Reply.objects.filter(ticket__organization=organization).order_by("id").values()),
        "attachments": list(Attachment.objects.filter(organization=organization).order_by("id").values()),
        "events": WebhookEvent.objects.filter(organization=organization).count(),
        "audit": AuditRecord.objects.filter(organization_id=organization.pk).count(),
    }


@pytest.fixture
def duplicates(organization, agent):
    """Three tickets of one problem, opened a minute apart, their threads interleaved in time."""
    start = timezone.now() - timedelta(hours=1)
    tickets = []
    for n in range(3):
        with mock.patch("django.utils.timezone.now", return_value=start + timedelta(minutes=n)):
            tickets.append(make_ticket(organization, subject=f"Impressora {n}", description=f"Não imprime {n}"))
    target, first, second = tickets
    for minute, (ticket, text) in enumerate(
        [(first, "cliente 1"), (target, "cliente alvo"), (second, "cliente 2"), (first, "atendente 1")], start=10
    ):
        with mock.patch("django.utils.timezone.now", return_value=start + timedelta(minutes=minute)):
            if text.startswith("cliente"):
                make_customer_reply(ticket, body=text)
            else:
                make_agent_reply(ticket, agent, body=text)
    with mock.patch("django.utils.timezone.now", return_value=start + timedelta(minutes=20)):
        make_agent_reply(second, agent, body="nota 2", internal=True)
    return target, first, second


def _reload(*tickets) -> list[Ticket]:
    return [Ticket.objects.select_related("status", "merged_into").get(pk=ticket.pk) for ticket in tickets]


def test_a_merge_moves_every_message_to_the_target_in_time_order_marked_with_its_ticket(duplicates, agent):
    target, first, second = duplicates

    merged = tickets_merge(target=target, sources=[first, second], actor=Actor.of_agent(agent))

    assert merged.pk == target.pk
    assert _thread(target) == [
        ("Não imprime 1", False, first.number),  # each source's description, when it was opened
        ("Não imprime 2", False, second.number),
        ("cliente 1", False, first.number),
        ("cliente alvo", False, None),
        ("cliente 2", False, second.number),
        ("atendente 1", False, first.number),
        ("nota 2", True, second.number),
        (f"Mesclados neste ticket: #{first.number}, #{second.number}.", True, None),
    ]
    description = Reply.objects.get(ticket=target, body="Não imprime 1")
    assert description.author_contact_id == first.requester_id
    assert description.created_at == first.created_at
    assert _thread(first) == [(f"Mesclado em #{target.number}.", True, None)]
    assert _thread(second) == [(f"Mesclado em #{target.number}.", True, None)]
    assert Reply.objects.get(ticket=first).author_agent_id is None  # the system's note: nobody edits it


def test_the_sources_close_point_to_the_target_and_both_sides_move_in_the_change_list(duplicates, agent):
    target, first, second = duplicates
    before = {ticket.pk: (ticket.updated_at, ticket.change_tx, ticket.change_seq) for ticket in _reload(*duplicates)}

    tickets_merge(target=target, sources=[first, second], actor=Actor.of_agent(agent))

    target, first, second = _reload(target, first, second)
    assert target.merged_into_id is None
    assert target.status.category == StatusCategory.OPEN
    for source in (first, second):
        assert source.merged_into_id == target.pk
        assert source.status == status_of(source.organization, StatusCategory.CLOSED)
    for ticket in (target, first, second):
        assert (ticket.updated_at, ticket.change_tx, ticket.change_seq) > before[ticket.pk]


def test_the_reply_counters_follow_the_messages(duplicates, agent):
    target, first, second = duplicates
    target, first, second = _reload(target, first, second)
    assert (first.agent_reply_count, first.customer_reply_count) == (1, 1)
    assert (second.agent_reply_count, second.customer_reply_count) == (0, 1)
    assert (target.agent_reply_count, target.customer_reply_count) == (0, 1)

    tickets_merge(target=target, sources=[first, second], actor=Actor.of_agent(agent))

    target, first, second = _reload(target, first, second)
    # The target's thread holds 1 agent reply and 5 customer messages (2 replies, 2 descriptions, its own reply).
    assert (target.agent_reply_count, target.customer_reply_count) == (1, 5)
    assert (first.agent_reply_count, first.customer_reply_count) == (0, 0)
    assert (second.agent_reply_count, second.customer_reply_count) == (0, 0)


def test_attachments_move_with_their_messages(organization, agent):
    target, source = make_ticket(organization), make_ticket(organization)
    alone = attachment_add_by_partner(ticket=source, upload=SimpleUploadedFile("a.txt", b"a\n", "text/plain"))
    note, [with_note] = reply_create_with_attachments(
        ticket=source,
        agent=agent,
        body="nota com arquivo",
        internal=True,
        uploads=[SimpleUploadedFile("b.txt", b"b\n", "text/plain")],
    )

    tickets_merge(target=target, sources=[source], actor=Actor.of_agent(agent))

    assert set(Attachment.objects.filter(ticket=target).values_list("pk", flat=True)) == {alone.pk, with_note.pk}
    assert Attachment.objects.get(pk=with_note.pk).reply_id == note.pk
    assert Reply.objects.get(pk=note.pk).ticket_id == target.pk
    assert not Attachment.objects.filter(ticket=source).exists()


def test_each_source_announces_ticket_mesclado_with_its_target(duplicates, agent, organization, example_dns):
    make_webhook(organization)
    target, first, second = duplicates

    tickets_merge(target=target, sources=[first, second], actor=Actor.of_agent(agent))

    merged = _events(organization, EventKind.MERGED)
    assert [(event["ticket"]["numero"], event["destino"]) for event in merged] == [
        (first.number, {"id": str(target.pk), "numero": target.number}),
        (second.number, {"id": str(target.pk), "numero": target.number}),
    ]
    assert {event["ticket"]["status"]["categoria"] for event in merged} == {"fechado"}
    assert {json.dumps(event["ator"]) for event in merged} == {
        json.dumps({"tipo": "agente", "id": str(agent.pk), "nome": agent.name})
    }
    # The close is the ticket's normal write: its status event too, one per source.
    closed = _events(organization, EventKind.STATUS_CHANGED)
    assert [event["ticket"]["numero"] for event in closed] == [first.number, second.number]
    assert WebhookEvent.objects.get(kind=EventKind.MERGED, body__contains=str(first.pk)).deliveries.count() == 1
    assert AuditRecord.objects.filter(action="ticket.mesclado").count() == 2


def test_a_failure_while_moving_the_second_source_leaves_every_row_as_it_was(
    transactional_db, duplicates, agent, organization
):
    """The merge's own transaction, the outermost one (the admin's action runs in none)."""
    target, first, second = duplicates
    before = _snapshot(organization)
    real = merging._source_merge

    def failing(source, *args):
        if source.pk == second.pk:
            raise RuntimeError("disco cheio")
        return real(source, *args)

    with mock.patch.object(merging, "_source_merge", side_effect=failing), pytest.raises(RuntimeError):
        tickets_merge(target=target, sources=[first, second], actor=Actor.of_agent(agent))

    assert _snapshot(organization) == before


def test_a_failure_in_the_middle_of_a_source_leaves_every_row_as_it_was(duplicates, agent, organization):
    """The first source merged, the second's replies moved, then its close fails: nothing of it stays."""
    target, first, second = duplicates
    before = _snapshot(organization)
    real = merging._ticket_change

    def failing(ticket, **kwargs):
        if ticket.pk == second.pk:
            raise RuntimeError("queda no meio")
        return real(ticket, **kwargs)

    with mock.patch.object(merging, "_ticket_change", side_effect=failing), pytest.raises(RuntimeError):
        tickets_merge(target=target, sources=[first, second], actor=Actor.of_agent(agent))

    assert _snapshot(organization) == before


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (lambda t: [], "Informe ao menos um ticket para mesclar."),
        (lambda t: [t[1], t[1]], "Um ticket aparece mais de uma vez."),
        (lambda t: [t[1], t[0]], "O ticket de destino não pode estar entre as origens."),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(organization, agent, sources, message):
    tickets = [make_ticket(organization) for _ in range(3)]
    before = _snapshot(organization)

    with pytest.raises(ValidationFailed) as refused:
        tickets_merge(target=tickets[0], sources=sources(tickets), actor=SYSTEM)

    assert refused.value.errors == {"origens": [message]}
    assert _snapshot(organization) == before


def test_at_most_twenty_tickets_are_merged_at_once(organization):
    tickets = [make_ticket(organization) for _ in range(21)]

    with pytest.raises(ValidationFailed) as refused:
        tickets_merge(target=tickets[0], sources=tickets[1:], actor=SYSTEM)
    tickets_merge(target=tickets[0], sources=tickets[1:20], actor=SYSTEM)

    assert refused.value.errors == {"origens": ["Mescle no máximo 20 tickets de uma vez (o destino incluído)."]}
    assert Ticket.objects.filter(merged_into=tickets[0]).count() == 19


def test_tickets_of_two_organizations_are_never_merged(organization, other_organization):
    mine, theirs = make_ticket(organization), make_ticket(other_organization)
    before = (_snapshot(organization), _snapshot(other_organization))

    with pytest.raises(ValidationFailed) as refused:
        tickets_merge(target=mine, sources=[theirs], actor=SYSTEM)

    assert refused.value.errors == {"origens": ["Todos os tickets devem ser da mesma organização."]}
    assert (_snapshot(organization), _snapshot(other_organization)) == before


def test_a_merged_ticket_is_neither_merged_again_nor_a_target(organization):
    a, b, c = (make_ticket(organization) for _ in range(3))
    tickets_merge(target=a, sources=[b], actor=SYSTEM)
    before = _snapshot(organization)

    with pytest.raises(TicketMerged) as as_source:
        tickets_merge(target=c, sources=[b], actor=SYSTEM)
    with pytest.raises(TicketMerged) as as_target:
        tickets_merge(target=b, sources=[c], actor=SYSTEM)

    assert (as_source.value.field, as_source.value.detail) == (
        "origens",
        f"O ticket #{b.number} já foi mesclado no ticket #{a.number}.",
    )
    assert (as_target.value.field, as_target.value.message) == ("id", "Ticket mesclado.")
    assert _snapshot(organization) == before


def test_merging_a_target_points_its_earlier_sources_to_the_new_target(organization):
    a, b, c = (make_ticket(organization) for _ in range(3))
    tickets_merge(target=a, sources=[b], actor=SYSTEM)
    moved_before = Ticket.objects.get(pk=b.pk).change_seq

    tickets_merge(target=c, sources=[a], actor=SYSTEM)

    a, b = _reload(a, b)
    assert (a.merged_into_id, b.merged_into_id) == (c.pk, c.pk)
    assert Ticket.objects.get(pk=b.pk).change_seq > moved_before  # its `mesclado_em` changed: it moves
    # b's messages keep b's number, a's own get a's.
    assert {mark for _body, _internal, mark in _thread(c)} == {a.number, b.number, None}
    assert [mark for body, _i, mark in _thread(c) if body == b.description] == [b.number]


def test_an_organization_without_a_closed_status_merges_nothing(organization):
    a, b = make_ticket(organization), make_ticket(organization)
    TicketStatus.objects.filter(organization=organization, category=StatusCategory.CLOSED).update(
        category=StatusCategory.RESOLVED
    )
    before = _snapshot(organization)

    with pytest.raises(StatusUnavailable):
        tickets_merge(target=a, sources=[b], actor=SYSTEM)

    assert _snapshot(organization) == before


def test_a_closed_or_resolved_source_is_merged_too(organization, agent):
    a, b = make_ticket(organization), make_ticket(organization)
    ticket_update(ticket=b, status=status_of(organization, StatusCategory.RESOLVED), actor=SYSTEM)

    tickets_merge(target=a, sources=[b], actor=SYSTEM)

    [b] = _reload(b)
    assert (b.status.category, b.merged_into_id, b.resolved_at) == (StatusCategory.CLOSED, a.pk, None)
