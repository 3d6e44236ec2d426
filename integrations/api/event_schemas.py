"""The body of every event kind, for the OpenAPI document: one component per kind (`EventoTicketCriado`...),
the event feed's items as one of them (by `evento`), and an `x-webhooks` entry per kind that says what a
webhook receiver is sent. docs/webhooks.md links them; tests/integrations/test_event_schemas.py validates
real events against them and guards them against incompatible changes (event bodies only grow).
"""

from drf_spectacular.plumbing import build_mocked_view
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, extend_schema_field
from rest_framework import serializers

from integrations.models import EventKind
from tickets.api.attachment_serializers import AttachmentEventOut
from tickets.api.serializers import (
    AgentRefOut,
    CustomFieldValueField,
    ReplyPublicOut,
    SlaOut,
    SlaTargetOut,
    StatusOut,
    TicketSummaryWithBlocksOut,
)
from tickets.models import Priority


class ActorOut(serializers.Serializer):
    tipo = serializers.ChoiceField(choices=[("agente", "Atendente"), ("sistema", "Sistema")])
    id = serializers.UUIDField(required=False, help_text="O atendente, como em GET /api/v1/atendentes (só `agente`).")
    nome = serializers.CharField(required=False, help_text="O nome do atendente (só `agente`).")


class DeletedTicketRefOut(serializers.Serializer):
    id = serializers.UUIDField()
    numero = serializers.IntegerField(min_value=1)
    external_id = serializers.CharField(allow_null=True)


class AnonymizedContactOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(help_text="Sempre `Contato anonimizado`.")
    email = serializers.CharField(allow_null=True, help_text="Sempre null.")
    telefone = serializers.CharField(allow_null=True, help_text="Sempre null.")
    external_id = serializers.CharField(allow_null=True, help_text="Sempre null.")
    criado_em = serializers.DateTimeField()
    anonimizado_em = serializers.DateTimeField()


class MergeTargetOut(serializers.Serializer):
    id = serializers.UUIDField(help_text="O ticket que recebeu as respostas deste.")
    numero = serializers.IntegerField(min_value=1)


class WebhookRefOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField()


def _change(name: str, field_factory):
    return type(
        name, (serializers.Serializer,), {"anterior": field_factory(), "atual": field_factory(), "__module__": __name__}
    )


StatusChangeOut = _change("StatusChangeOut", StatusOut)
PriorityChangeOut = _change("PriorityChangeOut", lambda: serializers.ChoiceField(choices=Priority.choices))
AssigneeChangeOut = _change("AssigneeChangeOut", lambda: AgentRefOut(allow_null=True))
FieldValueChangeOut = _change("FieldValueChangeOut", lambda: CustomFieldValueField(allow_null=True))


class FieldChangesOut(serializers.Serializer):
    campos = serializers.DictField(
        child=FieldValueChangeOut(),
        help_text=(
            "Por `chave`, o valor `anterior` e o `atual` de cada campo personalizado visível ao parceiro que mudou "
            "(null: sem valor), na forma do bloco `campos`."
        ),
    )


class TagsChangeOut(serializers.Serializer):
    adicionadas = serializers.ListField(
        child=serializers.CharField(), help_text="As tags que o ticket ganhou, em ordem alfabética (pode ser vazia)."
    )
    removidas = serializers.ListField(
        child=serializers.CharField(), help_text="As tags que o ticket perdeu, em ordem alfabética (pode ser vazia)."
    )


def _changes(name: str, field: str, change) -> type:
    return type(name, (serializers.Serializer,), {field: change(), "__module__": __name__})


TICKET = (
    "O ticket como em GET /api/v1/tickets/{id}, sem `respostas`, lido quando o evento foi registrado; com os "
    "blocos do `incluir` do webhook (ou do feed), também lidos quando o evento foi registrado."
)
ACTOR = "Quem fez: o atendente (`{tipo: agente, id, nome}`) ou o sistema (`{tipo: sistema}`: beat, comandos)."

