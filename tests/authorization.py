"""The authorization matrix's vocabulary: which door guards each API route, two organizations' data,
and the request each (route, method) sends.

Routes come from the URL resolver (tests.routes), so a route added tomorrow lands in the matrix, or
makes it fail with a message saying what to add here.
"""

import re
import uuid
from dataclasses import dataclass, field
from datetime import date

from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from helpdesk.actors import PARTNER as PARTNER_ACTOR
from helpdesk.api.panel import CanManagePublicApi, IsActiveAgent
from helpdesk.auth import PanelJWTAuthentication
from helpdesk.models import Agent, Organization, User
from integrations.authentication import ApiKeyAuthentication
from integrations.models import ApiCredential, Webhook, WebhookDelivery
from macros.models import Assignment, Macro
from macros.services import MacroValues, macro_create
from sla.calendar import Holiday, Interval
from sla.policies import Policy
from sla.services import business_hours_set, sla_policies_set
from tests.assertions import bearer_client, organization_snapshot, panel_client
from tests.contract import ALL_EVENTS
from tests.factories import (
    admin_of,
    credential_of,
    make_agent,
    make_agent_reply,
    make_customer_reply,
    make_key,
    make_test_delivery,
    make_ticket,
    make_webhook,
    status_of,
)
from tests.routes import action_of, api_routes, view_class_of
from tickets.attachments.services import attachment_add_by_partner, reply_create_with_attachments
from tickets.fields.services import custom_field_create
from tickets.models import Attachment, CustomField, Reply, Ticket
from tickets.services import (
    RequesterData,
    TagsChange,
    ticket_fields_set,
    ticket_rate_by_customer,
    ticket_reopen_by_customer,
    ticket_resolve_by_customer,
    ticket_tags_change_by_customer,
    ticket_update,
)

PARTNER, PANEL, MANAGEMENT, PUBLIC = "partner", "panel", "management", "public"
# The errors.field of a 401 at each door.
AUTH_FIELD = {PARTNER: "api_key", PANEL: "token", MANAGEMENT: "token"}
REALM = {PARTNER: 'Bearer realm="api"', PANEL: 'Bearer realm="painel"', MANAGEMENT: 'Bearer realm="painel"'}

# Routes that answer without credentials on purpose, and why. A route without an authenticator that is
# not here makes the matrix fail: give it a door, or add it here with the reason it is public.
PUBLIC_ROUTES = {
    "/api/health": "liveness and readiness probe; shows no organization's data",
    "/api/schema/": "the OpenAPI document",
    "/api/docs/": "Swagger UI over the OpenAPI document",
    "/api/auth/login": "issues the panel JWT (rate limited per client address)",
    "/api/auth/refresh": "rotates the panel JWT; the refresh token in the body is the credential",
    "/api/auth/logout": "blacklists the refresh token in the body; that token is the credential",
    # tests/helpdesk/test_agents_api.py proves the token: tampered or expired is a 403.
    "/api/v1/atendentes/avatar/{token}": "the signed, expiring token in the path is the credential",
    # tests/attachments/test_attachment_list_and_download_api.py proves the token: tampered or expired is
    # a 403, another organization's or an internal note's file the 404 of a missing one.
    "/api/v1/anexos/{token}": "the signed, expiring token in the path is the credential",
}

# What `{id}` names, by the collection it follows; the other path parameters name one kind each.
ID_KINDS = {
    "/api/v1/tickets": "ticket",
    "/api/tickets": "ticket",
    "/api/webhooks": "webhook",
    "/api/api-keys": "credential",
    "/api/contatos": "contact",
    "/api/v1/contatos": "contact",
    "/api/campos": "custom_field",
}
PARAM_KINDS = {"resposta": "reply", "entrega": "delivery", "macro": "macro"}

# The 404 of an id the caller may not see, by kind: (message, errors.field).
NOT_FOUND = {
    "ticket": ("Ticket não encontrado.", "id"),
    "reply": ("Resposta não encontrada.", "resposta"),
    "webhook": ("Webhook não encontrado.", "id"),
    "credential": ("Credencial não encontrada.", "id"),
    "delivery": ("Entrega não encontrada.", "entrega"),
    "contact": ("Contato não encontrado.", "id"),
    "custom_field": ("Campo não encontrado.", "id"),
    "macro": ("Macro não encontrada.", "macro"),
}

