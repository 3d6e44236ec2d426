"""A macro's placeholders: four names, filled by plain text substitution (docs/decisions.md, "Macros").

Never a template engine: a name is looked up in a fixed mapping of four strings built from the ticket and the
agent, so nothing typed in a macro can reach an attribute, a method or a setting. Anything else between `{{ }}`
is refused when the macro is saved; `{% ... %}` and single braces are text like any other.
"""

import re

from foundation.exceptions import ValidationFailed

# `{{ name }}`: spaces inside the braces tolerated; no brace inside, so `{{ {{x}} }}` names `x` only.
PLACEHOLDER_RE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
PLACEHOLDERS = ("solicitante.nome", "ticket.numero", "ticket.assunto", "atendente.nome")
_KNOWN = ", ".join(f"{{{{{name}}}}}" for name in PLACEHOLDERS)


def placeholders_unknown(text: str) -> list[str]:
    """The names between `{{ }}` that are not placeholders, each once, in the order they appear."""
    return list(dict.fromkeys(name for name in PLACEHOLDER_RE.findall(text or "") if name not in PLACEHOLDERS))


def placeholders_check(text: str, *, field: str = "mensagem") -> None:
    """A 422 on `field` naming every unknown placeholder (`{{ticket.organization.api_credentials}}`)."""
    unknown = placeholders_unknown(text)
    if unknown:
        named = ", ".join(f"{{{{{name}}}}}" for name in unknown)
        raise ValidationFailed({field: [f"Variável desconhecida: {named}. Use somente {_KNOWN}."]})


def placeholders_values(*, ticket, agent) -> dict[str, str]:
    """The four values, as text: all a macro's message can ever show of the ticket and the agent."""
    return {
        "solicitante.nome": ticket.requester.name,
        "ticket.numero": str(ticket.number),
        "ticket.assunto": ticket.subject,
        "atendente.nome": agent.name,
    }


def placeholders_fill(text: str, values: dict[str, str]) -> str:
    """One pass of substitution: a value that itself reads `{{...}}` (a subject a customer typed) stays as text;
    a name outside `values` (none survives macro_check) stays as typed."""
    return PLACEHOLDER_RE.sub(lambda match: values.get(match.group(1), match.group(0)), text or "")
