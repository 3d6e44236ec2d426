"""The oracle of tickets.payloads: each builder gives, byte for byte, what its serializer (the OpenAPI
schema) describes, from rows read and from objects in hand after a write.

Many generated tickets: with and without every optional field, in every status, with replies from agents
and customers, notes, edits, files, Unicode, and timestamps with and without microseconds. Both sides go
through the same JSON renderer, so bytes are compared.
"""

import random
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.core import signing
from django.db.models import Prefetch
from django.test import RequestFactory
from django.utils import timezone

from api_framework.envelope import json_bytes
from helpdesk.actors import SYSTEM
from sla.policies import Policy
from sla.services import sla_policies_set
from tests.attachments.samples import TEXT, upload_file
from tests.factories import make_agent, make_agent_reply, make_customer_reply, make_ticket, png_file, status_of
from tickets.api.attachment_serializers import AttachmentEventOut, AttachmentOut, PanelAttachmentOut
from tickets.api.contact_serializers import PartnerContactOut
from tickets.api.panel_serializers import PanelReplyOut, PanelTicketOut
from tickets.api.serializers import (
    TICKET_BLOCK_SCHEMAS,
    AgentOut,
    DeletedTicketOut,
    ReplyPublicOut,
    StatusOut,
    TicketPublicOut,
    TicketPublicWithBlocksOut,
    TicketSummaryOut,
    TicketSummaryWithBlocksOut,
)
from tickets.attachments.services import attachment_add_by_partner, reply_create_with_attachments
from tickets.fields.services import custom_field_create
from tickets.merging import tickets_merge
from tickets.models import Attachment, Contact, Reply, StatusCategory, Ticket, TicketStatus, TicketTombstone
from tickets.payloads import (
    AGENT_COLUMNS,
    ALL_TICKET_BLOCKS,
    ATTACHMENT_COLUMNS,
    CONTACT_COLUMNS,
    PANEL_ATTACHMENT_COLUMNS,
    PANEL_TICKET_COLUMNS,
    TICKET_BLOCKS,
    TICKET_COLUMNS,
    agents_public,
    attachment_event,
    attachment_row,
    attachments_panel,
    attachments_public,
    contact_partner,
    contact_row,
    reply_panel,
    reply_public,
    reply_row,
    status_public,
    ticket_blocks,
    ticket_blocks_by_name,
    ticket_columns,
    ticket_new_public,
    ticket_panel_row,
    ticket_public,
    ticket_row,
    ticket_summary,
    tickets_panel,
    tickets_public,
    tombstone_public,
)
from tickets.services import (
    RequesterData,
    contact_update,
    reply_edit_as_agent,
    reply_edit_as_customer,
    ticket_delete,
    ticket_fields_set,
    ticket_rate_by_customer,
    ticket_update,
)

TEXTS = ["Simples", "Acentuação: ção, ÁÉÍÓÚ", "emoji 🎫", 'aspas "duplas" e \\ barra', "linha\nnova\u2028sep"]
NEWEST_FIRST = ("-created_at", "-number")
AUTHORS = ("author_agent", "author_contact")
OLDEST_FIRST = ("created_at", "id")


