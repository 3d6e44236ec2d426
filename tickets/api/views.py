"""Partner API v1: thin viewsets over tickets' services and selectors."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError

from helpdesk.api.pagination import PageQuery, page_payload
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors, page_of
from helpdesk.selectors import agent_list_active
from integrations.api.base import PartnerViewSet, Scope
from tickets.api.pages import ticket_list_payload
from tickets.api.serializers import (
    LIST_CURSOR_OUT,
    AgentOut,
    ReplyIn,
    ReplyPublicOut,
    TicketChangesOut,
    TicketChangesQuery,
    TicketCreateIn,
    TicketListQuery,
    TicketPublicOut,
    changes_cursor,
)
from tickets.payloads import (
    AGENT_COLUMNS,
    TICKET_COLUMNS,
    agents_public,
    reply_public,
    reply_row,
    ticket_new_public,
    ticket_row,
    tickets_public,
    tombstone_public,
)
from tickets.selectors import reply_get_public, ticket_changes, ticket_get, ticket_row_get
from tickets.services import (
    reply_create_by_customer,
    reply_edit_as_customer,
    reply_ensure_editable_by_customer,
    ticket_create,
)

AGENTS_PER_PAGE = 10
TAGS = ["Parceiros v1"]

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 255},
    OpenApiParameter.HEADER,
    description=(
        "Torna a repetição segura: por 24 h, a mesma chave (por credencial) com o mesmo corpo devolve a primeira "
        "resposta guardada (com `Idempotent-Replayed: true`); com outro corpo, 422 no campo `Idempotency-Key`; "
        "enquanto a primeira ainda corre, 409."
    ),
)
TICKET_NOT_FOUND = "Ticket não encontrado (campo `id`); um id que não é UUID responde igual."
REPLY_NOT_FOUND = "Ticket não encontrado (campo `id`) ou resposta não encontrada neste ticket (campo `resposta`)."


class TicketViewSet(PartnerViewSet):
    scopes = {
        "list": Scope.TICKETS_READ,
        "changes": Scope.TICKETS_READ,
        "retrieve": Scope.TICKETS_READ,
        "create": Scope.TICKETS_WRITE,
        "replies": Scope.REPLIES_WRITE,
        "reply": Scope.REPLIES_WRITE,
    }

    @extend_schema(
        operation_id="v1_tickets_list",
        tags=TAGS,
        description=(
            "Tickets da organização, do mais novo ao mais antigo. `busca` procura, sem diferenciar maiúsculas, "
            "em assunto, descrição, nome e e-mail do solicitante, e no número quando é um número inteiro."
        ),
        parameters=[TicketListQuery],
        responses={
            200: envelope("TicketsListados", page_of("PaginaTicketPublico", TicketPublicOut, **LIST_CURSOR_OUT))
        },
    )
    def list(self, request):
        query = TicketListQuery.from_request(request, self.organization)
        payload = ticket_list_payload(query, self.organization, columns=TICKET_COLUMNS, build=tickets_public)
        return EnvelopeResponse(payload, message="Tickets listados.")

    @extend_schema(
        operation_id="v1_tickets_create",
        tags=TAGS,
        description=(
            "Cria um ticket em nome do solicitante, que vira um contato da organização (reaproveitado pelo "
            "`external_id` do solicitante ou, sem ele, pelo e-mail)."
        ),
        parameters=[IDEMPOTENCY_KEY],
        request=TicketCreateIn,
        responses={
            201: OpenApiResponse(envelope("TicketCriado", TicketPublicOut), description="Ticket criado."),
            200: OpenApiResponse(
                envelope("TicketExistente", TicketPublicOut),
                description="A organização já tem um ticket com este `external_id`: ele é devolvido, nada é criado.",
            ),
            **errors(409, descriptions={409: "Requisição com o mesmo Idempotency-Key ainda em andamento."}),
        },
    )
    def create(self, request):
        payload = TicketCreateIn(data=request.data)
        payload.is_valid(raise_exception=True)
        ticket, created = ticket_create(organization=self.organization, **payload.validated_data)
        if created:
            return EnvelopeResponse(ticket_new_public(ticket), message="Ticket criado.", status=201)
        data = tickets_public([ticket_row(ticket)])[0]
        return EnvelopeResponse(data, message="Ticket já existente para este external_id.")

    @extend_schema(
        operation_id="v1_tickets_changes",
        tags=TAGS,
        description=(
            "Os tickets da organização alterados depois de `desde`, da alteração mais antiga à mais nova, cada um "
            "exatamente como em GET /api/v1/tickets/{id}, e os excluídos (`excluidos`). Conta como alteração o que "
            "o parceiro vê: criação, status, prioridade, resolução, uma resposta pública ou a sua edição (uma nota "
            "interna não). Seguindo `proximo_cursor` até `tem_mais` ser false, nenhum ticket alterado ou excluído "
            "fica de fora, mesmo com escritas simultâneas; um ticket pode vir mais de uma vez (fica valendo a última "
            "versão recebida). Depois, continue mais tarde com o mesmo `proximo_cursor`. Um cursor alterado ou de "
            "outra organização é um 422 no campo `desde`; um cursor mais antigo que a retenção "
            "(`EVENT_RETENTION_DAYS`, 30 dias) é um 410 no campo `desde`: ressincronize sem `desde`."
        ),
        parameters=[TicketChangesQuery],
        responses={
            200: envelope("AlteracoesListadas", TicketChangesOut),
            **errors(410, descriptions={410: "Cursor mais antigo que a retenção (campo `desde`): ressincronize."}),
        },
    )
    @action(detail=False, methods=["get"], url_path="alteracoes")
    def changes(self, request):
        query = TicketChangesQuery.from_request(request, self.organization).validated_data
        page = ticket_changes(
            organization=self.organization, start=query.get("desde"), limit=query["limite"], columns=TICKET_COLUMNS
        )
        payload = {
            "itens": tickets_public(page.tickets),
            "excluidos": [tombstone_public(tombstone) for tombstone in page.deleted],
            "proximo_cursor": changes_cursor(page.next, self.organization),
            "tem_mais": page.has_more,
        }
        return EnvelopeResponse(payload, message="Alterações listadas.")

    @extend_schema(
        operation_id="v1_tickets_retrieve",
        tags=TAGS,
        description="Um ticket com as suas respostas públicas (notas internas nunca aparecem).",
        responses={
            200: envelope("TicketEncontrado", TicketPublicOut),
            **errors(404, descriptions={404: TICKET_NOT_FOUND}),
        },
    )
    def retrieve(self, request, id):
        row = ticket_row_get(organization=self.organization, ticket_id=id, columns=TICKET_COLUMNS)
        return EnvelopeResponse(tickets_public([row])[0], message="Ticket encontrado.")

    @extend_schema(
        operation_id="v1_tickets_replies_create",
        tags=TAGS,
        description=(
            "Responde como o cliente (o contato do ticket). Um ticket aguardando o cliente ou resolvido volta a "
            "aberto; num ticket fechado, 409. Nenhum webhook é disparado."
        ),
        parameters=[IDEMPOTENCY_KEY],
        request=ReplyIn,
        responses={
            201: envelope("RespostaEnviada", ReplyPublicOut),
            **errors(
                404,
                409,
                descriptions={
                    404: TICKET_NOT_FOUND,
                    409: "Ticket fechado (campo `status`), ou requisição com o mesmo Idempotency-Key em andamento.",
                },
            ),
        },
    )
    @action(detail=True, methods=["post"], url_path="respostas")
    def replies(self, request, id):
        payload = ReplyIn(data=request.data)
        if not payload.is_valid():
            ticket_get(organization=self.organization, ticket_id=id)  # a missing ticket's 404 comes first
            raise ValidationError(payload.errors)
        reply = reply_create_by_customer(organization=self.organization, ticket_id=id, **payload.validated_data)
        return EnvelopeResponse(reply_public(reply_row(reply)), message="Resposta enviada.", status=201)

    @extend_schema(
        operation_id="v1_tickets_replies_update",
        tags=TAGS,
        description="Edita uma resposta enviada pela API (por qualquer chave da organização); `editado` passa a true.",
        request=ReplyIn,
        responses={
            200: envelope("RespostaAtualizada", ReplyPublicOut),
            **errors(
                403,
                404,
                descriptions={
                    403: "A resposta é de um atendente, não foi enviada pela API (campo `resposta`).",
                    404: REPLY_NOT_FOUND,
                },
            ),
        },
    )
    @action(detail=True, methods=["patch"], url_path=r"respostas/(?P<resposta>[^/]+)")
    def reply(self, request, id, resposta):
        reply = reply_get_public(ticket=ticket_get(organization=self.organization, ticket_id=id), reply_id=resposta)
        reply_ensure_editable_by_customer(reply)  # 403 before the body is even looked at
        payload = ReplyIn(data=request.data)
        payload.is_valid(raise_exception=True)
        reply = reply_edit_as_customer(reply=reply, **payload.validated_data)
        return EnvelopeResponse(reply_public(reply_row(reply)), message="Resposta atualizada.")


class AgentViewSet(PartnerViewSet):
    scopes = {"list": Scope.TICKETS_READ}

    @extend_schema(
        operation_id="v1_agents_list",
        tags=TAGS,
        description="Atendentes ativos da organização, por nome, 10 por página.",
        parameters=[PageQuery],
        responses={200: envelope("AtendentesListados", page_of("PaginaAtendente", AgentOut))},
    )
    def list(self, request):
        agents = agent_list_active(organization=self.organization)
        page = PageQuery.from_request(request).page_of(agents, columns=AGENT_COLUMNS, per_page=AGENTS_PER_PAGE)
        return EnvelopeResponse(
            page_payload(page, lambda rows: agents_public(request, rows)), message="Atendentes listados."
        )
