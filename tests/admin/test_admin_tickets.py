"""The ticket admin as support staff use it: forms posted as a browser would, from the rendered page."""

import json
import re
from html import unescape
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from helpdesk.models import User
from helpdesk.permissions import support_group_ensure
from helpdesk.services import agent_set_active
from integrations.models import EventKind, WebhookEvent
from tests.assertions import bearer_client, run_admin_action
from tests.contract import TICKET_CHANGELIST, TICKET_LIST_ALL
from tests.factories import (
    PASSWORD,
    make_agent,
    make_agent_reply,
    make_customer_reply,
    make_key,
    make_ticket,
    make_webhook,
    status_of,
)
from tickets.models import Reply, ReplyOrigin, StatusCategory, Ticket, TicketStatus
from tickets.services import RequesterData, ticket_update

NOT_AN_AGENT = "Somente atendentes ativos da organização podem responder."

pytestmark = pytest.mark.usefixtures("insecure_webhook_urls")


class _FormValues(HTMLParser):
    """The name/value pairs a browser would submit for one <form>: disabled controls are not sent."""

    def __init__(self, form_id: str):
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.values: dict[str, list[str]] = {}
        self.disabled: set[str] = set()
        self._textarea: tuple[str, bool] | None = None
        self._text = ""
        self._select: tuple[str, bool] | None = None

    def _add(self, name: str, value: str) -> None:
        self.values.setdefault(name, []).append(value)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.inside = attributes.get("id") == self.form_id
            return
        name = attributes.get("name")
        if not self.inside or (name is None and tag != "option"):
            return
        disabled = "disabled" in attributes
        if disabled and name:
            self.disabled.add(name)
        if tag == "input":
            self._input(name, attributes, disabled)
        elif tag == "textarea":
            self._textarea, self._text = (name, disabled), ""
        elif tag == "select":
            self._select = (name, disabled)
        elif tag == "option" and self._select and not self._select[1] and "selected" in attributes:
            self._add(self._select[0], attributes.get("value") or "")

    def _input(self, name: str, attributes: dict, disabled: bool) -> None:
        kind = attributes.get("type", "text")
        if disabled or kind in ("submit", "button", "image", "reset", "file"):
            return
        if kind not in ("checkbox", "radio"):
            self._add(name, attributes.get("value") or "")
        elif "checked" in attributes:
            self._add(name, attributes.get("value") or "on")

    def handle_data(self, data):
        if self._textarea:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea" and self._textarea:
            name, disabled = self._textarea
            if not disabled:
                # HTML drops the newline that follows <textarea>; Django's template writes one.
                self._add(name, self._text.removeprefix("\r\n").removeprefix("\n"))
            self._textarea = None
        elif tag == "select":
            self._select = None


def form_values(response, form_id: str = "ticket_form") -> tuple[dict, set]:
    parser = _FormValues(form_id)
    parser.feed(response.content.decode())
    assert parser.values, f"no form #{form_id} on the page"
    return {name: values if len(values) > 1 else values[0] for name, values in parser.values.items()}, parser.disabled


def change_url(ticket: Ticket) -> str:
    return reverse("admin:tickets_ticket_change", args=[ticket.pk])


def thread_row(values: dict, reply: Reply) -> str:
    """The inline prefix (replies-N) of a reply in the rendered thread."""
    total = int(values["replies-TOTAL_FORMS"])
    matches = [f"replies-{n}" for n in range(total) if values.get(f"replies-{n}-id") == str(reply.pk)]
    assert len(matches) == 1
    return matches[0]


def submit(client, ticket: Ticket, edit=None, **changes):
    """GET the change page, change what a user would, and POST it back with the Save button."""
    page = client.get(change_url(ticket))
    assert page.status_code == 200
    values, _disabled = form_values(page)
    assert values["replies-TOTAL_FORMS"] == str(ticket.replies.count())
    if edit:
        edit(values)
    values.update(changes)
    values["_save"] = "Salvar"
    return client.post(change_url(ticket), values)


def events(organization, kind: str) -> list[WebhookEvent]:
    return list(WebhookEvent.objects.filter(organization=organization, kind=kind))


def partner_ticket(organization, ticket: Ticket) -> dict:
    response = bearer_client(make_key(organization)).get(f"/api/v1/tickets/{ticket.pk}")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def own_agent(admin):
    return admin.agent


@pytest.fixture
def webhook(organization):
    return make_webhook(organization, url="http://127.0.0.1:9/erp")


