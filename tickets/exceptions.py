from helpdesk.exceptions import AccessDenied, Conflict, NotFound


class TicketNotFound(NotFound):
    message = "Ticket não encontrado."
    field = "id"
    detail = "Ticket inexistente nesta organização."


class ReplyNotFound(NotFound):
    message = "Resposta não encontrada."
    field = "resposta"
    detail = "Resposta inexistente neste ticket."


class ReplyNotEditable(AccessDenied):
    field = "resposta"
    detail = "Esta resposta não foi enviada por você e não pode ser editada."


class TicketClosed(Conflict):
    message = "Ticket fechado."
    field = "status"
    detail = "Tickets fechados não recebem novas respostas."


class StatusNotFound(NotFound):
    message = "Status não encontrado."
    field = "status_id"
    detail = "Status inexistente nesta organização."