# Where a POST to a collection stores what it creates.
CREATED_MODELS = {
    "/api/v1/tickets": Ticket,
    "/api/tickets": Ticket,
    "/api/api-keys": ApiCredential,
    "/api/webhooks": Webhook,
    "/api/campos": CustomField,
}

# POSTs on a collection that create nothing: a bulk edit answers what it changed and what it left.
NOT_CREATING = {"/api/tickets/lote"}

# What an answer may hold of A because the caller sent it: a bulk edit answers each id it was given, A's as
# `ignorados` with the reason of a missing one (the caller learns nothing it did not know).
ECHOES = {"POST /api/tickets/lote": lambda world: {str(world.a.ticket.pk)}}

IDEMPOTENCY_KEY = "pedido-repetido"


def scope_of(operation) -> str | None:
    """The scope a partner operation declares (PartnerViewSet.scopes), None when it declares none."""
    return view_class_of(operation.route).scopes.get(action_of(operation.route, operation.method))


def door_of(route: str) -> str | None:
    """The door of a route, read from its view class; None when the matrix does not know it."""
    view = view_class_of(route)
    authenticators = list(view.authentication_classes)
    if authenticators == [ApiKeyAuthentication]:
        return PARTNER
    if authenticators == [PanelJWTAuthentication]:
        if CanManagePublicApi in view.permission_classes:
            return MANAGEMENT
        if IsActiveAgent in view.permission_classes:
            return PANEL
        return None
    if not authenticators and route in PUBLIC_ROUTES:
        return PUBLIC
    return None


def unclassified_routes() -> dict[str, str]:
    """Routes the matrix cannot place, with what to do about each."""
    unknown = {}
    for route in api_routes():
        if door_of(route) is None:
            view = view_class_of(route)
            unknown[route] = (
                f"{view.__module__}.{view.__name__} (authentication {list(view.authentication_classes)}, "
                f"permissions {list(view.permission_classes)}): give it ApiKeyAuthentication (partner) or "
                "PanelJWTAuthentication with CanManagePublicApi (management) or IsActiveAgent (panel), or list it "
                "in PUBLIC_ROUTES of tests/authorization.py with the reason it needs no credential"
            )
    return unknown