def test_each_payload_is_byte_for_byte_what_its_serializer_describes(generated):
    organization, made = generated
    request = RequestFactory().get("/")
    context = {"request": request}
    ticket_rows = Ticket.objects.filter(organization=organization).order_by(*NEWEST_FIRST)
    tickets = list(_with_threads(ticket_rows))
    replies = list(Reply.objects.filter(ticket__organization=organization).select_related(*AUTHORS))
    public_replies = [reply for reply in replies if not reply.is_internal]
    attachment_rows = Attachment.objects.filter(ticket__organization=organization).order_by(*OLDEST_FIRST)
    attachments = list(attachment_rows.select_related("reply"))
    agent_rows = organization.agents.order_by("name", "id")
    tombstones = list(TicketTombstone.objects.filter(organization=organization).order_by("number"))
    statuses = list(TicketStatus.objects.filter(organization=organization).order_by("position", "name"))
    contact_rows = Contact.objects.filter(organization=organization).order_by("-created_at", "-id")
    rows_with_blocks = _rows(ticket_rows, ticket_columns(ALL_TICKET_BLOCKS))

    with mock.patch.object(signing.time, "time", return_value=1_800_000_000):  # one signing instant for both
        pairs = {
            "TicketPublico from rows": (
                tickets_public(_rows(ticket_rows, TICKET_COLUMNS)),
                TicketPublicOut(tickets, many=True).data,
            ),
            "TicketPublico in hand": (
                tickets_public([ticket_row(ticket) for ticket in tickets]),
                TicketPublicOut(tickets, many=True).data,
            ),
            "TicketPublico just created": (
                ticket_new_public(made["new"]),
                TicketPublicOut(_stored(made["new"])[0]).data,
            ),
            "a webhook's ticket": (
                [ticket_summary(row) for row in _rows(ticket_rows, TICKET_COLUMNS)],
                TicketSummaryOut(tickets, many=True).data,
            ),
            "TicketPublico with every block, from rows": (
                tickets_public(_rows(ticket_rows, ticket_columns(ALL_TICKET_BLOCKS)), ALL_TICKET_BLOCKS),
                TicketPublicWithBlocksOut(tickets, many=True).data,
            ),
            "TicketPublico with every block, in hand": (
                [ticket_public(ticket, ALL_TICKET_BLOCKS) for ticket in tickets],
                TicketPublicWithBlocksOut(tickets, many=True).data,
            ),
            "TicketPublico with every block, just created": (
                ticket_new_public(made["new"], ALL_TICKET_BLOCKS),
                TicketPublicWithBlocksOut(_stored(made["new"])[0]).data,
            ),
            "a webhook's ticket with every block": (
                [
                    {**ticket_summary(row), **keys}
                    for row, keys in zip(rows_with_blocks, ticket_blocks(rows_with_blocks, ALL_TICKET_BLOCKS))
                ],
                TicketSummaryWithBlocksOut(tickets, many=True).data,
            ),
            "an event's blocks, by name": (
                [ticket_blocks_by_name(row) for row in rows_with_blocks],
                [{name: schema(ticket).data for name, schema in TICKET_BLOCK_SCHEMAS.items()} for ticket in tickets],
            ),
            **{
                f"the block {name} alone": (
                    ticket_blocks(_rows(ticket_rows, ticket_columns((name,))), (name,)),
                    schema(tickets, many=True).data,
                )
                for name, schema in TICKET_BLOCK_SCHEMAS.items()
            },
            "the panel's ticket from rows": (
                tickets_panel(_rows(ticket_rows, PANEL_TICKET_COLUMNS)),
                PanelTicketOut(tickets, many=True).data,
            ),
            "the panel's ticket in hand": (
                tickets_panel([ticket_panel_row(made["updated"])]),
                PanelTicketOut(_stored(made["updated"]), many=True).data,
            ),
            "RespostaPublica": (
                [reply_public(reply_row(reply)) for reply in public_replies],
                ReplyPublicOut(public_replies, many=True).data,
            ),
            "the panel's reply": (
                [reply_panel(reply_row(reply)) for reply in replies],
                PanelReplyOut(replies, many=True).data,
            ),
            "replies in hand": (
                [reply_panel(reply_row(reply)) for reply in made["replies"]],
                PanelReplyOut(_stored(*made["replies"]), many=True).data,
            ),
            "a webhook's attachment": (
                [attachment_event(row) for row in _rows(attachment_rows, ATTACHMENT_COLUMNS)],
                AttachmentEventOut(attachments, many=True).data,
            ),
            "Anexo": (
                attachments_public(request, _rows(attachment_rows, ATTACHMENT_COLUMNS)),
                AttachmentOut(attachments, many=True, context=context).data,
            ),
            "the panel's attachment from rows": (
                attachments_panel(request, _rows(attachment_rows, PANEL_ATTACHMENT_COLUMNS)),
                PanelAttachmentOut(attachments, many=True, context=context).data,
            ),
            "the panel's attachment in hand": (
                attachments_panel(request, [attachment_row(attachment) for attachment in made["attachments"]]),
                PanelAttachmentOut(_stored(*made["attachments"]), many=True, context=context).data,
            ),
            "Atendente": (
                agents_public(request, _rows(agent_rows, AGENT_COLUMNS)),
                AgentOut(list(agent_rows), many=True, context=context).data,
            ),
            "a deleted ticket": (
                [tombstone_public(tombstone) for tombstone in tombstones],
                DeletedTicketOut(tombstones, many=True).data,
            ),
            "a status": ([status_public(status) for status in statuses], StatusOut(statuses, many=True).data),
            "Contato from rows": (
                [contact_partner(row) for row in _rows(contact_rows, CONTACT_COLUMNS)],
                PartnerContactOut(list(contact_rows), many=True).data,
            ),
            "Contato in hand": (
                [contact_partner(contact_row(contact)) for contact in made["contacts"]],
                PartnerContactOut(_stored(*made["contacts"]), many=True).data,
            ),
        }

    _assert_every_variant_is_there(pairs)
    for shape, (built, described) in pairs.items():
        assert json_bytes(built) == json_bytes(described), shape