@pytest.fixture
def ticket(organization):
    return make_ticket(
        organization,
        subject="Impressora não imprime",
        requester=RequesterData(name="Ana Cliente", email="ana@cliente.test", external_id="cli-ana"),
        external_id="pedido-ana",
    )


# --- replying ---------------------------------------------------------------------------------------


def test_public_reply_is_an_agent_reply_by_the_staff_user_and_emits_event(
    staff, organization, own_agent, webhook, ticket
):
    response = submit(staff, ticket, new_reply="  Já enviamos um técnico.  ")

    assert response.status_code == 302
    assert response["Location"] == TICKET_CHANGELIST
    reply = ticket.replies.get()
    assert (reply.body, reply.is_internal, reply.origin, reply.author_agent, reply.author_contact, reply.edited) == (
        "Já enviamos um técnico.",
        False,
        ReplyOrigin.AGENT,
        own_agent,
        None,
        False,
    )
    [event] = events(organization, EventKind.PUBLIC_REPLY)
    body = json.loads(event.body)
    assert body["evento"] == "ticket.resposta_publica"
    assert body["data"]["resposta"]["id"] == str(reply.pk)
    assert body["data"]["resposta"]["mensagem"] == "Já enviamos um técnico."
    assert [delivery.webhook for delivery in event.deliveries.all()] == [webhook]
    assert WebhookEvent.objects.count() == 1
    assert [r["mensagem"] for r in partner_ticket(organization, ticket)["data"]["respostas"]] == [
        "Já enviamos um técnico."
    ]


def test_internal_note_is_internal_emits_nothing_and_stays_out_of_partner_api(
    staff, organization, own_agent, webhook, ticket
):
    note = "NOTA-INTERNA: cliente inadimplente"

    response = submit(staff, ticket, new_reply=note, internal="on")

    assert response.status_code == 302
    reply = ticket.replies.get()
    assert (reply.body, reply.is_internal, reply.origin, reply.author_agent) == (
        note,
        True,
        ReplyOrigin.AGENT,
        own_agent,
    )
    assert WebhookEvent.objects.count() == 0
    body = partner_ticket(organization, ticket)
    assert body["data"]["respostas"] == []
    assert "NOTA-INTERNA" not in json.dumps(body, ensure_ascii=False)


def test_thread_shows_notes_marked_and_every_message_in_order(staff, organization, own_agent, ticket):
    make_customer_reply(ticket, body="Primeira do cliente")
    make_agent_reply(ticket, own_agent, body="Nota sobre o cliente", internal=True)
    make_agent_reply(ticket, own_agent, body="Resposta pública")

    html = staff.get(change_url(ticket)).content.decode()

    positions = [html.index(text) for text in ("Primeira do cliente", "Nota sobre o cliente", "Resposta pública")]
    assert positions == sorted(positions)
    assert html.count('class="nota-interna"') == 1
    assert html.count('class="resposta-publica"') == 2


def test_editing_own_public_reply_changes_it_and_emits_edited_event(staff, organization, own_agent, webhook, ticket):
    reply = make_agent_reply(ticket, own_agent, body="Texto original")

    def edit(values):
        values[f"{thread_row(values, reply)}-body"] = "Texto corrigido"

    response = submit(staff, ticket, edit=edit)

    assert response.status_code == 302
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Texto corrigido", True)
    [event] = events(organization, EventKind.REPLY_EDITED)
    data = json.loads(event.body)["data"]
    assert data["mensagem_anterior"] == "Texto original"
    assert data["resposta"]["mensagem"] == "Texto corrigido"
    assert data["resposta"]["editado"] is True
    assert ticket.replies.count() == 1


def test_saving_without_touching_own_reply_does_not_edit_it(staff, organization, own_agent, webhook, ticket):
    reply = make_agent_reply(ticket, own_agent, body="Linha 1\nLinha 2")

    response = submit(staff, ticket)

    assert response.status_code == 302
    reply.refresh_from_db()
    assert (reply.body, reply.edited) == ("Linha 1\nLinha 2", False)
    assert events(organization, EventKind.REPLY_EDITED) == []


