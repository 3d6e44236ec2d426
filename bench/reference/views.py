"""Hand-built JSON over the ORM: the SQL each hot path needs, and nothing else.

Queries per request (transaction control included):
  list / panel list   count, page (ticket + status + contact [+ assignee]), replies of the page; the
                      partner's `external_id` and `solicitante_external_id` as plain ORM filters
  read one            ticket + status + contact, its public replies
  create              BEGIN, external_id lookup (id only), sequence UPDATE ... RETURNING, contact
                      INSERT ... ON CONFLICT (or e-mail lookup [+ INSERT]), ticket INSERT, COMMIT:
                      the product's own statements (tickets.services), the default status cached
  repeated external_id  BEGIN, external_id lookup, the existing ticket, its replies, COMMIT
  customer reply      BEGIN, ticket FOR UPDATE, ticket UPDATE, reply INSERT, COMMIT
  atendentes          count, page of 10
Input is trusted (the bench sends valid bodies): no validation, no error envelope.
"""

import json
import math
import uuid
from collections import defaultdict
from datetime import UTC

from django.conf import settings
from django.core import signing
from django.db import connection, transaction
from django.db.models import Q
from django.http import HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from foundation.db import db_value
from helpdesk.models import Agent
from tickets.models import Contact, Reply, StatusCategory, Ticket, TicketSequence, TicketStatus

# The product's create runs these statements as they are: the reference runs the same SQL, with the
# same parameters.
from tickets.services import CONTACT_UPSERT_SQL, NEXT_NUMBER_SQL, TICKET_BY_EXTERNAL_ID_SQL

ORGANIZATION = settings.BENCH_ORGANIZATION_ID
_avatar_signer = signing.TimestampSigner(salt="helpdesk.avatar")


def _ts(value) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _reply(reply: Reply, *, internal: bool = False) -> dict:
    if reply.origin == "agente":
        agent = reply.author_agent
        author = {"tipo": "agente", "nome": agent.name if agent else None, "email": None, "external_id": None}
    else:
        contact = reply.author_contact
        author = {
            "tipo": "cliente",
            "nome": contact.name,
            "email": contact.email or None,
            "external_id": contact.external_id or None,
        }
    data = {
        "id": str(reply.id),
        "mensagem": reply.body,
        "origem": reply.origin,
        "editado": reply.edited,
        "autor": author,
        "criado_em": _ts(reply.created_at),
    }
    if internal:
        data["interna"] = reply.is_internal
    return data


def _ticket(ticket: Ticket, replies: list[Reply], *, panel: bool = False) -> dict:
    status, contact = ticket.status, ticket.requester
    data = {
        "id": str(ticket.id),
        "numero": ticket.number,
        "assunto": ticket.subject,
        "descricao": ticket.description,
        "prioridade": ticket.priority,
        "canal_origem": ticket.channel,
        "status": {"nome": status.name, "categoria": status.category, "cor": status.color},
        "solicitante": {
            "nome": contact.name,
            "email": contact.email or None,
            "telefone": contact.phone or None,
            "external_id": contact.external_id or None,
        },
        "external_id": ticket.external_id,
        "origem_sistema": ticket.source_system,
        "criado_em": _ts(ticket.created_at),
        "atualizado_em": _ts(ticket.updated_at),
        "resolvido_em": _ts(ticket.resolved_at),
        "respostas": [_reply(reply, internal=panel) for reply in replies],
    }
    if panel:
        data["status"]["id"] = str(status.id)
        assignee = ticket.assignee
        data["atendente"] = {"id": str(assignee.id), "nome": assignee.name} if assignee else None
    return data