# Each kind: the component's name, what it is sent for, and the fields of its `data` besides `ator`.
KINDS = {
    EventKind.TICKET_CREATED: ("EventoTicketCriado", "Um atendente abriu um ticket (admin ou painel).", {}),
    EventKind.PUBLIC_REPLY: (
        "EventoRespostaPublica",
        "Um atendente publicou uma resposta.",
        {"resposta": lambda: ReplyPublicOut()},
    ),
    EventKind.REPLY_EDITED: (
        "EventoRespostaEditada",
        "Um atendente editou o texto de uma resposta pública.",
        {"resposta": lambda: ReplyPublicOut(), "mensagem_anterior": lambda: serializers.CharField()},
    ),
    EventKind.STATUS_CHANGED: (
        "EventoStatusAlterado",
        "O status mudou (por um atendente ou pelo sistema).",
        {"alteracoes": lambda: _changes("StatusChangesOut", "status", StatusChangeOut)()},
    ),
    EventKind.RESOLVED: ("EventoTicketResolvido", "O ticket entrou num status da categoria `resolvido`.", {}),
    EventKind.PRIORITY_CHANGED: (
        "EventoPrioridadeAlterada",
        "Um atendente mudou a prioridade.",
        {"alteracoes": lambda: _changes("PriorityChangesOut", "prioridade", PriorityChangeOut)()},
    ),
    EventKind.ASSIGNED: (
        "EventoTicketAtribuido",
        "O atendente do ticket foi definido, trocado ou retirado (null).",
        {"alteracoes": lambda: _changes("AssigneeChangesOut", "atendente", AssigneeChangeOut)()},
    ),
    EventKind.TAGS_CHANGED: (
        "EventoTagsAlteradas",
        "Um atendente acrescentou ou retirou tags do ticket (as tags inteiras vêm no bloco `tags` do `incluir`).",
        {"alteracoes": lambda: _changes("TagsChangesOut", "tags", TagsChangeOut)()},
    ),
    EventKind.ATTACHMENT_ADDED: (
        "EventoAnexoAdicionado",
        "Uma resposta pública de um atendente trouxe um arquivo (um evento por arquivo).",
        {"anexo": lambda: AttachmentEventOut()},
    ),
    EventKind.FIELDS_CHANGED: (
        "EventoCamposAlterados",
        "Um atendente mudou campos personalizados visíveis ao parceiro (só campos ocultos: nenhum evento).",
        {"alteracoes": lambda: FieldChangesOut()},
    ),
    EventKind.SLA_AT_RISK: (
        "EventoSlaEmRisco",
        "Uma meta de SLA do ticket gastou 80% do seu tempo em horário comercial (uma vez por meta e ciclo; "
        "enviado pelo beat até 60 s depois do momento). `meta` é a meta que chegou lá, `sla` todas, como o bloco "
        "`sla` do `incluir` as mostrava nesse momento.",
        {"sla": lambda: SlaOut(), "meta": lambda: SlaTargetOut()},
    ),
    EventKind.SLA_BREACHED: (
        "EventoSlaViolado",
        "O prazo de uma meta de SLA do ticket passou sem ela ser cumprida (uma vez por meta e ciclo; também quando a "
        "meta foi cumprida com atraso antes de o beat ver o prazo passar). `meta` é essa meta, `sla` todas.",
        {"sla": lambda: SlaOut(), "meta": lambda: SlaTargetOut()},
    ),
    EventKind.MERGED: (
        "EventoTicketMesclado",
        "O ticket foi mesclado em outro (admin ou painel): fechado, sem respostas (foram para o destino, marcadas "
        "com o número deste); `destino` é o ticket que as tem agora. Um por ticket mesclado.",
        {"destino": lambda: MergeTargetOut()},
    ),
    EventKind.DELETED: ("EventoTicketExcluido", "O ticket foi excluído (admin, painel, comando).", {}),
    EventKind.CONTACT_ANONYMIZED: (
        "EventoContatoAnonimizado",
        "Os dados de um contato foram anonimizados (pedido do titular, LGPD): apague-os também da sua cópia.",
        {},
    ),
    EventKind.TEST: ("EventoTeste", "Alguém pediu um teste do webhook (`POST /api/webhooks/{id}/testar`).", {}),
}