def test_other_agent_and_customer_replies_are_disabled_and_posting_changes_nothing(
    staff, organization, webhook, ticket
):
    colleague = make_agent(organization, name="Carla Colega")
    theirs = make_agent_reply(ticket, colleague, body="Resposta da Carla")
    customer = make_customer_reply(ticket, body="Mensagem do cliente")
    page = staff.get(change_url(ticket))
    values, disabled = form_values(page)
    theirs_row, customer_row = thread_row(values, theirs), thread_row(values, customer)
    assert {f"{theirs_row}-body", f"{customer_row}-body"} <= disabled
    events_before = WebhookEvent.objects.count()

    values[f"{theirs_row}-body"] = "Adulterada"
    values[f"{customer_row}-body"] = "Adulterada"
    values["_save"] = "Salvar"
    response = staff.post(change_url(ticket), values)

    assert response.status_code == 302
    theirs.refresh_from_db()
    customer.refresh_from_db()
    assert (theirs.body, theirs.edited) == ("Resposta da Carla", False)
    assert (customer.body, customer.edited) == ("Mensagem do cliente", False)
    assert WebhookEvent.objects.count() == events_before
    assert events(organization, EventKind.REPLY_EDITED) == []


def test_own_internal_note_can_be_edited_without_event(staff, organization, own_agent, webhook, ticket):
    note = make_agent_reply(ticket, own_agent, body="Nota antiga", internal=True)

    def edit(values):
        values[f"{thread_row(values, note)}-body"] = "Nota nova"

    assert submit(staff, ticket, edit=edit).status_code == 302

    note.refresh_from_db()
    assert (note.body, note.edited, note.is_internal) == ("Nota nova", True, True)
    assert WebhookEvent.objects.count() == 0


def test_staff_user_without_an_agent_profile_cannot_reply(client, organization, webhook, ticket):
    user = User.objects.create_user(
        email="gerente@acme.test", password=PASSWORD, organization=organization, is_staff=True
    )
    user.groups.add(support_group_ensure())
    client.force_login(user)
    before = Ticket.objects.filter(pk=ticket.pk).values().get()

    response = submit(client, ticket, new_reply="Tentativa de resposta", priority="urgente")

    assert response.status_code == 200
    form = response.context["adminform"].form
    assert form.errors == {"__all__": [NOT_AN_AGENT]}
    assert Reply.objects.count() == 0
    assert WebhookEvent.objects.count() == 0
    assert Ticket.objects.filter(pk=ticket.pk).values().get() == before


def test_a_deactivated_agent_is_out_of_the_admin_at_once(client, organization, admin, webhook, ticket):
    client.force_login(admin)
    agent_set_active(agent=admin.agent, is_active=False)
    before = Ticket.objects.filter(pk=ticket.pk).values().get()

    page = client.get(change_url(ticket))
    response = client.post(change_url(ticket), {"new_reply": "Tentativa de resposta", "priority": "urgente"})

    assert page.status_code == 302 and page["Location"].startswith("/admin/login/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert Reply.objects.count() == 0
    assert WebhookEvent.objects.count() == 0
    assert Ticket.objects.filter(pk=ticket.pk).values().get() == before


# --- status, assignee, priority -----------------------------------------------------------------


def test_changing_status_to_resolved_sets_resolved_at_and_emits_event(staff, organization, webhook, ticket):
    resolved = status_of(organization, StatusCategory.RESOLVED)

    response = submit(staff, ticket, status=str(resolved.pk))

    assert response.status_code == 302
    ticket.refresh_from_db()
    assert ticket.status == resolved
    assert ticket.resolved_at is not None
    [event] = events(organization, EventKind.RESOLVED)
    assert json.loads(event.body)["data"]["ticket"]["status"] == {
        "nome": "Resolvido",
        "categoria": "resolvido",
        "cor": "#10B981",
    }
    [changed] = events(organization, EventKind.STATUS_CHANGED)
    assert json.loads(changed.body)["data"]["alteracoes"]["status"]["anterior"]["categoria"] == "aberto"
    assert WebhookEvent.objects.count() == 2

    reopened = submit(staff, ticket, status=str(status_of(organization, StatusCategory.OPEN).pk))

    assert reopened.status_code == 302
    ticket.refresh_from_db()
    assert ticket.resolved_at is None
    assert len(events(organization, EventKind.RESOLVED)) == 1
    assert len(events(organization, EventKind.STATUS_CHANGED)) == 2


def test_assignee_and_priority_change(staff, admin, organization, webhook, ticket):
    colleague = make_agent(organization, name="Carla Colega")

    response = submit(staff, ticket, assignee=str(colleague.pk), priority="urgente")

    assert response.status_code == 302
    ticket.refresh_from_db()
    assert (ticket.assignee, ticket.priority) == (colleague, "urgente")
    assert ticket.status.category == StatusCategory.OPEN
    kinds = list(WebhookEvent.objects.order_by("change_tx", "change_seq").values_list("kind", flat=True))
    assert kinds == [EventKind.PRIORITY_CHANGED, EventKind.ASSIGNED]
    actor = json.loads(WebhookEvent.objects.get(kind=EventKind.ASSIGNED).body)["data"]["ator"]
    assert actor == {"tipo": "agente", "id": str(admin.agent.pk), "nome": admin.agent.name}

    assert submit(staff, ticket, assignee="").status_code == 302

    ticket.refresh_from_db()
    assert ticket.assignee is None
    unassigned = json.loads(WebhookEvent.objects.filter(kind=EventKind.ASSIGNED).order_by("change_seq").last().body)
    assert unassigned["data"]["alteracoes"]["atendente"] == {
        "anterior": {"id": str(colleague.pk), "nome": "Carla Colega"},
        "atual": None,
    }


def test_resolve_action_resolves_selected_tickets(staff, organization, webhook, ticket):
    second = make_ticket(organization)
    untouched = make_ticket(organization)

    response = run_admin_action(staff, TICKET_CHANGELIST, "resolve", [ticket, second])

    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]] == ["2 ticket(s) resolvido(s)."]
    for resolved in (ticket, second):
        resolved.refresh_from_db()
        assert resolved.status.category == StatusCategory.RESOLVED
        assert resolved.resolved_at is not None
    untouched.refresh_from_db()
    assert (untouched.status.category, untouched.resolved_at) == (StatusCategory.OPEN, None)
    assert len(events(organization, EventKind.RESOLVED)) == 2