def test_every_block_has_its_schema_in_the_same_order_and_no_more():
    assert list(TICKET_BLOCK_SCHEMAS) == list(TICKET_BLOCKS) == list(ALL_TICKET_BLOCKS)
    for name, block in TICKET_BLOCKS.items():
        assert not set(block.columns) & set(TICKET_COLUMNS), name  # read only when asked for
    # The composed schemas are the ticket's fields, then each block's, in the blocks' order.
    block_fields = [field for schema in TICKET_BLOCK_SCHEMAS.values() for field in schema().fields]
    assert list(TicketPublicWithBlocksOut().fields) == [*TicketPublicOut().fields, *block_fields]
    assert list(TicketSummaryWithBlocksOut().fields) == [*TicketSummaryOut().fields, *block_fields]


def _assert_every_variant_is_there(pairs: dict) -> None:
    """The generated data shows each shape with and without every optional part."""
    tickets = pairs["the panel's ticket from rows"][0]
    thread = [reply for ticket in tickets for reply in ticket["respostas"]]
    files = pairs["the panel's attachment from rows"][0]

    assert len(tickets) == 125
    assert all(built for built, _described in pairs.values())
    assert {reply["interna"] for reply in thread} == {True, False}
    assert {reply["editado"] for reply in thread} == {True, False}
    assert {reply["autor"]["tipo"] for reply in thread} == {"agente", "cliente"}
    for optional in ("atendente", "resolvido_em", "external_id"):
        assert {ticket[optional] is None for ticket in tickets} == {True, False}, optional
    with_blocks = pairs["TicketPublico with every block, from rows"][0]
    assert {ticket["atendente"] is None for ticket in with_blocks} == {True, False}
    assert len({ticket["contato_id"] for ticket in with_blocks}) > 1
    assert {bool(ticket["campos"]) for ticket in with_blocks} == {True, False}
    assert {"oculto" in ticket["campos"] for ticket in tickets} == {True, False}  # the panel shows hidden fields
    assert not any("oculto" in ticket["campos"] for ticket in with_blocks)  # the partner never
    assert {len(ticket["tags"]) for ticket in with_blocks} >= {0, 1, 3}
    assert {ticket["sla"] is None for ticket in with_blocks} == {True, False}
    targets = [target for ticket in with_blocks if ticket["sla"] for target in ticket["sla"]["metas"]]
    assert {target["tipo"] for target in targets} == {"primeira_resposta", "proxima_resposta", "resolucao"}
    for optional in ("vence_em", "cumprida_em"):
        assert {target[optional] is None for target in targets} == {True, False}, optional
    for flag in ("violada", "pausada"):
        assert {target[flag] for target in targets} == {True, False}, flag
    metrics = [ticket["metricas"] for ticket in with_blocks]
    for optional in ("primeira_resposta_em", "tempo_primeira_resposta_min", "tempo_resolucao_min"):
        assert {values[optional] is None for values in metrics} == {True, False}, optional
    assert {values["reaberturas"] for values in metrics} >= {0, 1}
    assert {ticket["avaliacao"] is None for ticket in with_blocks} == {True, False}
    assert {ticket["avaliacao"]["comentario"] == "" for ticket in with_blocks if ticket["avaliacao"]} == {True, False}
    assert {ticket["mesclado_em"] is None for ticket in with_blocks} == {True, False}
    assert {ticket["solicitante"]["telefone"] is None for ticket in tickets} == {True, False}
    assert {ticket["atualizado_em"][-8] == "." for ticket in tickets} == {True, False}  # microseconds or none
    assert {file["interna"] for file in files} == {True, False}
    assert {file["resposta_id"] is None for file in files} == {True, False}
    assert {agent["avatar_url"] is None for agent in pairs["Atendente"][0]} == {True, False}
    for optional in ("email", "telefone", "external_id"):
        assert {contact[optional] is None for contact in pairs["Contato from rows"][0]} == {True, False}, optional
        assert {contact[optional] is None for contact in pairs["Contato in hand"][0]} == {True, False}, optional


