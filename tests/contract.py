"""What the service promises, written out once: field sets, event names, key format, error envelopes, admin paths.

The values are literal on purpose: a test compares the service against this
text, never against the service's own constants.
"""

import re

# The ticket of a webhook payload (TicketSummaryOut): the public ticket without its replies, in the
# contract's order of keys.
TICKET_SUMMARY_ORDER = [
    "id",
    "numero",
    "assunto",
    "descricao",
    "prioridade",
    "canal_origem",
    "status",
    "solicitante",
    "external_id",
    "origem_sistema",
    "criado_em",
    "atualizado_em",
    "resolvido_em",
]
TICKET_SUMMARY_FIELDS = set(TICKET_SUMMARY_ORDER)
# A ticket of the partner API (/api/v1/tickets): the summary and its public replies.
TICKET_FIELDS = TICKET_SUMMARY_FIELDS | {"respostas"}
# A ticket of the agent panel (/api/tickets): also its assignee, and replies that include internal notes.
# ... and its custom fields and tags (issue 22).
PANEL_TICKET_FIELDS = TICKET_FIELDS | {"atendente", "campos", "tags"}

# The smallest valid body of POST /api/v1/tickets.
TICKET_BODY = {"assunto": "Impressora", "descricao": "Não imprime.", "solicitante": {"nome": "Ana"}}

# Every event a webhook may subscribe to.
ALL_EVENTS = [
    "ticket.criado",
    "ticket.resposta_publica",
    "ticket.resposta_editada",
    "ticket.status_alterado",
    "ticket.resolvido",
    "ticket.prioridade_alterada",
    "ticket.atribuido",
    "ticket.tags_alteradas",
    "ticket.anexo_adicionado",
    "ticket.excluido",
    "contato.anonimizado",
    "ticket.campos_alterados",
    "ticket.sla_em_risco",
    "ticket.sla_violado",
    "ticket.mesclado",
]
# What every event's `data.ator` may be: an agent as GET /api/v1/atendentes shows it, or the system.
ACTOR_SYSTEM = {"tipo": "sistema"}

# The ticket changelist of the admin, where staff start.
TICKET_CHANGELIST = "/admin/tickets/ticket/"
# An agent's list opens on "Meus tickets" (a redirect); every ticket is the queue "todos".
TICKET_LIST_ALL = "/admin/tickets/ticket/?fila=todos"

# A partner key as shown once on creation: prefix and 40 base62 characters.
KEY_RE = re.compile(r"hdk_live_[0-9A-Za-z]{40}")


def error_envelope(status: int, message: str, field: str, detail: str) -> dict:
    """The whole error envelope, to compare a response against when its detail message is part of the contract."""
    return {
        "success": False,
        "message": message,
        "status": status,
        "data": None,
        "errors": {"field": field, "message": detail},
    }


NOT_AUTHENTICATED = error_envelope(401, "Não autenticado.", "api_key", "Credencial ausente, inválida ou revogada.")
TICKET_NOT_FOUND = error_envelope(404, "Ticket não encontrado.", "id", "Ticket inexistente nesta organização.")
REPLY_NOT_FOUND = error_envelope(404, "Resposta não encontrada.", "resposta", "Resposta inexistente neste ticket.")
# Every route, while the database is down or does not answer.
DATABASE_DOWN = error_envelope(503, "Serviço indisponível.", "database", "database indisponível.")