def test_assign_to_me_action_assigns_to_the_staff_user_agent(staff, organization, own_agent, ticket):
    second = make_ticket(organization)

    response = run_admin_action(staff, TICKET_CHANGELIST, "assign_to_me", [ticket, second])

    assert [str(m) for m in response.context["messages"]] == ["2 ticket(s) atribuído(s) a você."]
    assert set(Ticket.objects.values_list("assignee", flat=True)) == {own_agent.pk}


def test_assign_to_me_refuses_a_staff_user_who_is_not_an_active_agent(client, organization, ticket):
    # (A deactivated agent is no longer a user who can log in: see test_a_deactivated_agent_is_out_of_the_admin.)
    user = User.objects.create_user(
        email="gerente@acme.test", password=PASSWORD, organization=organization, is_staff=True
    )
    user.groups.add(support_group_ensure())
    client.force_login(user)

    response = run_admin_action(client, TICKET_CHANGELIST, "assign_to_me", [ticket])

    assert [str(m) for m in response.context["messages"]] == ["Somente atendentes ativos podem assumir tickets."]
    ticket.refresh_from_db()
    assert ticket.assignee is None


def change_history(client, ticket: Ticket) -> list[str]:
    """The ticket page's history of changes, one line per change without its time: "status Aberto → Resolvido,
    por X", "prioridade media → alta, por X"."""
    html = client.get(change_url(ticket)).content.decode()
    history = re.search(r'<ul class="historico-alteracoes"[^>]*>(.*?)</ul>', html, re.S)
    if history is None:
        return []
    lines = [re.sub(r"<[^>]+>", "", item) for item in re.findall(r"<li[^>]*>(.*?)</li>", history.group(1), re.S)]
    return [unescape(line).split(": ", 1)[1] for line in lines]


def status_history(client, ticket: Ticket) -> list[str]:
    """The history's status changes: "Aberto → Resolvido, por X"."""
    return [line.removeprefix("status ") for line in change_history(client, ticket) if line.startswith("status ")]


def test_the_customers_moves_through_the_api_show_as_cliente_via_api(staff, admin, organization, ticket):
    partner = bearer_client(make_key(organization, name="ERP"))
    assert status_history(staff, ticket) == []

    assert partner.post(f"/api/v1/tickets/{ticket.pk}/resolver").status_code == 200
    assert submit(staff, ticket, status=str(status_of(organization, StatusCategory.WAITING).pk)).status_code == 302
    assert partner.post(f"/api/v1/tickets/{ticket.pk}/reabrir").status_code == 200
    assert submit(staff, ticket, status=str(status_of(organization, StatusCategory.RESOLVED).pk)).status_code == 302
    reply = partner.post(f"/api/v1/tickets/{ticket.pk}/respostas", {"mensagem": "Voltou."}, format="json")
    assert reply.status_code == 201  # a customer reply reopens it: the customer's move too

    assert status_history(staff, ticket) == [
        "Aberto → Resolvido, por cliente via API",
        f"Resolvido → Aguardando cliente, por {admin.name}",
        "Aguardando cliente → Aberto, por cliente via API",
        f"Aberto → Resolvido, por {admin.name}",
        "Resolvido → Aberto, por cliente via API",
    ]
    html = staff.get(change_url(ticket)).content.decode()
    assert "ERP" not in html  # the key's name is the audit trail's business, not the thread's
    assert "histórico de alterações" in html.lower()