def _json(data, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


def _replies_by_ticket(ticket_ids, *, internal: bool) -> dict:
    replies = Reply.objects.filter(ticket_id__in=ticket_ids).select_related("author_agent", "author_contact")
    if not internal:
        replies = replies.filter(is_internal=False)
    grouped = defaultdict(list)
    for reply in replies.order_by("created_at", "id"):
        grouped[reply.ticket_id].append(reply)
    return grouped


def _page_of_tickets(request, *, panel: bool) -> dict:
    page = int(request.GET.get("page", 1))
    per_page = int(request.GET.get("por_pagina", 15))
    tickets = Ticket.objects.filter(organization_id=ORGANIZATION)
    if request.GET.get("external_id"):
        tickets = tickets.filter(external_id=request.GET["external_id"])
    if request.GET.get("solicitante_external_id"):
        tickets = tickets.filter(
            requester__organization_id=ORGANIZATION, requester__external_id=request.GET["solicitante_external_id"]
        )
    search = request.GET.get("busca")
    if search:
        matches = (
            Q(subject__icontains=search)
            | Q(description__icontains=search)
            | Q(requester__name__icontains=search)
            | Q(requester__email__icontains=search)
        )
        if search.isdigit() and len(search) <= 9:
            matches |= Q(number=int(search))
        tickets = tickets.filter(matches)
    total = tickets.count()
    offset = (page - 1) * per_page
    related = ("status", "requester", "assignee") if panel else ("status", "requester")
    rows = (
        list(tickets.select_related(*related).order_by("-created_at", "-number")[offset : offset + per_page])
        if offset < total
        else []
    )
    replies = _replies_by_ticket([ticket.id for ticket in rows], internal=panel) if rows else {}
    return {
        "data": [_ticket(ticket, replies.get(ticket.id, []), panel=panel) for ticket in rows],
        "total": total,
        "por_pagina": per_page,
        "pagina_atual": page,
        "ultima_pagina": max(1, math.ceil(total / per_page)),
    }


@csrf_exempt
def tickets(request):
    if request.method == "POST":
        return _ticket_create(request)
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET", "POST"])
    return _json(_page_of_tickets(request, panel=False))


def panel_tickets(request):
    return _json(_page_of_tickets(request, panel=True))


def ticket_detail(request, ticket_id):
    ticket = (
        Ticket.objects.filter(organization_id=ORGANIZATION, pk=ticket_id).select_related("status", "requester").first()
    )
    if ticket is None:
        return HttpResponse(status=404)
    return _json(_ticket(ticket, _replies_by_ticket([ticket.id], internal=False).get(ticket.id, [])))


_open_status: dict[str, TicketStatus] = {}


def _default_status() -> TicketStatus:
    """Cached in the process, as the product caches it (in Redis): no statement per create."""
    if ORGANIZATION not in _open_status:
        _open_status[ORGANIZATION] = (
            TicketStatus.objects.filter(organization_id=ORGANIZATION, category=StatusCategory.OPEN)
            .order_by("position", "name")
            .first()
        )
    return _open_status[ORGANIZATION]


def _contact(requester: dict) -> Contact:
    """The product's statements: one INSERT ... ON CONFLICT by external_id, else a lookup by e-mail."""
    email = (requester.get("email") or "").strip().lower()
    if requester.get("external_id"):
        now = timezone.now()
        values = {
            "id": uuid.uuid4(),
            "organization": ORGANIZATION,
            "name": requester["nome"],
            "email": email,
            "phone": requester.get("telefone") or "",
            "external_id": requester["external_id"],
            "created_at": now,
            "updated_at": now,
        }
        params = [db_value(Contact, name, value) for name, value in values.items()]
        return next(iter(Contact.objects.raw(CONTACT_UPSERT_SQL, params)))
    contact = None
    if email:
        contact = (
            Contact.objects.filter(organization_id=ORGANIZATION, email__iexact=email).order_by("created_at").first()
        )
    if contact is None:
        contact = Contact.objects.create(
            organization_id=ORGANIZATION, name=requester["nome"], email=email, phone=requester.get("telefone") or ""
        )
    return contact


def _ticket_create(request):
    body = json.loads(request.body)
    external_id = body.get("external_id")
    with transaction.atomic():
        if external_id is not None:
            with connection.cursor() as cursor:
                cursor.execute(TICKET_BY_EXTERNAL_ID_SQL, [db_value(Ticket, "organization", ORGANIZATION), external_id])
                found = cursor.fetchone()
            existing = Ticket.objects.select_related("status", "requester").get(pk=found[0]) if found else None
            if existing is not None:
                replies = _replies_by_ticket([existing.id], internal=False).get(existing.id, [])
                return _json(_ticket(existing, replies))
        status = _default_status()
        with connection.cursor() as cursor:
            cursor.execute(NEXT_NUMBER_SQL, [db_value(TicketSequence, "organization", ORGANIZATION)])
            number = cursor.fetchone()[0]
        ticket = Ticket.objects.create(
            organization_id=ORGANIZATION,
            number=number,
            subject=body["assunto"],
            description=body["descricao"],
            priority=body.get("prioridade") or "media",
            status=status,
            requester=_contact(body["solicitante"]),
            external_id=external_id,
        )
    return _json(_ticket(ticket, []), status=201)


@csrf_exempt
def reply_create(request, ticket_id):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    body = json.loads(request.body)
    with transaction.atomic():
        ticket = (
            Ticket.objects.select_for_update(of=("self",))
            .select_related("status", "requester")
            .filter(organization_id=ORGANIZATION, pk=ticket_id)
            .first()
        )
        if ticket is None:
            return HttpResponse(status=404)
        if ticket.status.category == StatusCategory.CLOSED:
            return HttpResponse(status=409)
        if ticket.status.category in (StatusCategory.WAITING, StatusCategory.RESOLVED):
            ticket.status = (
                TicketStatus.objects.filter(organization_id=ORGANIZATION, category=StatusCategory.OPEN)
                .order_by("position", "name")
                .first()
            )
            ticket.resolved_at = None
        ticket.save(update_fields=["status", "resolved_at", "updated_at"])
        reply = Reply.objects.create(
            ticket=ticket,
            body=body["mensagem"],
            origin="cliente_api",
            author_contact=ticket.requester,
            created_at=ticket.updated_at,
        )
    return _json(_reply(reply), status=201)


def health(request):
    return _json({"ok": True})


def _avatar_url(request, agent: Agent) -> str | None:
    if not agent.avatar:
        return None
    token = _avatar_signer.sign_object({"a": str(agent.pk), "n": agent.avatar.name}, compress=True)
    return request.build_absolute_uri(f"/api/v1/atendentes/avatar/{token}")


def agents(request):
    page = int(request.GET.get("page", 1))
    active = Agent.objects.filter(organization_id=ORGANIZATION, is_active=True)
    total = active.count()
    offset = (page - 1) * 10
    rows = list(active.order_by("name", "id")[offset : offset + 10]) if offset < total else []
    return _json(
        {
            "data": [
                {"id": str(agent.id), "nome": agent.name, "avatar_url": _avatar_url(request, agent)} for agent in rows
            ],
            "total": total,
            "por_pagina": 10,
            "pagina_atual": page,
            "ultima_pagina": max(1, math.ceil(total / 10)),
        }
    )
