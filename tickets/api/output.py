"""TicketPublico and RespostaPublica (and the panel's shapes) built straight from rows.

The hot paths build their output here, without a model instance or a DRF field
per value. The serializers in tickets.api.serializers and panel_serializers
stay the documented schema and the oracle: tests/tickets/test_fast_output.py
checks that these builders give exactly what the serializers give.
"""

from datetime import UTC

from tickets.models import Reply, ReplyOrigin, Ticket, TicketStatus, TicketTombstone
from tickets.selectors import TICKET_COLUMNS, reply_rows_by_ticket


def iso(value) -> str | None:
    """A timestamp as DRF writes it: ISO 8601 in UTC with "Z", microseconds only when there are any."""
    if value is None:
        return None
    if value.tzinfo is None or value.utcoffset():
        value = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return value.isoformat()[:-6] + "Z"


def ticket_summary(row) -> dict:
    """TicketPublico without respostas, from a TICKET_COLUMNS row (also a webhook's `ticket`)."""
    return {
        "id": str(row[0]),
        "numero": row[1],
        "assunto": row[2],
        "descricao": row[3],
        "prioridade": row[4],
        "canal_origem": row[5],
        "status": {"nome": row[11], "categoria": row[12], "cor": row[13]},
        "solicitante": {
            "nome": row[14],
            "email": row[15] or None,
            "telefone": row[16] or None,
            "external_id": row[17] or None,
        },
        "external_id": row[6] or None,
        "origem_sistema": row[7],
        "criado_em": iso(row[8]),
        "atualizado_em": iso(row[9]),
        "resolvido_em": iso(row[10]),
    }


def tombstone_public(tombstone: TicketTombstone) -> dict:
    """A deleted ticket, as the change list's `excluidos` and `ticket.excluido` name it."""
    return {
        "id": str(tombstone.pk),
        "numero": tombstone.number,
        "external_id": tombstone.external_id or None,
        "excluido_em": iso(tombstone.deleted_at),
    }


def reply_public(row) -> dict:
    """RespostaPublica from a REPLY_COLUMNS row; agents' e-mail addresses are not the partner's business."""
    if row[3] == ReplyOrigin.AGENT:
        author = {"tipo": "agente", "nome": row[8], "email": None, "external_id": None}
    else:
        author = {"tipo": "cliente", "nome": row[9], "email": row[10] or None, "external_id": row[11] or None}
    return {
        "id": str(row[1]),
        "mensagem": row[2],
        "origem": row[3],
        "editado": bool(row[4]),
        "autor": author,
        "criado_em": iso(row[5]),
    }


def reply_panel(row) -> dict:
    return {**reply_public(row), "interna": bool(row[6])}


def tickets_public(rows) -> list[dict]:
    """TicketPublico for each row, with its public replies (one query for all of them)."""
    replies = reply_rows_by_ticket([row[0] for row in rows])
    return [{**ticket_summary(row), "respostas": [reply_public(r) for r in replies[row[0]]]} for row in rows]


def tickets_panel(rows) -> list[dict]:
    """The panel's ticket for each PANEL_TICKET_COLUMNS row, with the whole thread (one query)."""
    replies = reply_rows_by_ticket([row[0] for row in rows], include_internal=True)
    return [_ticket_panel(row, [reply_panel(r) for r in replies[row[0]]]) for row in rows]


def _ticket_panel(row, thread: list[dict]) -> dict:
    payload = ticket_summary(row)
    payload["status"] = {"id": str(row[18]), **payload["status"]}
    payload["atendente"] = {"id": str(row[19]), "nome": row[20]} if row[19] else None
    payload["respostas"] = thread
    return payload


def ticket_new_public(ticket: Ticket) -> dict:
    """A ticket just created, from the objects in hand: it has no replies yet."""
    return {**ticket_summary(ticket_row(ticket)), "respostas": []}


def reply_row(reply: Reply) -> tuple:
    """A REPLY_COLUMNS row from a reply in hand, its author loaded with it."""
    agent, contact = reply.author_agent, reply.author_contact
    return (
        reply.ticket_id,
        reply.pk,
        reply.body,
        reply.origin,
        reply.edited,
        reply.created_at,
        reply.is_internal,
        reply.author_agent_id,
        agent.name if agent else None,
        contact.name if contact else None,
        contact.email if contact else None,
        contact.external_id if contact else None,
    )


def ticket_panel_row(ticket: Ticket) -> tuple:
    """A PANEL_TICKET_COLUMNS row from a ticket in hand (after a write)."""
    assignee = ticket.assignee
    return (*ticket_row(ticket), ticket.status_id, ticket.assignee_id, assignee.name if assignee else None)


def ticket_row(ticket: Ticket, status: TicketStatus | None = None) -> tuple:
    """A TICKET_COLUMNS row from objects in hand (after a write), so nothing is read again."""
    status = status or ticket.status
    requester = ticket.requester
    values = {
        **{name: getattr(ticket, name) for name in TICKET_COLUMNS if "__" not in name},
        "status__name": status.name,
        "status__category": status.category,
        "status__color": status.color,
        "requester__name": requester.name,
        "requester__email": requester.email,
        "requester__phone": requester.phone,
        "requester__external_id": requester.external_id,
    }
    return tuple(values[name] for name in TICKET_COLUMNS)