def test_a_move_that_changed_nothing_is_not_in_the_history(staff, organization, ticket):
    partner = bearer_client(make_key(organization))

    assert partner.post(f"/api/v1/tickets/{ticket.pk}/reabrir").status_code == 200  # already aberto

    assert status_history(staff, ticket) == []
    assert "—" in staff.get(change_url(ticket)).content.decode()


def test_the_history_of_another_organizations_ticket_is_not_shown(staff, other_organization):
    theirs = make_ticket(other_organization)
    bearer_client(make_key(other_organization)).post(f"/api/v1/tickets/{theirs.pk}/resolver")

    response = staff.get(change_url(theirs))

    assert response.status_code == 302  # the admin's "does not exist" (tenancy): back to the index
    assert "cliente via API" not in staff.get(response["Location"], follow=True).content.decode()


# --- the list -------------------------------------------------------------------------------------


def badge(color: str, name: str) -> str:
    return (
        f'<td class="field-colored_status"><span style="background:{color};color:#fff;padding:2px 8px;'
        f'border-radius:10px;white-space:nowrap">{name}</span></td>'
    )


def test_list_shows_status_badge_in_status_color(staff, organization, ticket):
    resolved = make_ticket(organization)
    ticket_update(ticket=resolved, status=status_of(organization, StatusCategory.RESOLVED))
    custom = make_ticket(organization)
    ticket_update(
        ticket=custom,
        status=TicketStatus.objects.create(
            organization=organization, name="Na fila", category="aberto", color="#123ABC"
        ),
    )
    # A colour that is not #RRGGBB (written around the form) never reaches the style attribute.
    broken = make_ticket(organization)
    ticket_update(
        ticket=broken,
        status=TicketStatus.objects.create(
            organization=organization, name="Quebrado", category="aberto", color="x;top:0"
        ),
    )

    html = staff.get(TICKET_LIST_ALL).content.decode()

    assert badge("#3B82F6", "Aberto") in html
    assert badge("#10B981", "Resolvido") in html
    assert badge("#123ABC", "Na fila") in html
    assert badge("#6B7280", "Quebrado") in html
    assert "x;top:0" not in html


def listed(client, params) -> list[Ticket]:
    response = client.get(TICKET_CHANGELIST, {"fila": "todos", **params})
    assert response.status_code == 200
    assert "e=1" not in response.get("Location", "")
    return list(response.context["cl"].result_list)


@pytest.fixture
def assorted(organization, own_agent):
    """Tickets #1..#4 without digits in their texts, so a number search matches only numbers."""
    colleague = make_agent(organization, name="Carla Colega")

    def create(subject, name, priority, status=None, assignee=None):
        email = f"{name.split()[0].lower()}@cliente.test"
        ticket = make_ticket(
            organization,
            subject=subject,
            description="Sem detalhes",
            priority=priority,
            requester=RequesterData(name=name, email=email, external_id=f"cli-{name.split()[0].lower()}"),
        )
        if status or assignee:
            ticket_update(ticket=ticket, status=status and status_of(organization, status), assignee=assignee)
        ticket.refresh_from_db()
        return ticket

    return {
        "open": create("Impressora travada", "Ana Souza", "baixa"),
        "resolved": create("Senha expirada", "Bruno Lima", "alta", status=StatusCategory.RESOLVED, assignee=own_agent),
        "waiting": create("Nota fiscal", "Caio Dias", "alta", status=StatusCategory.WAITING, assignee=colleague),
        "closed": create("Troca de plano", "Dora Reis", "urgente", status=StatusCategory.CLOSED),
        "colleague": colleague,
    }


def numbers_of(tickets) -> list[int]:
    """The sorted numbers of ticket objects, such as the rows of the changelist."""
    return sorted(t.number for t in tickets)


def test_filter_by_status_category(staff, assorted):
    assert numbers_of(listed(staff, {"categoria": "resolvido"})) == [assorted["resolved"].number]
    assert numbers_of(listed(staff, {"categoria": "aguardando"})) == [assorted["waiting"].number]
    assert numbers_of(listed(staff, {"categoria": "aberto"})) == [assorted["open"].number]


