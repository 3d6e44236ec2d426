"""The rules of a ticket's custom field values, for the services that write them (tickets.services): which
fields a door may write, each value in its kept form, and a ticket's values in its fields' order."""

from dataclasses import dataclass

from foundation.exceptions import ValidationFailed
from helpdesk.actors import Actor
from tickets.fields.selectors import definitions_by_key
from tickets.fields.values import BadValue, FieldDefinition, clean


@dataclass(frozen=True)
class FieldChange:
    """One field's value before and after a write (None: no value), and whether partners see the field."""

    previous: object
    current: object
    shown_to_partner: bool


def custom_values_clean(
    *, definitions: tuple[FieldDefinition, ...], values, actor: Actor, prefix: str = "campos"
) -> dict:
    """The values a request sends (`{chave: valor | null}`), checked against the organization's fields
    (`definitions`, read once by the caller, which writes with them too) for the door that sends them, in their
    kept form (None clears). A partner knows only the visible fields (a hidden key answers as an unknown one) and
    writes only those it may edit; nobody writes an inactive field. Each problem is a 422 on `campos.<chave>`
    saying what is expected."""
    if not isinstance(values, dict):
        raise ValidationFailed({prefix: ["Informe um objeto de chave para valor."]})
    known = definitions_by_key(definitions, partner=actor.is_partner)
    errors: dict[str, list[str]] = {}
    cleaned = {}
    for key, value in values.items():
        definition = known.get(key)
        if definition is None:
            errors[f"{prefix}.{key}"] = ["Campo desconhecido nesta organização."]
        elif not definition.is_active:
            errors[f"{prefix}.{key}"] = ["Campo inativo: não aceita valores."]
        elif actor.is_partner and not definition.editable_by_partner:
            errors[f"{prefix}.{key}"] = ["Este campo não pode ser alterado pela API."]
        elif value is None:
            cleaned[key] = None
        else:
            try:
                cleaned[key] = clean(definition, value)
            except BadValue as problem:
                errors[f"{prefix}.{key}"] = [str(problem)]
    if errors:
        raise ValidationFailed(errors)
    return cleaned


def values_ordered(definitions: tuple[FieldDefinition, ...], values: dict) -> dict:
    """A ticket's values in its fields' order, without None (and without keys of fields that are gone)."""
    return {d.key: values[d.key] for d in definitions if values.get(d.key) is not None}