@extend_schema_field({"type": "string", "format": "date-time"})
class _Timestamp(serializers.DateTimeField):
    pass


def _kind_field(kind: str):
    field_class = type("KindField", (serializers.CharField,), {})
    return extend_schema_field({"type": "string", "enum": [str(kind)]})(field_class)()


def _data(kind: str, name: str, extra: dict) -> serializers.Serializer:
    if kind == EventKind.DELETED:
        fields = {"ticket": DeletedTicketRefOut(help_text="O ticket excluído: só o que o identifica.")}
    elif kind == EventKind.CONTACT_ANONYMIZED:
        fields = {
            "contato": AnonymizedContactOut(help_text="O contato como ficou, sem os dados da pessoa."),
            "tickets": DeletedTicketRefOut(many=True, help_text="Os tickets que ele pediu (o que os identifica)."),
        }
    elif kind == EventKind.TEST:
        fields = {"mensagem": serializers.CharField(), "webhook": WebhookRefOut()}
    else:
        fields = {"ticket": TicketSummaryWithBlocksOut(help_text=TICKET)}
    fields |= {field: factory() for field, factory in extra.items()}
    fields["ator"] = ActorOut(help_text=ACTOR)
    return type(f"Dados{name.removeprefix('Evento')}", (serializers.Serializer,), {**fields, "__module__": __name__})()


def _event_serializer(kind: str) -> type:
    name, description, extra = KINDS[kind]
    fields = {
        "id": serializers.UUIDField(help_text="O id do evento: o mesmo no feed e em cada entrega e retentativa."),
        "evento": _kind_field(kind),
        "criado_em": _Timestamp(),
        "data": _data(kind, name, extra),
    }
    return type(name, (serializers.Serializer,), {**fields, "__doc__": description, "__module__": __name__})


EVENT_SERIALIZERS = {kind: _event_serializer(kind) for kind in KINDS}
FEED_KINDS = [kind for kind in KINDS if kind != EventKind.TEST]

# An item of GET /api/v1/eventos: one of the kinds, told apart by `evento`.
FeedEventOut = PolymorphicProxySerializer(
    component_name="EventoDoFeed",
    serializers={str(kind): EVENT_SERIALIZERS[kind] for kind in FEED_KINDS},
    resource_type_field_name="evento",
    many=False,
)


def webhooks_postprocess(result, generator, request, public):
    """drf-spectacular hook: a component per event kind (those the feed does not name too) and the document's
    `x-webhooks`, what each kind's delivery POSTs. The document stays OpenAPI 3.0.3 (the contract fuzzing and
    partners' code generators read 3.0), where `webhooks` is not a key: `x-webhooks` is how 3.0 tools
    (ReDoc) show them."""
    # A view of no route, only to resolve serializers into the generator's registry
    # (drf_spectacular.plumbing.build_mocked_view; tests/test_openapi.py breaks if it changes).
    view = build_mocked_view(
        method="post", path="/", extend_schema_decorator=extend_schema(), registry=generator.registry
    )
    webhooks = {}
    for kind, serializer in EVENT_SERIALIZERS.items():
        component = view.schema.resolve_serializer(serializer, "response")
        name, description, _extra = KINDS[kind]
        webhooks[str(kind.value)] = {
            "post": {
                "summary": str(kind.value),
                "description": f"{description} Cabeçalhos e assinatura: docs/webhooks.md.",
                "operationId": f"webhook_{kind.replace('.', '_')}",
                "requestBody": {"required": True, "content": {"application/json": {"schema": component.ref}}},
                "responses": {"2XX": {"description": "Recebido (qualquer 2xx em até 10 s)."}},
            }
        }
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in generator.registry.build({}).get("schemas", {}).items():
        schemas.setdefault(name, schema)
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    result["x-webhooks"] = webhooks
    return result


