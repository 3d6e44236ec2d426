"""The panel's macro, built in one place (macros.api.serializers.MacroOut describes it for the schema)."""

from macros.models import Assignment, Macro


def macro_assignment(macro: Macro) -> str | None:
    """`eu`, `nenhum`, the agent's id, or None for "keep the assignee"."""
    if macro.assignment == Assignment.ME:
        return "eu"
    if macro.assignment == Assignment.NONE:
        return "nenhum"
    if macro.assignment == Assignment.AGENT and macro.assignee_id:
        return str(macro.assignee_id)
    return None


def macro_panel(macro: Macro) -> dict:
    return {
        "id": str(macro.pk),
        "nome": macro.name,
        "mensagem": macro.body,
        "interna": macro.internal,
        "acoes": {
            "status_id": str(macro.status_id) if macro.status_id else None,
            "prioridade": macro.priority or None,
            "atendente": macro_assignment(macro),
            "tags": {"adicionar": list(macro.tags_add), "remover": list(macro.tags_remove)},
        },
    }