# --- the generated organization -----------------------------------------------------------------


@pytest.fixture
def generated(organization):
    """The organization with 120 generated tickets and some deleted ones, and objects just made (`made`):
    what the API answers from without reading them again."""
    agents = _generate(organization, 120)
    make_agent(organization, name="Com foto", avatar=png_file())
    for _ in range(2):
        ticket_delete(ticket=make_ticket(organization, external_id=None), actor=SYSTEM)
    return organization, _made_now(organization, agents)


def _generate(organization, count: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    agents = [make_agent(organization, name=rng.choice(TEXTS)) for _ in range(3)]
    # SLA policies for some priorities (issue 23): `sla` null for the others; tickets opened two days ago breached.
    sla_policies_set(
        organization=organization,
        policies=[Policy("media", 120, 60, 540), Policy("urgente", first_response=30, resolution=2880)],
    )
    two_days_ago = timezone.now() - timedelta(days=2)
    categories = [category for category, _label in StatusCategory.choices]
    for key, field_type, options, visible in (
        ("pedido", "texto", None, True),
        ("valor", "numero", None, True),
        ("itens", "multilista", ["a", "b", "c"], True),
        ("oculto", "booleano", None, False),
    ):
        custom_field_create(
            organization=organization,
            key=key,
            name=key,
            field_type=field_type,
            options=options,
            visible_to_partner=visible,
        )
    field_values = [
        {},
        {"pedido": "A-1", "valor": 10.5},
        {"itens": ["c", "a"], "oculto": True},
        {"oculto": False},
        {"pedido": "Ção ✓", "valor": "-0.000001", "itens": ["b"], "oculto": True},
    ]
    for n in range(count):
        requester = RequesterData(
            name=rng.choice(TEXTS),
            email=rng.choice(["", f"cliente{n}@example.test"]),
            phone=rng.choice(["", "+55 11 9999-0000"]),
            external_id=rng.choice([None, f"cli-{n % 17}"]),
        )
        with mock.patch("django.utils.timezone.now", return_value=two_days_ago if n % 4 == 0 else timezone.now()):
            ticket = make_ticket(
                organization,
                subject=rng.choice(TEXTS),
                description=rng.choice(TEXTS),
                priority=rng.choice([None, "baixa", "media", "alta", "urgente"]),
                external_id=rng.choice([None, f"pedido-{n}"]),
                requester=requester,
            )
        for _ in range(rng.randrange(4)):
            kind = rng.choice(["agent", "note", "customer"])
            if kind == "customer" and ticket.status.category != StatusCategory.CLOSED:
                reply = make_customer_reply(ticket, body=rng.choice(TEXTS))
                if rng.random() < 0.3:
                    reply_edit_as_customer(reply=reply, body=rng.choice(TEXTS))
            elif kind != "customer":
                agent = rng.choice(agents)
                reply = make_agent_reply(ticket, agent, body=rng.choice(TEXTS), internal=kind == "note")
                if rng.random() < 0.3:
                    reply_edit_as_agent(reply=reply, agent=agent, body=rng.choice(TEXTS))
            ticket = Ticket.objects.select_related("status").get(pk=ticket.pk)
        ticket = ticket_update(
            ticket=ticket,
            status=status_of(organization, rng.choice(categories)),
            assignee=rng.choice([None, *agents]),
            # No tags, or a few (issue 22): normalised from what was given.
            tags_add=rng.sample(["vip", "Loja Centro", "ágil", "erp"], rng.choice([0, 0, 1, 3])),
        )
        ticket = ticket_fields_set(ticket=ticket, values=rng.choice(field_values), actor=SYSTEM)
        if ticket.status.category == StatusCategory.RESOLVED and rng.random() < 0.6:  # rated (`avaliacao`)
            comment = rng.choice(["", *TEXTS])
            ticket_rate_by_customer(
                organization=organization, ticket_id=ticket.pk, score=rng.randint(1, 5), comment=comment
            )
        if ticket.status.category == StatusCategory.RESOLVED and rng.random() < 0.5:
            make_customer_reply(ticket, body=rng.choice(TEXTS))  # reopened (`reaberturas`)
    _merge_some(organization)
    # Timestamps without microseconds are written without a fraction: both sides must agree.
    whole_second = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    Ticket.objects.filter(organization=organization, number__lte=count // 5).update(updated_at=whole_second)
    Reply.objects.filter(ticket__organization=organization, ticket__number__lte=count // 5).update(
        created_at=whole_second
    )
    return agents


def _merge_some(organization) -> None:
    """A few merged (`mesclagem`): each 25th ticket into the next one."""
    numbered = list(Ticket.objects.filter(organization=organization).order_by("number"))
    for source, target in zip(numbered[::25], numbered[1::25], strict=False):
        tickets_merge(target=target, sources=[source], actor=SYSTEM)


def _made_now(organization, agents) -> dict:
    """Objects as the services return them, each on its own ticket, nothing changed after it."""
    new = make_ticket(
        organization,
        external_id="novo",
        requester=RequesterData(name="Ana", email="ana@example.test", phone="1199", external_id="ana-1"),
    )
    updated = ticket_update(ticket=make_ticket(organization), status=status_of(organization, "resolvido"))
    updated = ticket_update(ticket=updated, assignee=agents[0], tags_add=["vip", "Cliente Novo"])
    with_files = make_ticket(organization)
    customer = make_customer_reply(with_files, body="Segue a foto")
    by_partner = attachment_add_by_partner(ticket=with_files, upload=upload_file(), reply_id=customer.pk)
    alone = attachment_add_by_partner(ticket=with_files, upload=upload_file(TEXT, "a.txt", "text/plain"))
    note_file = upload_file(TEXT, "n.txt", "text/plain")
    note, note_files = reply_create_with_attachments(
        ticket=with_files, agent=agents[1], body="Nota", internal=True, uploads=[note_file]
    )
    public, public_files = reply_create_with_attachments(
        ticket=with_files, agent=agents[1], body="Resposta", internal=False, uploads=[upload_file()]
    )
    edited = reply_edit_as_agent(reply=public, agent=agents[1], body="Resposta editada")
    edited_by_customer = reply_edit_as_customer(reply=customer, body="Segue a foto, editada")
    corrected = [
        contact_update(contact=make_ticket(organization).requester, actor=SYSTEM, **change)
        for change in (
            {"name": "Bia Souza", "email": None, "phone": "+55 (11) 5555-0000"},
            {"email": "Bia@Example.test", "phone": None, "external_id": None},
        )
    ]
    return {
        "new": new,
        "contacts": corrected,
        "updated": updated,
        "replies": [note, edited, edited_by_customer],
        "attachments": [by_partner, alone, *note_files, *public_files],
    }


# --- both sides ---------------------------------------------------------------------------------


def _rows(queryset, columns) -> list:
    """The rows the API reads."""
    return list(queryset.values_list(*columns, named=True))


def _thread(to_attr: str, queryset):
    related = queryset.select_related(*AUTHORS).order_by(*OLDEST_FIRST)
    return Prefetch("replies", queryset=related, to_attr=to_attr)


def _with_threads(tickets):
    return tickets.select_related("status", "requester", "assignee", "current_rating").prefetch_related(
        _thread("public_replies", Reply.objects.filter(is_internal=False)), _thread("thread", Reply.objects.all())
    )


def _stored(*objects) -> list:
    """What the database holds of objects in hand, read as the serializers read it."""
    readers = {
        Ticket: _with_threads(Ticket.objects.all()),
        Reply: Reply.objects.select_related(*AUTHORS),
        Attachment: Attachment.objects.select_related("reply"),
        Contact: Contact.objects.all(),
    }
    stored = readers[type(objects[0])].in_bulk([obj.pk for obj in objects])
    return [stored[obj.pk] for obj in objects]