# --- the compatibility guard: event bodies only grow ------------------------------------------------

SNAPSHOT_KEYS = ("type", "format", "enum", "nullable", "required", "properties", "items")


def shapes(document: dict) -> dict:
    """Each kind's body as the document publishes it, references inlined, only what makes its shape (no
    descriptions): what docs/event-schemas.json keeps and what incompatible_changes compares."""
    components = document["components"]["schemas"]

    def shape(schema: dict) -> dict:
        if "$ref" in schema:
            return shape(components[schema["$ref"].rsplit("/", 1)[1]])
        if "allOf" in schema:  # a described or nullable reference, or a composition (a ticket and its blocks)
            return shape({**_merged(shape(part) for part in schema["allOf"]), **_without(schema, "allOf")})
        result = {key: schema[key] for key in SNAPSHOT_KEYS if key in schema}
        if "properties" in result:
            result["properties"] = {name: shape(value) for name, value in result["properties"].items()}
        if "items" in result:
            result["items"] = shape(result["items"])
        return result

    return {
        kind: shape(operation["post"]["requestBody"]["content"]["application/json"]["schema"])
        for kind, operation in document["x-webhooks"].items()
    }


def _merged(parts) -> dict:
    """The parts of an `allOf` as one object: every part's properties, and what any part requires."""
    merged: dict = {}
    for part in parts:
        properties = {**merged.get("properties", {}), **part.get("properties", {})}
        required = list(dict.fromkeys([*merged.get("required", []), *part.get("required", [])]))
        merged.update(part)
        if properties:
            merged["properties"] = properties
        if required:
            merged["required"] = required
    return merged


def _without(schema: dict, key: str) -> dict:
    return {name: value for name, value in schema.items() if name != key}


def incompatible_changes(before: dict, after: dict, path: str = "") -> list[str]:
    """What a receiver written against `before` would trip on in `after`: a kind, a field or an enum value
    gone (removed or renamed), a field that changed type or format or became nullable, a field no longer
    always sent. Additions (kinds, fields, enum values) are compatible: receivers ignore unknown keys."""
    problems = []
    for key in ("type", "format"):
        if before.get(key) != after.get(key):
            problems.append(f"{path or '/'}: {key} {before.get(key)!r} -> {after.get(key)!r}")
    if after.get("nullable") and not before.get("nullable"):
        problems.append(f"{path or '/'}: became nullable")
    if "enum" in before and set(before["enum"]) - set(after.get("enum", before["enum"])):
        problems.append(f"{path or '/'}: enum values gone {sorted(set(before['enum']) - set(after['enum']))}")
    for name in set(before.get("required", [])) - set(after.get("required", [])):
        problems.append(f"{path}/{name}: no longer always sent")
    for name, field in before.get("properties", {}).items():
        if name not in after.get("properties", {}):
            problems.append(f"{path}/{name}: removed")
        else:
            problems += incompatible_changes(field, after["properties"][name], f"{path}/{name}")
    if "items" in before:
        problems += incompatible_changes(before["items"], after.get("items", {}), f"{path}[]")
    return problems


def incompatible_kinds(before: dict, after: dict) -> list[str]:
    """incompatible_changes for every kind of a snapshot (a kind gone is one of them)."""
    problems = [f"{kind}: removed" for kind in before if kind not in after]
    for kind in before.keys() & after.keys():
        problems += [f"{kind} {problem}" for problem in incompatible_changes(before[kind], after[kind])]
    return sorted(problems)