def test_filter_by_priority(staff, assorted):
    assert numbers_of(listed(staff, {"priority__exact": "alta"})) == numbers_of(
        [assorted["resolved"], assorted["waiting"]]
    )
    assert numbers_of(listed(staff, {"priority__exact": "urgente"})) == [assorted["closed"].number]


def test_filter_by_assignee(staff, own_agent, assorted):
    assert numbers_of(listed(staff, {"atendente": str(own_agent.pk)})) == [assorted["resolved"].number]
    assert numbers_of(listed(staff, {"atendente": str(assorted["colleague"].pk)})) == [assorted["waiting"].number]
    assert numbers_of(listed(staff, {"atendente": "nenhum"})) == numbers_of([assorted["open"], assorted["closed"]])


def test_assignee_filter_offers_only_own_organization_agents(
    staff, organization, other_organization, own_agent, assorted
):
    foreign_agent = make_agent(other_organization, name="Atendente GLOBEX-CONFIDENCIAL")

    response = staff.get(TICKET_LIST_ALL)

    [assignee_filter] = [
        spec for spec in response.context["cl"].filter_specs if getattr(spec, "parameter_name", None) == "atendente"
    ]
    assert assignee_filter.lookup_choices == [
        ("nenhum", "Sem atendente"),
        *sorted(
            [(str(own_agent.pk), own_agent.name), (str(assorted["colleague"].pk), "Carla Colega")], key=lambda c: c[1]
        ),
    ]
    html = response.content.decode()
    assert str(foreign_agent.pk) not in html
    assert "GLOBEX-CONFIDENCIAL" not in html


@pytest.mark.parametrize(
    "term, key",
    [
        ("2", "resolved"),
        ("#3", "waiting"),
        ("impressora", "open"),
        ("SENHA EXPIRADA", "resolved"),
        ("dora@cliente.test", "closed"),
        ("caio@CLIENTE", "waiting"),
        ("cli-bruno", "resolved"),
        ("Ana Souza", "open"),
    ],
)
def test_search_by_number_subject_requester_email_and_external_id(staff, assorted, term, key):
    assert numbers_of(listed(staff, {"q": term})) == [assorted[key].number]


def test_number_search_keeps_the_active_filters(staff, assorted):
    open_number = assorted["open"].number

    found = listed(staff, {"categoria": "resolvido", "q": str(open_number)})

    # Ticket #1 is open: a search inside the resolved ones finds nothing.
    assert numbers_of(found) == []


# --- the site ---------------------------------------------------------------------------------------


def test_login_page_and_index_carry_the_product_title(client, admin):
    login = client.get("/admin/login/")

    assert login.status_code == 200
    login_html = login.content.decode()
    assert "| Helpdesk</title>" in login_html
    assert "Helpdesk — painel de atendimento" in login_html

    client.force_login(admin)
    index = client.get("/admin/")

    assert index.status_code == 200
    index_html = index.content.decode()
    assert "<title>Atendimento | Helpdesk</title>" in index_html
    assert '<div id="site-name"><a href="/admin/">Helpdesk — painel de atendimento</a></div>' in index_html


# --- bad choices are form errors, never a 500 ------------------------------------------------------


def assignee_options(response) -> set[str]:
    """The agent ids the ticket page offers in its assignee select."""
    field = response.context["adminform"].form.fields["assignee"]
    return {str(value) for value, _label in field.choices if value}


@pytest.mark.parametrize("value", ["not-a-uuid", "123", "00000000-0000-0000-0000-00000000000g"])
def test_a_malformed_assignee_filter_is_djangos_bad_lookup_page_not_a_500(staff, assorted, value):
    response = staff.get(TICKET_CHANGELIST, {"fila": "todos", "atendente": value})

    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")


def test_an_unknown_assignee_in_the_filter_lists_nothing(staff, assorted):
    assert listed(staff, {"atendente": "00000000-0000-0000-0000-000000000000"}) == []


def test_the_ticket_page_offers_active_agents_and_keeps_the_current_inactive_assignee(
    staff, organization, own_agent, ticket
):
    former = make_agent(organization, name="Ex Atendente")
    idle = make_agent(organization, name="Outro Inativo")
    ticket_update(ticket=ticket, assignee=former)
    agent_set_active(agent=former, is_active=False)
    agent_set_active(agent=idle, is_active=False)

    page = staff.get(change_url(ticket))

    assert assignee_options(page) == {str(own_agent.pk), str(former.pk)}
    # Saving the page as it is keeps the inactive assignee; only a new assignment must be active.
    assert submit(staff, ticket, priority="alta").status_code == 302
    ticket.refresh_from_db()
    assert (ticket.assignee, ticket.priority) == (former, "alta")


