"""What partners (and the panel) are shown of tickets, replies, attachments, agents and contacts: each
shape described once, here, and built from named rows.

Each shape reads the columns named beside it (`values_list(*COLUMNS, named=True)`, or `row_of` for
objects in hand after a write), and its builder reads every value by its column's name. The API, the
change list, webhook events and the data-subject export all build their bodies here, without a model
instance or a DRF field per value (docs/performance.md). The serializers in tickets.api stay the
documented schema; tests/tickets/test_payloads.py checks, byte for byte, that each builder gives what its
serializer describes. docs/decisions.md, "Adding a field to a payload", says what a new field touches,
and "Adding an incluir block" what a new optional block of the ticket touches.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC

from django.utils import timezone

from foundation.rows import row_of
from helpdesk.api.avatars import avatar_url
from tickets.attachments.signing import attachment_url
from tickets.fields.selectors import fields_shown, shown_values
from tickets.models import Attachment, Contact, Reply, ReplyOrigin, Ticket, TicketStatus
from tickets.selectors import reply_rows_by_ticket
from tickets.service_levels import sla_view, target_view

# --- columns: what each shape reads --------------------------------------------------------------

TICKET_COLUMNS = (
    "id",
    "number",
    "subject",
    "description",
    "priority",
    "channel",
    "external_id",
    "source_system",
    "created_at",
    "updated_at",
    "resolved_at",
    "status__name",
    "status__category",
    "status__color",
    "requester__name",
    "requester__email",
    "requester__phone",
    "requester__external_id",
)
PANEL_TICKET_COLUMNS = (*TICKET_COLUMNS, "status_id", "assignee_id", "assignee__name", "custom_fields", "tags")
REPLY_COLUMNS = (
    "ticket_id",
    "id",
    "body",
    "origin",
    "edited",
    "created_at",
    "is_internal",
    "author_agent__name",
    "author_contact__name",
    "author_contact__email",
    "author_contact__external_id",
)
ATTACHMENT_COLUMNS = ("id", "name", "content_type", "size", "reply_id", "created_at", "organization_id")
PANEL_ATTACHMENT_COLUMNS = (*ATTACHMENT_COLUMNS, "reply__is_internal")
EXPORTED_ATTACHMENT_COLUMNS = (*ATTACHMENT_COLUMNS, "ticket_id")
AGENT_COLUMNS = ("id", "name", "avatar")
CONTACT_COLUMNS = ("id", "name", "email", "phone", "external_id", "created_at", "updated_at")


def iso(value) -> str | None:
    """A timestamp as DRF writes it: ISO 8601 in UTC with "Z", microseconds only when there are any."""
    if value is None:
        return None
    if value.tzinfo is None or value.utcoffset():
        value = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return value.isoformat()[:-6] + "Z"


# --- tickets ------------------------------------------------------------------------------------


def rating_public(rating) -> dict:
    """A rating as POST /api/v1/tickets/{id}/avaliacao answers it (the `avaliacao` block's value)."""
    return {"nota": rating.score, "comentario": rating.comment, "criado_em": iso(rating.created_at)}


def ticket_summary(row) -> dict:
    """TicketPublico without respostas, from a TICKET_COLUMNS row (also a webhook's `ticket`)."""
    return {
        "id": str(row.id),
        "numero": row.number,
        "assunto": row.subject,
        "descricao": row.description,
        "prioridade": row.priority,
        "canal_origem": row.channel,
        "status": _status(row.status__name, row.status__category, row.status__color),
        "solicitante": {
            "nome": row.requester__name,
            "email": row.requester__email or None,
            "telefone": row.requester__phone or None,
            "external_id": row.requester__external_id or None,
        },
        "external_id": row.external_id or None,
        "origem_sistema": row.source_system,
        "criado_em": iso(row.created_at),
        "atualizado_em": iso(row.updated_at),
        "resolvido_em": iso(row.resolved_at),
    }


def tickets_public(rows, blocks: tuple[str, ...] = ()) -> list[dict]:
    """TicketPublico for each row of `ticket_columns(blocks)`, with its public replies (one query for all of
    them), then the keys of the `incluir` blocks asked for."""
    replies = reply_rows_by_ticket([row.id for row in rows], columns=REPLY_COLUMNS)
    added = ticket_blocks(rows, blocks)
    return [
        {**ticket_summary(row), "respostas": [reply_public(r) for r in replies[row.id]], **keys}
        for row, keys in zip(rows, added, strict=True)
    ]


def tickets_panel(rows) -> list[dict]:
    """The panel's ticket for each PANEL_TICKET_COLUMNS row, with the whole thread (one query)."""
    replies = reply_rows_by_ticket([row.id for row in rows], columns=REPLY_COLUMNS, include_internal=True)
    return [_ticket_panel(row, [reply_panel(r) for r in replies[row.id]]) for row in rows]


def _ticket_panel(row, thread: list[dict]) -> dict:
    payload = ticket_summary(row)
    payload["status"] = {"id": str(row.status_id), **payload["status"]}
    payload["atendente"] = agent_ref(row.assignee_id, row.assignee__name) if row.assignee_id else None
    payload["campos"] = row.custom_fields or {}
    payload["tags"] = list(row.tags)
    payload["respostas"] = thread
    return payload


def ticket_new_public(ticket: Ticket, blocks: tuple[str, ...] = ()) -> dict:
    """A ticket just created, from the objects in hand: it has no replies yet."""
    row = ticket_row(ticket, blocks)
    return {**ticket_summary(row), "respostas": [], **ticket_blocks([row], blocks)[0]}


def ticket_public(ticket: Ticket, blocks: tuple[str, ...] = ()) -> dict:
    """TicketPublico of a ticket in hand (after a write; its status, requester and, for `atendente`, its
    assignee loaded with it), with the blocks asked for."""
    return tickets_public([ticket_row(ticket, blocks)], blocks)[0]


def ticket_fields_public(ticket: Ticket) -> dict:
    """The answer of PATCH /api/v1/tickets/{id}/campos: the ticket's `campos` block."""
    return {"campos": shown_values(fields_shown(ticket.organization_id), ticket.custom_fields)}


def ticket_ref(ticket) -> dict:
    """A ticket as partners identify it (a deleted one, one of an anonymized contact's): any object with
    `id`, `number` and `external_id`."""
    return {"id": str(ticket.id), "numero": ticket.number, "external_id": ticket.external_id or None}


def tombstone_public(tombstone) -> dict:
    """A deleted ticket, as the change list's `excluidos` and `ticket.excluido` name it."""
    return {**ticket_ref(tombstone), "excluido_em": iso(tombstone.deleted_at)}


def status_public(status: TicketStatus) -> dict:
    """A status as a ticket shows it (a status change's `anterior` and `atual`)."""
    return _status(status.name, status.category, status.color)


def _status(name: str, category: str, color: str) -> dict:
    return {"nome": name, "categoria": category, "cor": color}


def ticket_row(ticket: Ticket, blocks: tuple[str, ...] = ()) -> tuple:
    """The `ticket_columns(blocks)` row of a ticket in hand (after a write), its status and requester (and
    its assignee, for `atendente`) loaded with it."""
    return row_of(ticket, ticket_columns(blocks))


def ticket_panel_row(ticket: Ticket) -> tuple:
    """The PANEL_TICKET_COLUMNS row of a ticket in hand (after a write)."""
    return row_of(ticket, PANEL_TICKET_COLUMNS)


# --- optional blocks of a ticket (`incluir`) -----------------------------------------------------


@dataclass(frozen=True)
class TicketBlock:
    """More about a ticket, for a partner who asks for it with `incluir=<name>`: the ticket columns it reads
    (added to the ticket's own query, only when asked) and its builder, which gives the block's top-level keys
    for each row of a page at once (a block that needs other rows reads them for the whole page, in one
    statement, never one per ticket). Its schema is the serializer of the same name in
    tickets.api.serializers (TICKET_BLOCK_SCHEMAS), under the same oracle as every shape here."""

    columns: tuple[str, ...]
    build: Callable[[list], list[dict]]
    # What an event freezes, when it must not come from a cache (the `campos` block: definitions read afresh).
    build_fresh: Callable[[list], list[dict]] | None = None


def _each(build_one: Callable[[tuple], dict]) -> Callable[[list], list[dict]]:
    return lambda rows: [build_one(row) for row in rows]


def _assignee_block(row) -> dict:
    return {"atendente": agent_ref(row.assignee_id, row.assignee__name) if row.assignee_id else None}


def _contact_block(row) -> dict:
    return {"contato_id": str(row.requester_id)}


def _custom_fields_block(rows, *, fresh: bool = False) -> list[dict]:
    """`campos`: each ticket's values of the fields partners see (visible and active), in the fields' order. The
    organization's fields come from their cache (no statement once warm); none is read for a page without values."""
    if not any(row.custom_fields for row in rows):
        return [{"campos": {}} for _ in rows]
    shown = fields_shown(rows[0].organization_id, fresh=fresh)
    return [{"campos": shown_values(shown, row.custom_fields)} for row in rows]


def _tags_block(row) -> dict:
    # Stored normalised, unique and sorted (tickets.tags): a column of the ticket row itself.
    return {"tags": list(row.tags)}


def sla_public(clock_json: dict | None, now) -> dict | None:
    """The `sla` block's value (an SLA event's `data.sla`): the ticket's targets as stored by its clock
    (tickets.service_levels.sla_view); only `violada` of a running target depends on `now`."""
    view = sla_view(clock_json, now=now)
    if view is not None:
        view["metas"] = [_target_instants(target) for target in view["metas"]]
    return view


def sla_target_public(target, now) -> dict:
    """One target (sla.clock.Target) as `metas` shows it: an SLA event's `data.meta`."""
    return _target_instants(target_view(target, now=now))


def _target_instants(target: dict) -> dict:
    return target | {"vence_em": iso(target["vence_em"]), "cumprida_em": iso(target["cumprida_em"])}


def _sla_block(rows) -> list[dict]:
    now = timezone.now()
    return [{"sla": sla_public(row.sla_clock, now)} for row in rows]


METRICS_COLUMNS = (
    "first_response_at",
    "first_response_minutes",
    "resolution_minutes",
    "reopen_count",
    "agent_reply_count",
    "customer_reply_count",
)


def _metrics_block(row) -> dict:
    return {
        "metricas": {
            "primeira_resposta_em": iso(row.first_response_at),
            "tempo_primeira_resposta_min": row.first_response_minutes,
            "tempo_resolucao_min": row.resolution_minutes,
            "reaberturas": row.reopen_count,
            "respostas_agente": row.agent_reply_count,
            "respostas_cliente": row.customer_reply_count,
        }
    }


def _rating_block(row) -> dict:
    """`avaliacao`: the rating of the ticket's last resolution cycle (a column of the ticket's own query: a join)."""
    if row.current_rating__score is None:
        return {"avaliacao": None}
    return {
        "avaliacao": {
            "nota": row.current_rating__score,
            "comentario": row.current_rating__comment,
            "criado_em": iso(row.current_rating__created_at),
        }
    }


def _merge_block(row) -> dict:
    """`mesclagem`: the ticket this one was merged into (tickets.merging), a join of the ticket's own query."""
    if row.merged_into_id is None:
        return {"mesclado_em": None}
    return {"mesclado_em": {"id": str(row.merged_into_id), "numero": row.merged_into__number}}


# Every block, by the name `incluir` takes; their keys follow the ticket's own, in this order.
TICKET_BLOCKS = {
    "atendente": TicketBlock(columns=("assignee_id", "assignee__name"), build=_each(_assignee_block)),
    "contato": TicketBlock(columns=("requester_id",), build=_each(_contact_block)),
    "tags": TicketBlock(columns=("tags",), build=_each(_tags_block)),
    "campos": TicketBlock(
        columns=("custom_fields", "organization_id"),
        build=_custom_fields_block,
        build_fresh=lambda rows: _custom_fields_block(rows, fresh=True),
    ),
    "sla": TicketBlock(columns=("sla_clock",), build=_sla_block),
    "metricas": TicketBlock(columns=METRICS_COLUMNS, build=_each(_metrics_block)),
    "avaliacao": TicketBlock(
        columns=("current_rating__score", "current_rating__comment", "current_rating__created_at"),
        build=_each(_rating_block),
    ),
    "mesclagem": TicketBlock(columns=("merged_into_id", "merged_into__number"), build=_each(_merge_block)),
}
ALL_TICKET_BLOCKS = tuple(TICKET_BLOCKS)


def ticket_blocks_unknown(names: Iterable[str]) -> list[str]:
    """The names `incluir` does not know, as given (each once)."""
    return [name for name in dict.fromkeys(names) if name not in TICKET_BLOCKS]


def ticket_blocks_chosen(names: Iterable[str]) -> tuple[str, ...]:
    """Known names, each once, in the blocks' order (which is the order of their keys)."""
    wanted = set(names)
    return tuple(name for name in TICKET_BLOCKS if name in wanted)


def ticket_blocks_unknown_message(unknown: list[str]) -> str:
    """The 422 on `incluir`, in a query and in a webhook's setting alike."""
    return f"Bloco desconhecido: {', '.join(unknown)}. Blocos aceitos: {', '.join(TICKET_BLOCKS)}."


def ticket_columns(blocks: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What a ticket's row reads: TICKET_COLUMNS, and the columns of the blocks asked for."""
    extra = (column for name in blocks for column in TICKET_BLOCKS[name].columns)
    return tuple(dict.fromkeys((*TICKET_COLUMNS, *extra)))


def ticket_blocks(rows: list, blocks: tuple[str, ...]) -> list[dict]:
    """For each row, the keys of the blocks asked for (rows of `ticket_columns(blocks)`)."""
    added: list[dict] = [{} for _ in rows]
    for name in blocks:
        for keys, block_keys in zip(added, TICKET_BLOCKS[name].build(rows), strict=True):
            keys.update(block_keys)
    return added


def ticket_blocks_by_name(row) -> dict:
    """Every block of one ticket, by name (a row of `ticket_columns(ALL_TICKET_BLOCKS)`): what an event keeps
    beside its body, so the feed and each webhook add the ones they ask for without reading the ticket again."""
    return {name: (block.build_fresh or block.build)([row])[0] for name, block in TICKET_BLOCKS.items()}


# --- replies ------------------------------------------------------------------------------------


def reply_public(row) -> dict:
    """RespostaPublica from a REPLY_COLUMNS row; agents' e-mail addresses are not the partner's business."""
    if row.origin == ReplyOrigin.AGENT:
        author = {"tipo": "agente", "nome": row.author_agent__name, "email": None, "external_id": None}
    else:
        author = {
            "tipo": "cliente",
            "nome": row.author_contact__name,
            "email": row.author_contact__email or None,
            "external_id": row.author_contact__external_id or None,
        }
    return {
        "id": str(row.id),
        "mensagem": row.body,
        "origem": row.origin,
        "editado": bool(row.edited),
        "autor": author,
        "criado_em": iso(row.created_at),
    }


def reply_panel(row) -> dict:
    return {**reply_public(row), "interna": bool(row.is_internal)}


def reply_row(reply: Reply) -> tuple:
    """The REPLY_COLUMNS row of a reply in hand, its author loaded with it."""
    return row_of(reply, REPLY_COLUMNS)


# --- attachments --------------------------------------------------------------------------------


def attachment_event(row) -> dict:
    """A webhook's `anexo`, from an ATTACHMENT_COLUMNS row: no link (it would expire before the retries end)."""
    return {
        "id": str(row.id),
        "nome": row.name,
        "tipo": row.content_type,
        "tamanho": row.size,
        "resposta_id": str(row.reply_id) if row.reply_id else None,
        "criado_em": iso(row.created_at),
    }


def attachments_public(request, rows) -> list[dict]:
    """Anexo for each ATTACHMENT_COLUMNS row, with its signed download link."""
    return [{**attachment_event(row), "url": attachment_url(request, row.id, row.organization_id)} for row in rows]


def attachments_panel(request, rows) -> list[dict]:
    """The panel's attachment for each PANEL_ATTACHMENT_COLUMNS row: an agents' link, and whether it is a note's."""
    return [
        {
            **attachment_event(row),
            "url": attachment_url(request, row.id, row.organization_id, for_agent=True),
            "interna": bool(row.reply__is_internal),
        }
        for row in rows
    ]


def attachments_exported(request, rows) -> list[dict]:
    """A data-subject export's attachment for each EXPORTED_ATTACHMENT_COLUMNS row: which ticket, and a link."""
    return [
        {
            **attachment_event(row),
            "ticket_id": str(row.ticket_id),
            "url": attachment_url(request, row.id, row.organization_id),
        }
        for row in rows
    ]


def attachment_row(attachment: Attachment) -> tuple:
    """The PANEL_ATTACHMENT_COLUMNS row of an attachment the service returned (no re-read)."""
    return row_of(attachment, PANEL_ATTACHMENT_COLUMNS)


# --- agents and contacts ------------------------------------------------------------------------


def agents_public(request, rows) -> list[dict]:
    """Atendente for each AGENT_COLUMNS row, with its signed photo link (null without a photo)."""
    return [
        {"id": str(row.id), "nome": row.name, "avatar_url": avatar_url(request, row.id, row.avatar)} for row in rows
    ]


def agent_ref(agent_id, name: str) -> dict:
    """An agent named in a ticket: the panel's `atendente`, an assignment's `anterior` and `atual`."""
    return {"id": str(agent_id), "nome": name}


def contact_partner(row) -> dict:
    """Contato, as the partner API shows it (PartnerContactOut), from a CONTACT_COLUMNS row: optional values
    it lacks are null, as in a ticket's `solicitante`. An anonymised contact shows its neutral values."""
    return {
        "id": str(row.id),
        "nome": row.name,
        "email": row.email or None,
        "telefone": row.phone or None,
        "external_id": row.external_id or None,
        "criado_em": iso(row.created_at),
        "atualizado_em": iso(row.updated_at),
    }


def contact_row(contact: Contact) -> tuple:
    """The CONTACT_COLUMNS row of a contact in hand (after a write)."""
    return row_of(contact, CONTACT_COLUMNS)


def contact_public(contact: Contact) -> dict:
    """The contact as the management API's data-subject requests show it (ContactOut: with `anonimizado_em`),
    and `contato.anonimizado` carries it. The partner API's Contato is contact_partner."""
    return {
        "id": str(contact.pk),
        "nome": contact.name,
        "email": contact.email or None,
        "telefone": contact.phone or None,
        "external_id": contact.external_id or None,
        "criado_em": iso(contact.created_at),
        "anonimizado_em": iso(contact.anonymized_at),
    }