def params_of(route: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\{(\w+)\}", route))


def kind_of(route: str, param: str) -> str:
    """What object a path parameter names; a parameter this does not know fails with what to add."""
    kind = ID_KINDS.get(route.split("/{id}")[0]) if param == "id" else PARAM_KINDS.get(param)
    if kind is None:
        where = "ID_KINDS" if param == "id" else "PARAM_KINDS"
        raise LookupError(f"{route}: add what {{{param}}} names to {where} in tests/authorization.py")
    return kind


@dataclass(frozen=True)
class Operation:
    """One method of one route behind a door."""

    method: str
    route: str
    door: str

    @property
    def name(self) -> str:
        return f"{self.method} {self.route}"

    @property
    def params(self) -> tuple[str, ...]:
        return params_of(self.route)


def operations(doors=(PARTNER, PANEL, MANAGEMENT)) -> list[Operation]:
    """Every (route, method) behind these doors, as the URL resolver answers them."""
    return [
        Operation(method, route, door_of(route))
        for route, methods in api_routes().items()
        if door_of(route) in doors
        for method in methods
    ]


@dataclass
class Tenant:
    """One organization's data: a thread with every kind of reply, an agent, a key, a webhook with deliveries."""

    organization: Organization
    marker: str
    admin: User
    colleague: Agent
    key: str
    tickets: list[Ticket]
    customer_reply: Reply
    agent_reply: Reply
    note: Reply
    attachment: Attachment
    note_attachment: Attachment
    webhook: Webhook
    delivery: WebhookDelivery
    custom_field: CustomField
    macro: Macro
    _clients: dict = field(default_factory=dict)

    @property
    def ticket(self) -> Ticket:
        return self.tickets[0]

    def object_id(self, kind: str, door: str) -> str:
        """The id that fills a path parameter of `kind`; a reply is one the door's caller could edit."""
        if kind == "reply":
            return str((self.customer_reply if door == PARTNER else self.agent_reply).pk)
        objects = {
            "ticket": self.ticket,
            "webhook": self.webhook,
            "credential": credential_of(self.key),
            "delivery": self.delivery,
            "contact": self.ticket.requester,
            "custom_field": self.custom_field,
            "macro": self.macro,
        }
        return str(objects[kind].pk)

    def client(self, door: str) -> APIClient:
        """Authenticated at `door`: the partner key, or the admin's panel JWT (an agent with api_publica:gerenciar)."""
        kind = "key" if door == PARTNER else "jwt"
        if kind not in self._clients:
            self._clients[kind] = bearer_client(self.key) if kind == "key" else panel_client(self.admin.email)
        return self._clients[kind]

    def snapshot(self) -> dict:
        return organization_snapshot(self.organization)

    def traces(self) -> set[str]:
        """What must never appear in an answer to another organization: ids, secrets, the key, the marker."""
        rows = self.snapshot()
        found = {self.marker, self.key}
        found |= {str(row["id"]) for table in rows.values() for row in table if isinstance(row.get("id"), uuid.UUID)}
        found |= {row["secret"] for row in rows["webhooks"]}
        return found


def tenant_sla_minutes(label: str) -> tuple[int, int, int]:
    """The targets of a tenant's `alta` policy: numbers of its own (acme 11, 111, 1111; another 22, 222, 2222)."""
    digit = 1 if label == "acme" else 2
    return digit * 11, digit * 111, digit * 1111


def seed_tenant(organization: Organization, label: str, *, tickets: int = 2) -> Tenant:
    """Made through the services; needs the `example_dns` fixture for the webhook's https URL."""
    marker = f"{label.upper()}-CONFIDENCIAL"
    admin = admin_of(organization)
    colleague = make_agent(organization, name=f"Atendente {marker}")
    key = make_key(organization, name=f"Integração {marker}")
    webhook = make_webhook(organization, name=f"ERP {marker}", url=f"https://hooks.example.com/{label}")
    first = make_ticket(
        organization,
        subject=f"Impressora {marker}",
        description=f"Não imprime {marker}",
        requester=RequesterData(name=f"Cliente {marker}", email=f"cliente@{label}.test", external_id=f"cli-{label}"),
        priority="urgente",
        external_id=f"pedido-{label}",
    )
    # Resolved once and reopened by the customer (no event), its rating of that resolution carrying the marker.
    ticket_resolve_by_customer(organization=organization, ticket_id=first.pk)
    ticket_rate_by_customer(organization=organization, ticket_id=first.pk, score=4, comment=f"Avaliação {marker}")
    ticket_reopen_by_customer(organization=organization, ticket_id=first.pk)
    ticket_update(ticket=first, status=status_of(organization, "em_andamento"), assignee=colleague)
    # Tags both organizations use, and one only this one has (its marker, normalised): the partner's own change,
    # which emits nothing.
    ticket_tags_change_by_customer(organization=organization, ticket_id=first.pk, change=TagsChange.of(["vip", marker]))
    first.refresh_from_db()
    other = RequesterData(name=f"Outro {marker}", email=f"outro@{label}.test")  # no digit: `busca` by number
    rest = [
        make_ticket(
            organization, subject=f"Rede {marker} {n}", description="Sem rede", priority="baixa", requester=other
        )
        for n in range(2, tickets + 1)
    ]
    # The same key in both organizations: each sees only its own field, and its own tickets' values.
    custom_field = custom_field_create(
        organization=organization, key="pedido", name=f"Pedido {marker}", field_type="texto"
    )
    ticket_fields_set(ticket=first, values={"pedido": f"Pedido {marker}"}, actor=PARTNER_ACTOR)
    first.refresh_from_db()
    # Each organization's own business hours, its marker in a holiday's name.
    business_hours_set(
        organization=organization,
        time_zone="America/New_York" if label == "acme" else "Asia/Tokyo",
        intervals=[Interval(weekday, 8 * 60, 18 * 60) for weekday in range(5)],
        holidays=[Holiday(date(2026, 12, 25), f"Natal {marker}")],
    )
    # And its own SLA policies: minutes are its marker (no text to carry one).
    sla_policies_set(organization=organization, policies=[Policy("alta", *tenant_sla_minutes(label)), Policy(None, 1)])
    customer_reply = make_customer_reply(first, body=f"Cliente {marker}")
    note, [note_attachment] = reply_create_with_attachments(
        ticket=first,
        agent=admin.agent,
        body=f"Nota com anexo {marker}",
        internal=True,
        uploads=[SimpleUploadedFile(f"nota {marker}.txt", f"Nota {marker}\n".encode(), "text/plain")],
    )
    attachment = attachment_add_by_partner(
        ticket=first,
        upload=SimpleUploadedFile(f"cliente {marker}.txt", f"Cliente {marker}\n".encode(), "text/plain"),
        reply_id=customer_reply.pk,
    )
    # A macro whose every part carries the marker or acts on the organization's own objects.
    macro = macro_create(
        organization_id=organization.pk,
        values=MacroValues(
            name=f"Macro {marker}",
            body=f"Olá {{{{solicitante.nome}}}}, {marker}",
            status=status_of(organization, "aguardando"),
            priority="alta",
            assignment=Assignment.AGENT,
            assignee=colleague,
            tags_add=[f"macro-{label}"],
        ),
    )
    return Tenant(
        organization=organization,
        marker=marker,
        admin=admin,
        colleague=colleague,
        key=key,
        tickets=[first, *rest],
        customer_reply=customer_reply,
        agent_reply=make_agent_reply(first, admin.agent, body=f"Atendente {marker}"),
        note=make_agent_reply(first, admin.agent, body=f"Nota {marker}", internal=True),
        attachment=attachment,
        note_attachment=note_attachment,
        webhook=webhook,
        delivery=make_test_delivery(webhook),
        custom_field=custom_field,
        macro=macro,
    )


@dataclass
class World:
    """A is the organization under attack, B the caller; B's body for a create reuses A's identifiers."""

    a: Tenant
    b: Tenant


# A valid body for each write, from B's point of view: on B's own objects it succeeds, so any answer
# but the 404 on A's objects is a tenancy hole, never a validation error. None: the action takes no body.
BODIES = {
    "POST /api/v1/tickets": lambda world: {
        "assunto": "Impressora nova",
        "descricao": "Outra vez",
        "external_id": world.a.ticket.external_id,
        "solicitante": {
            "nome": "Cliente",
            "email": world.a.ticket.requester.email,
            "external_id": world.a.ticket.requester.external_id,
        },
    },
    "POST /api/v1/tickets/{id}/respostas": lambda world: {"mensagem": "Intrusão"},
    "POST /api/v1/tickets/{id}/anexos": lambda world: {
        "arquivo": SimpleUploadedFile("intruso.txt", b"Intrusao\n", "text/plain")
    },
    "PATCH /api/v1/tickets/{id}/respostas/{resposta}": lambda world: {"mensagem": "Intrusão"},
    "PATCH /api/v1/tickets/{id}/tags": lambda world: {"adicionar": ["intrusao"], "remover": ["acme"]},
    "POST /api/v1/tickets/{id}/resolver": lambda world: None,
    "POST /api/v1/tickets/{id}/reabrir": lambda world: None,
    "POST /api/v1/tickets/{id}/avaliacao": lambda world: {"nota": 1, "comentario": "Intrusão"},
    "PATCH /api/v1/contatos/{id}": lambda world: {
        "nome": "Intruso",
        "email": world.a.ticket.requester.email,
        "telefone": "+55 11 5555-0000",
        "external_id": world.a.ticket.requester.external_id,
    },
    "POST /api/api-keys": lambda world: {"nome": "Integração"},
    "POST /api/webhooks": lambda world: {
        "nome": "Intruso",
        "url": "https://hooks.example.com/intruso",
        "eventos": ALL_EVENTS,
    },
    "PATCH /api/webhooks/{id}": lambda world: {
        "nome": "Intruso",
        "url": "https://outro.example.com/intruso",
        "eventos": ["ticket.resolvido"],
        "ativo": False,
        "regenerar_segredo": True,
    },
    "POST /api/webhooks/{id}/testar": lambda world: None,
    "POST /api/webhooks/{id}/entregas/{entrega}/reenviar": lambda world: None,
    "POST /api/contatos/{id}/anonimizar": lambda world: None,
    "POST /api/tickets": lambda world: {
        "assunto": "Impressora nova",
        "descricao": "Aberto pelo atendente",
        "solicitante": {
            "nome": "Cliente",
            "email": world.a.ticket.requester.email,
            "external_id": world.a.ticket.requester.external_id,
        },
        "atendente_id": str(world.b.colleague.pk),
    },
    "PATCH /api/tickets/{id}": lambda world: {
        "status_id": str(status_of(world.b.organization, "resolvido").pk),
        "atendente_id": str(world.b.colleague.pk),
        "prioridade": "baixa",
    },
    "POST /api/tickets/{id}/respostas": lambda world: {"mensagem": "Intrusão", "interna": False},
    # A's ticket among B's: B's request succeeds, A's ticket is `ignorados` as a missing one, untouched.
    "POST /api/tickets/lote": lambda world: {
        "ids": [str(world.a.ticket.pk), str(world.b.ticket.pk)],
        "prioridade": "baixa",
        "tags": {"adicionar": ["intrusao"]},
    },
    "POST /api/tickets/{id}/mesclar": lambda world: {"origens": [str(world.b.tickets[1].pk)]},
    "PATCH /api/v1/tickets/{id}/campos": lambda world: {"pedido": "Intrusão"},
    "POST /api/campos": lambda world: {"chave": "regiao", "nome": "Região", "tipo": "texto"},
    "PATCH /api/campos/{id}": lambda world: {"nome": "Intruso", "visivel_parceiro": False},
    "PUT /api/horario-atendimento": lambda world: {
        "fuso_horario": "Europe/Lisbon",
        "intervalos": [{"dia_semana": 0, "inicio": "09:00", "fim": "17:00"}],
        "feriados": [{"data": "2026-12-25", "nome": "Intrusão"}],
    },
    "PUT /api/sla": lambda world: {"politicas": [{"prioridade": "urgente", "primeira_resposta": 7}]},
    "PATCH /api/tickets/{id}/respostas/{resposta}": lambda world: {"mensagem": "Intrusão"},
    "POST /api/tickets/{id}/macros/{macro}": lambda world: {"mensagem": "Intrusão"},
}


# What each operation answers when the caller owns the objects: (status, message).
SUCCESS = {
    "GET /api/v1/tickets": (200, "Tickets listados."),
    "GET /api/v1/tickets/alteracoes": (200, "Alterações listadas."),
    "POST /api/v1/tickets": (201, "Ticket criado."),
    "GET /api/v1/tickets/{id}": (200, "Ticket encontrado."),
    "POST /api/v1/tickets/{id}/respostas": (201, "Resposta enviada."),
    "PATCH /api/v1/tickets/{id}/respostas/{resposta}": (200, "Resposta atualizada."),
    "POST /api/v1/tickets/{id}/resolver": (200, "Ticket resolvido."),
    "POST /api/v1/tickets/{id}/reabrir": (200, "Ticket reaberto."),
    "POST /api/v1/tickets/{id}/avaliacao": (200, "Avaliação atualizada."),
    "PATCH /api/v1/tickets/{id}/tags": (200, "Tags atualizadas."),
    "GET /api/v1/tickets/{id}/anexos": (200, "Anexos listados."),
    "POST /api/v1/tickets/{id}/anexos": (201, "Anexo enviado."),
    "GET /api/v1/atendentes": (200, "Atendentes listados."),
    "GET /api/v1/eventos": (200, "Eventos listados."),
    "GET /api/v1/contatos": (200, "Contatos listados."),
    "GET /api/v1/contatos/{id}": (200, "Contato encontrado."),
    "PATCH /api/v1/contatos/{id}": (200, "Contato atualizado."),
    "GET /api/v1/contatos/{id}/tickets": (200, "Tickets listados."),
    "GET /api/api-keys": (200, "Credenciais listadas."),
    "POST /api/api-keys": (201, "Credencial criada. Guarde a chave: ela não será exibida novamente."),
    "DELETE /api/api-keys/{id}": (200, "Credencial revogada."),
    "GET /api/webhooks": (200, "Webhooks listados."),
    "POST /api/webhooks": (200, "Webhook criado. Guarde o segredo: ele não será exibido novamente."),
    "GET /api/webhooks/{id}": (200, "Webhook encontrado."),
    "PATCH /api/webhooks/{id}": (200, "Webhook atualizado."),
    "DELETE /api/webhooks/{id}": (200, "Webhook removido."),
    "POST /api/webhooks/{id}/testar": (200, "Evento de teste enfileirado."),
    "GET /api/webhooks/{id}/entregas": (200, "Entregas listadas."),
    "POST /api/webhooks/{id}/entregas/{entrega}/reenviar": (200, "Entrega reenviada."),
    "GET /api/tickets": (200, "Tickets listados."),
    "POST /api/tickets": (201, "Ticket criado."),
    "GET /api/tickets/{id}": (200, "Ticket encontrado."),
    "PATCH /api/tickets/{id}": (200, "Ticket atualizado."),
    "POST /api/tickets/lote": (200, "Tickets atualizados."),
    "DELETE /api/tickets/{id}": (200, "Ticket excluído."),
    "POST /api/tickets/{id}/respostas": (201, "Resposta enviada."),
    "PATCH /api/tickets/{id}/respostas/{resposta}": (200, "Resposta atualizada."),
    "GET /api/tickets/{id}/anexos": (200, "Anexos listados."),
    "POST /api/tickets/{id}/mesclar": (200, "Tickets mesclados."),
    "GET /api/ticket-status": (200, "Status listados."),
    "GET /api/tags": (200, "Tags listadas."),
    "GET /api/auditoria": (200, "Auditoria listada."),
    "GET /api/contatos/{id}/exportar": (200, "Dados do contato exportados."),
    "POST /api/contatos/{id}/anonimizar": (200, "Contato anonimizado."),
    "PATCH /api/v1/tickets/{id}/campos": (200, "Campos atualizados."),
    "GET /api/campos": (200, "Campos listados."),
    "POST /api/campos": (201, "Campo criado."),
    "PATCH /api/campos/{id}": (200, "Campo atualizado."),
    "DELETE /api/campos/{id}": (200, "Campo excluído."),
    "GET /api/horario-atendimento": (200, "Horário de atendimento encontrado."),
    "PUT /api/horario-atendimento": (200, "Horário de atendimento atualizado."),
    "GET /api/sla": (200, "Políticas de SLA encontradas."),
    "PUT /api/sla": (200, "Políticas de SLA atualizadas."),
    "GET /api/macros": (200, "Macros listadas."),
    "POST /api/tickets/{id}/macros/{macro}": (200, "Macro aplicada."),
}


def body_of(operation: Operation, world: World) -> dict | None:
    if operation.method not in ("POST", "PATCH", "PUT"):
        return None
    if operation.name not in BODIES:
        raise LookupError(f"add a valid body for {operation.name} to BODIES in tests/authorization.py")
    return BODIES[operation.name](world)


def path_of(operation: Operation, owners: tuple) -> str:
    """The route with each parameter filled by the id of its owner (a Tenant), or a random one (None)."""
    path = operation.route
    for param, owner in zip(operation.params, owners, strict=True):
        kind = kind_of(operation.route, param)
        value = str(uuid.uuid4()) if owner is None else owner.object_id(kind, operation.door)
        path = path.replace(f"{{{param}}}", value, 1)
    return path


def send(client: APIClient, operation: Operation, path: str, body: dict | None, **extra):
    """A body with a file goes as multipart/form-data (an upload), any other as JSON."""
    call = getattr(client, operation.method.lower())
    if body is None:
        return call(path, **extra)
    files = [value for value in body.values() if isinstance(value, SimpleUploadedFile)]
    for file in files:
        file.seek(0)  # the same body may be sent twice
    return call(path, body, format="multipart" if files else "json", **extra)