def test_choosing_an_inactive_agent_is_a_form_error(staff, organization, own_agent, ticket):
    idle = make_agent(organization, name="Inativo")
    agent_set_active(agent=idle, is_active=False)

    response = submit(staff, ticket, assignee=str(idle.pk))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["assignee"]
    ticket.refresh_from_db()
    assert ticket.assignee is None


def test_the_page_keeps_the_related_widget_without_add_or_change_links(staff, organization, ticket):
    html = staff.get(change_url(ticket)).content.decode()

    assert 'id="add_id_assignee"' not in html
    assert 'id="change_id_assignee"' not in html
    assert 'id="add_id_status"' not in html


@pytest.mark.parametrize("field", ["assignee", "status"])
def test_a_superuser_choosing_another_organizations_agent_or_status_gets_a_form_error(
    client, organization, other_organization, ticket, field
):
    client.force_login(User.objects.create_superuser(email="root@helpdesk.test", password=PASSWORD))
    foreign = {
        "assignee": make_agent(other_organization, name="Atendente de Fora"),
        "status": status_of(other_organization, StatusCategory.WAITING),
    }[field]
    before = Ticket.objects.values().get(pk=ticket.pk)

    response = submit(client, ticket, **{field: str(foreign.pk)})

    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field]
    assert Ticket.objects.values().get(pk=ticket.pk) == before


@pytest.mark.parametrize("field", ["assignee", "status"])
def test_staff_choosing_another_organizations_agent_or_status_gets_a_form_error(
    staff, other_organization, ticket, field
):
    foreign = {
        "assignee": make_agent(other_organization, name="Atendente de Fora"),
        "status": status_of(other_organization, StatusCategory.WAITING),
    }[field]
    before = Ticket.objects.values().get(pk=ticket.pk)

    response = submit(staff, ticket, **{field: str(foreign.pk)})

    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field]
    assert Ticket.objects.values().get(pk=ticket.pk) == before


def test_an_agent_opens_a_ticket_in_the_admin_and_partners_hear_of_it(staff, admin, organization, webhook):
    colleague = make_agent(organization, name="Carla Colega")
    page = staff.get(reverse("admin:tickets_ticket_add"))
    values, _disabled = form_values(page)
    values.update(
        subject="Cliente ligou",
        description="Quer trocar o produto.",
        priority="alta",
        assignee=str(colleague.pk),
        requester_name="Maria",
        requester_email="Maria@Example.test",
        requester_external_id="cli-maria",
        _save="Salvar",
    )

    response = staff.post(reverse("admin:tickets_ticket_add"), values)

    assert response.status_code == 302
    ticket = Ticket.objects.get(organization=organization, subject="Cliente ligou")
    assert response["Location"] == change_url(ticket)
    assert (ticket.channel, ticket.priority, ticket.assignee) == ("painel", "alta", colleague)
    assert (ticket.requester.email, ticket.requester.external_id) == ("maria@example.test", "cli-maria")
    created = json.loads(WebhookEvent.objects.get(kind=EventKind.TICKET_CREATED).body)
    assert created["data"]["ator"] == {"tipo": "agente", "id": str(admin.agent.pk), "nome": admin.agent.name}
    assert created["data"]["ticket"]["canal_origem"] == "painel"
    assert [event.kind for event in WebhookEvent.objects.order_by("change_tx", "change_seq")] == [
        EventKind.TICKET_CREATED,
        EventKind.ASSIGNED,
    ]


def test_the_admin_add_page_refuses_a_ticket_without_a_requester_name(staff, organization):
    values, _disabled = form_values(staff.get(reverse("admin:tickets_ticket_add")))
    values.update(subject="Sem nome", description="x", priority="media", _save="Salvar")

    response = staff.post(reverse("admin:tickets_ticket_add"), values)

    assert response.status_code == 200
    assert "requester_name" in response.context["adminform"].form.errors
    assert not Ticket.objects.filter(subject="Sem nome").exists()


# --- tags (issue 22) ------------------------------------------------------------------------------------------


