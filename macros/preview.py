"""What applying a macro would do to a ticket, in words, for the ticket page of the admin (a read)."""

from helpdesk.models import Agent
from macros.models import Assignment, Macro
from macros.placeholders import placeholders_fill, placeholders_values
from tickets.models import Priority, Ticket


def macro_preview(*, ticket: Ticket, macro: Macro, agent: Agent) -> dict:
    """`mensagem` filled for this ticket and agent, `interna`, and `acoes`: one line per change it applies."""
    actions = []
    if macro.status_id:
        actions.append(f"Status: {macro.status.name}")
    if macro.priority:
        actions.append(f"Prioridade: {Priority(macro.priority).label}")
    if macro.assignment == Assignment.ME:
        actions.append(f"Atendente: você ({agent.name})")
    elif macro.assignment == Assignment.AGENT and macro.assignee_id:
        inactive = "" if macro.assignee.is_active else " (inativo: a macro será recusada)"
        actions.append(f"Atendente: {macro.assignee.name}{inactive}")
    elif macro.assignment == Assignment.NONE:
        actions.append("Atendente: nenhum")
    if macro.tags_add:
        actions.append("Acrescentar tags: " + ", ".join(macro.tags_add))
    if macro.tags_remove:
        actions.append("Retirar tags: " + ", ".join(macro.tags_remove))
    return {
        "mensagem": placeholders_fill(macro.body, placeholders_values(ticket=ticket, agent=agent)),
        "interna": macro.internal,
        "acoes": actions,
    }