def test_the_ticket_page_edits_tags_normalised_and_emits_the_change(staff, admin, organization, webhook, ticket):
    ticket_update(ticket=ticket, tags_add=["antiga", "fica"])
    page = staff.get(change_url(ticket))
    assert form_values(page)[0]["tags_text"] == "antiga, fica"

    WebhookEvent.objects.all().delete()  # the set-up's own change

    response = submit(staff, ticket, tags_text="fica, Cliente  VIP, urgente,")

    assert response.status_code == 302
    assert Ticket.objects.get(pk=ticket.pk).tags == ["cliente-vip", "fica", "urgente"]
    [event] = events(organization, EventKind.TAGS_CHANGED)
    body = json.loads(event.body)["data"]
    assert body["alteracoes"] == {"tags": {"adicionadas": ["cliente-vip", "urgente"], "removidas": ["antiga"]}}
    assert body["ator"] == {"tipo": "agente", "id": str(admin.agent.pk), "nome": admin.agent.name}


def test_a_tag_the_partner_added_while_the_page_was_open_stays(staff, organization, ticket):
    page = staff.get(change_url(ticket))
    values, _disabled = form_values(page)
    ticket_update(ticket=ticket, tags_add=["do-parceiro"])  # meanwhile

    values.update(tags_text="do-agente", _save="Salvar")
    assert staff.post(change_url(ticket), values).status_code == 302

    assert Ticket.objects.get(pk=ticket.pk).tags == ["do-agente", "do-parceiro"]


def test_a_bad_tag_or_too_many_is_a_form_error_and_nothing_changes(staff, organization, ticket):
    too_long = submit(staff, ticket, tags_text="ok, " + "x" * 51)
    too_many = submit(staff, ticket, tags_text=", ".join(f"t{n}" for n in range(21)))

    assert too_long.status_code == 200
    assert "Tag inválida" in unescape(too_long.content.decode())
    assert too_many.status_code == 200
    assert "Um ticket tem no máximo 20 tags." in unescape(too_many.content.decode())
    assert Ticket.objects.get(pk=ticket.pk).tags == []
    assert not events(organization, EventKind.TAGS_CHANGED)


def test_a_limit_a_partner_reached_while_the_page_was_open_shows_the_page_again_with_why(staff, organization, ticket):
    """The form checks the 20 tags against what the page showed; a partner's tags added meanwhile make the service
    refuse the save: the page comes back with the reason (no server error page), and nothing of the save is
    written, the status change beside the tags included."""
    ticket_update(ticket=ticket, tags_add=[f"t{n}" for n in range(18)])
    values, _disabled = form_values(staff.get(change_url(ticket)))
    ticket_update(ticket=ticket, tags_add=["p1", "p2"])  # meanwhile, the partner: 20
    resolved = TicketStatus.objects.get(organization=organization, category=StatusCategory.RESOLVED)

    values.update(tags_text=values["tags_text"] + ", do-agente", status=str(resolved.pk), _save="Salvar")
    response = staff.post(change_url(ticket), values)

    assert response.status_code == 302 and response["Location"] == change_url(ticket)
    page = staff.get(response["Location"])
    assert "Um ticket tem no máximo 20 tags." in unescape(page.content.decode())
    kept = Ticket.objects.get(pk=ticket.pk)
    assert len(kept.tags) == 20 and "do-agente" not in kept.tags
    assert kept.status_id == ticket.status_id


def test_saving_without_touching_the_tags_changes_nothing(staff, organization, ticket):
    ticket_update(ticket=ticket, tags_add=["vip"])
    before = len(events(organization, EventKind.TAGS_CHANGED))

    assert submit(staff, ticket).status_code == 302

    assert Ticket.objects.get(pk=ticket.pk).tags == ["vip"]
    assert len(events(organization, EventKind.TAGS_CHANGED)) == before


def test_the_list_shows_the_tags_and_filters_by_one_of_the_organizations(
    staff, organization, other_organization, assorted
):
    ticket_update(ticket=assorted["open"], tags_add=["vip", "loja"])
    ticket_update(ticket=assorted["closed"], tags_add=["vip"])
    ticket_update(ticket=make_ticket(other_organization), tags_add=["vip", "segredo-globex"])

    response = staff.get(TICKET_LIST_ALL)
    html = unescape(response.content.decode())

    assert '<span class="tag-do-ticket"' in response.content.decode()
    assert "vip (2)" in html and "loja (1)" in html
    assert "segredo-globex" not in html
    assert numbers_of(listed(staff, {"tag": "vip"})) == numbers_of([assorted["open"], assorted["closed"]])
    assert numbers_of(listed(staff, {"tag": "VIP"})) == numbers_of([assorted["open"], assorted["closed"]])
    assert numbers_of(listed(staff, {"tag": "segredo-globex"})) == []
