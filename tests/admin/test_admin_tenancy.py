"""Admin tenancy: staff of organization A see and change only A's rows, through every admin door.

Another organization's object answers exactly as an id that does not exist.
For a missing object Django 5.2's admin does not answer 404: the change,
history and delete views redirect to the admin index with the warning
"O <verbose_name> com ID “<id>” não existe. Talvez tenha sido removido.",
and a view the user may not use at all (delete where there is no delete
permission, POST to a read-only model) is a 403 whatever the id.
"""

import uuid
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from helpdesk.models import Agent, User
from helpdesk.permissions import MANAGE_PUBLIC_API_CODENAME, support_group_ensure
from integrations import events
from integrations.models import ApiCredential, Webhook, WebhookDelivery
from integrations.services import credential_create, webhook_create
from tests.factories import PASSWORD, make_agent, make_ticket
from tickets.models import Contact, StatusCategory, Ticket, TicketStatus
from tickets.services import RequesterData

VISIBLE = "ACME-VISIVEL"
MARKER = "GLOBEX-CONFIDENCIAL"
ADMIN_INDEX = "/admin/"


@dataclass(frozen=True)
class Door:
    """One admin model as support staff see it."""

    app_label: str
    model_name: str
    verbose_name: str
    key: str  # the object in `seed_organization`'s dict
    own_count: int  # rows of organization A on its changelist
    organization_path: str
    staff_may_delete: bool
    change_data: dict  # a plausible change form for the model, aimed at the other organization's object

    def url(self, view: str, *args) -> str:
        return reverse(f"admin:{self.app_label}_{self.model_name}_{view}", args=args)

    def list_url(self) -> str:
        """The changelist with every row: the tickets' opens on the agent's queue, "todos" lists them all."""
        return self.url("changelist") + ("?fila=todos" if self.model_name == "ticket" else "")

    @property
    def model(self):
        return {
            "ticket": Ticket,
            "contact": Contact,
            "ticketstatus": TicketStatus,
            "agent": Agent,
            "apicredential": ApiCredential,
            "webhook": Webhook,
            "webhookdelivery": WebhookDelivery,
        }[self.model_name]


DOORS = [
    Door(
        "tickets",
        "ticket",
        "ticket",
        "ticket",
        1,
        "organization",
        True,
        {"priority": "baixa", "new_reply": f"Invasão {VISIBLE}", "internal": ""},
    ),
    Door(
        "tickets",
        "contact",
        "contato",
        "contact",
        1,
        "organization",
        False,
        {"name": "Invadido", "email": "invadido@example.test", "phone": "1"},
    ),
    Door(
        "tickets",
        "ticketstatus",
        "status de ticket",
        "status",
        6,
        "organization",
        True,
        {"name": "Invadido", "category": "fechado", "color": "#000000", "position": "9"},
    ),
    Door("helpdesk", "agent", "atendente", "agent", 2, "organization", False, {"name": "Invadido", "is_active": ""}),
    Door("integrations", "apicredential", "credencial de API", "credential", 1, "organization", False, {"name": "X"}),
    Door(
        "integrations",
        "webhook",
        "webhook",
        "webhook",
        1,
        "organization",
        True,
        {
            "name": "Invadido",
            "url": "http://127.0.0.1:9/invadido",
            "events": ["ticket.resolvido"],
            "is_active": "",
            "regenerate_secret": "on",
        },
    ),
    Door(
        "integrations",
        "webhookdelivery",
        "entrega de webhook",
        "delivery",
        1,
        "webhook__organization",
        False,
        {"status": "falhou"},
    ),
]
DOOR_IDS = [door.model_name for door in DOORS]

# Every test runs with both organizations seeded (insecure URLs first: the seed has an http webhook).
pytestmark = pytest.mark.usefixtures("insecure_webhook_urls", "own", "foreign")


def seed_organization(organization, label: str, capture_on_commit) -> dict:
    """One object of every admin model, each carrying `label` in its visible text."""
    slug = label.lower()
    ticket = make_ticket(
        organization,
        subject=f"Assunto {label}",
        description=f"Descrição {label}",
        requester=RequesterData(name=f"Contato {label}", email=f"contato@{slug}.test", external_id=f"cli-{slug}"),
        external_id=f"pedido-{slug}",
    )
    webhook = webhook_create(
        organization=organization,
        name=f"Webhook {label}",
        url=f"http://127.0.0.1:9/{slug}",
        events=["ticket.resposta_publica", "ticket.resolvido"],
    )
    with capture_on_commit(execute=False) as callbacks:
        event = events.webhook_test_send(webhook=webhook).event
    # The queueing callback is captured and never run: nothing reaches a broker.
    assert len(callbacks) == 1
    return {
        "ticket": ticket,
        "contact": ticket.requester,
        "status": TicketStatus.objects.create(
            organization=organization, name=f"Status {label}", category=StatusCategory.WAITING, color="#123456"
        ),
        "agent": make_agent(organization, name=f"Atendente {label}"),
        "credential": credential_create(organization=organization, name=f"Credencial {label}")[0],
        "webhook": webhook,
        "delivery": event.deliveries.get(),
    }


@pytest.fixture
def own(organization, django_capture_on_commit_callbacks):
    return seed_organization(organization, VISIBLE, django_capture_on_commit_callbacks)


@pytest.fixture
def foreign(other_organization, django_capture_on_commit_callbacks):
    return seed_organization(other_organization, MARKER, django_capture_on_commit_callbacks)


def rows_of(organization, door: Door):
    return door.model.objects.filter(**{door.organization_path: organization})


def state_of(obj) -> list[dict]:
    """Every column of the row, to prove nothing of it changed."""
    return list(type(obj).objects.filter(pk=obj.pk).values())


def answer(client, method: str, url: str, data=None) -> dict:
    """What the user ends up seeing: redirects followed, and the messages shown on the final page."""
    response = getattr(client, method)(url, data, follow=True)
    context = response.context
    return {
        "status": response.status_code,
        "redirects": response.redirect_chain,
        "messages": [str(message) for message in context["messages"]] if context and "messages" in context else [],
    }


def missing_object_answer(door: Door, object_id, *, deletion: bool = False) -> dict:
    """Django 5.2's answer for an id its get_object does not find."""
    if deletion and not door.staff_may_delete:
        return {"status": 403, "redirects": [], "messages": []}
    return {
        "status": 200,
        "redirects": [(ADMIN_INDEX, 302)],
        "messages": [f"O {door.verbose_name} com ID “{object_id}” não existe. Talvez tenha sido removido."],
    }


# --- changelist ------------------------------------------------------------------------------------


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_changelist_shows_only_own_organization_rows(staff, organization, other_organization, own, foreign, door):
    response = staff.get(door.list_url())

    assert response.status_code == 200
    changelist = response.context["cl"]
    expected = set(rows_of(organization, door).values_list("pk", flat=True))
    assert len(expected) == door.own_count
    assert changelist.result_count == door.own_count
    assert changelist.full_result_count == door.own_count
    assert {obj.pk for obj in changelist.result_list} == expected
    html = response.content.decode()
    assert str(own[door.key].pk) in html
    for obj in rows_of(other_organization, door):
        assert str(obj.pk) not in html
    assert MARKER not in html
    assert other_organization.name not in html


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_search_for_other_organization_text_finds_nothing(staff, own, foreign, door):
    term = foreign["webhook"].name if door.model_name == "webhookdelivery" else MARKER

    response = staff.get(door.url("changelist"), {"q": term})

    assert response.status_code == 200
    assert response.context["cl"].result_count == 0
    assert list(response.context["cl"].result_list) == []
    html = response.content.decode()
    for obj in (foreign[door.key], *rows_of(foreign["ticket"].organization, door)):
        assert str(obj.pk) not in html
    assert 'id="result_list"' not in html


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_search_for_own_text_finds_own_row(staff, own, foreign, door):
    term = own["webhook"].name if door.model_name == "webhookdelivery" else VISIBLE

    response = staff.get(door.url("changelist"), {"q": term})

    assert response.status_code == 200
    assert [obj.pk for obj in response.context["cl"].result_list] == [own[door.key].pk]


# --- change, history and delete of another organization's object --------------------------------


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_change_page_of_other_organization_object_answers_as_missing(staff, own, foreign, door):
    target = foreign[door.key]
    before = state_of(target)

    assert answer(staff, "get", door.url("change", target.pk)) == missing_object_answer(door, target.pk)
    assert state_of(target) == before


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_change_page_of_unknown_id_answers_the_same(staff, door):
    unknown = uuid.uuid4()

    assert answer(staff, "get", door.url("change", unknown)) == missing_object_answer(door, unknown)


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_own_object_pages_open(staff, own, door):
    target = own[door.key]

    assert staff.get(door.url("change", target.pk)).status_code == 200
    assert staff.get(door.url("history", target.pk)).status_code == 200


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_history_page_of_other_organization_object_answers_as_missing(staff, foreign, door):
    target = foreign[door.key]
    before = state_of(target)

    assert answer(staff, "get", door.url("history", target.pk)) == missing_object_answer(door, target.pk)
    assert state_of(target) == before


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_delete_of_other_organization_object_answers_as_missing(staff, foreign, door):
    target = foreign[door.key]
    before = state_of(target)
    unknown = uuid.uuid4()

    page = answer(staff, "get", door.url("delete", target.pk))
    confirmed = answer(staff, "post", door.url("delete", target.pk), {"post": "yes"})

    assert page == missing_object_answer(door, target.pk, deletion=True)
    assert confirmed == missing_object_answer(door, target.pk, deletion=True)
    assert answer(staff, "get", door.url("delete", unknown)) == missing_object_answer(door, unknown, deletion=True)
    assert state_of(target) == before


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_post_to_other_organization_change_url_changes_nothing(staff, other_organization, foreign, door):
    target = foreign[door.key]
    data = dict(door.change_data)
    if door.model_name == "ticket":
        data["status"] = str(TicketStatus.objects.get(organization=other_organization, name="Resolvido").pk)
    before = {obj.pk: state_of(obj) for obj in rows_of(other_organization, door)}
    replies_before = target.replies.count() if door.model_name == "ticket" else None

    response = answer(staff, "post", door.url("change", target.pk), data)

    if door.model_name == "webhookdelivery":
        # Deliveries are read-only: a POST is refused for every id, this organization's too.
        assert response == {"status": 403, "redirects": [], "messages": []}
    else:
        assert response == missing_object_answer(door, target.pk)
    assert {obj.pk: state_of(obj) for obj in rows_of(other_organization, door)} == before
    if replies_before is not None:
        assert target.replies.count() == replies_before


# --- foreign-key choices and autocomplete ---------------------------------------------------------


def autocomplete_ids(client, field_name: str, term: str = "") -> list[str]:
    response = client.get(
        "/admin/autocomplete/",
        {"app_label": "tickets", "model_name": "ticket", "field_name": field_name, "term": term},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["pagination"] == {"more": False}
    return sorted(result["id"] for result in body["results"])


def test_status_autocomplete_offers_only_own_statuses(staff, organization, other_organization, own, foreign):
    own_ids = sorted(
        str(pk) for pk in TicketStatus.objects.filter(organization=organization).values_list("pk", flat=True)
    )

    assert autocomplete_ids(staff, "status") == own_ids
    assert autocomplete_ids(staff, "status", "Resolvido") == [
        str(TicketStatus.objects.get(organization=organization, name="Resolvido").pk)
    ]
    assert autocomplete_ids(staff, "status", MARKER) == []


def test_assignee_autocomplete_offers_only_own_agents(staff, organization, own, foreign):
    own_ids = sorted(str(pk) for pk in Agent.objects.filter(organization=organization).values_list("pk", flat=True))

    assert len(own_ids) == 2
    assert autocomplete_ids(staff, "assignee") == own_ids
    assert autocomplete_ids(staff, "assignee", "Atendente") == [str(own["agent"].pk)]
    assert autocomplete_ids(staff, "assignee", MARKER) == []
    assert autocomplete_ids(staff, "assignee", foreign["agent"].user.email) == []


def test_ticket_change_page_offers_only_own_statuses_and_agents(staff, organization, other_organization, own, foreign):
    response = staff.get(DOORS[0].url("change", own["ticket"].pk))

    assert response.status_code == 200
    form = response.context["adminform"].form
    status_choices = {str(value) for value, _label in form.fields["status"].choices if value != ""}
    assignee_choices = {str(value) for value, _label in form.fields["assignee"].choices if value != ""}
    assert status_choices == {
        str(pk) for pk in TicketStatus.objects.filter(organization=organization).values_list("pk", flat=True)
    }
    assert assignee_choices == {
        str(pk) for pk in Agent.objects.filter(organization=organization).values_list("pk", flat=True)
    }
    html = response.content.decode()
    for status in TicketStatus.objects.filter(organization=other_organization):
        assert str(status.pk) not in html
    for agent in Agent.objects.filter(organization=other_organization):
        assert str(agent.pk) not in html
    assert MARKER not in html


def test_ticket_cannot_be_given_other_organization_status_or_agent(staff, other_organization, own, foreign):
    ticket = own["ticket"]
    before = state_of(ticket)
    foreign_status = TicketStatus.objects.get(organization=other_organization, name="Resolvido")

    response = staff.post(
        DOORS[0].url("change", ticket.pk),
        {
            "status": str(foreign_status.pk),
            "assignee": str(foreign["agent"].pk),
            "priority": "alta",
            "new_reply": "",
            "replies-TOTAL_FORMS": "0",
            "replies-INITIAL_FORMS": "0",
            "replies-MIN_NUM_FORMS": "0",
            "replies-MAX_NUM_FORMS": "0",
        },
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    invalid = "Faça uma escolha válida. Sua escolha não é uma das disponíveis."
    assert errors == {"status": [invalid], "assignee": [invalid]}
    assert state_of(ticket) == before


# --- superuser and staff without an organization ---------------------------------------------------


@pytest.fixture
def superuser_client(client):
    client.force_login(User.objects.create_superuser(email="root@helpdesk.test", password=PASSWORD))
    return client


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_superuser_sees_every_organization_with_an_organization_filter(
    superuser_client, organization, other_organization, own, foreign, door
):
    response = superuser_client.get(door.url("changelist"))

    assert response.status_code == 200
    changelist = response.context["cl"]
    expected = set(door.model.objects.values_list("pk", flat=True))
    assert changelist.result_count == len(expected) == 2 * door.own_count
    assert {obj.pk for obj in changelist.result_list} == expected
    organization_filters = [
        spec for spec in changelist.filter_specs if getattr(spec, "field_path", None) == door.organization_path
    ]
    assert len(organization_filters) == 1
    html = response.content.decode()
    assert organization.name in html and other_organization.name in html

    filtered = superuser_client.get(
        door.url("changelist"), {f"{door.organization_path}__id__exact": str(other_organization.pk)}
    )

    assert {obj.pk for obj in filtered.context["cl"].result_list} == set(
        rows_of(other_organization, door).values_list("pk", flat=True)
    )


def test_superuser_number_search_keeps_the_organization_filter(superuser_client, organization, own, foreign):
    # Each organization numbers its tickets from 1: both seeded tickets are #1.
    assert own["ticket"].number == foreign["ticket"].number == 1

    response = superuser_client.get(
        DOORS[0].url("changelist"), {"organization__id__exact": str(organization.pk), "q": "1"}
    )

    assert [ticket.pk for ticket in response.context["cl"].result_list] == [own["ticket"].pk]


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_superuser_opens_any_organization_object(superuser_client, foreign, door):
    assert superuser_client.get(door.url("change", foreign[door.key].pk)).status_code == 200


@pytest.fixture
def orphan_staff_client(client):
    """Staff, with the support staff's permissions, but no organization and not a superuser."""
    user = User.objects.create_user(email="semorg@helpdesk.test", password=PASSWORD, is_staff=True)
    user.groups.add(support_group_ensure())
    user.user_permissions.add(Permission.objects.get(codename=MANAGE_PUBLIC_API_CODENAME))
    client.force_login(user)
    client.raise_request_exception = False  # a crash must show as the status the user gets
    return client


def test_staff_without_organization_is_sent_to_the_login_page(orphan_staff_client):
    response = orphan_staff_client.get(ADMIN_INDEX)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
    assert MARKER not in response.content.decode()


@pytest.mark.parametrize("door", DOORS, ids=DOOR_IDS)
def test_staff_without_organization_is_refused_every_page(orphan_staff_client, own, foreign, door):
    client = orphan_staff_client
    for obj in (own[door.key], foreign[door.key]):
        before = state_of(obj)
        observed = {
            "changelist": client.get(door.url("changelist")).status_code,
            "change": client.get(door.url("change", obj.pk)).status_code,
            "change POST": client.post(door.url("change", obj.pk), door.change_data).status_code,
            "history": client.get(door.url("history", obj.pk)).status_code,
            "delete": client.get(door.url("delete", obj.pk)).status_code,
            "delete POST": client.post(door.url("delete", obj.pk), {"post": "yes"}).status_code,
        }
        # Not let into the admin at all: every page sends them to the login page.
        assert observed == dict.fromkeys(observed, 302)
        assert state_of(obj) == before


def test_staff_without_organization_gets_no_autocomplete(orphan_staff_client):
    for field_name in ("status", "assignee"):
        response = orphan_staff_client.get(
            "/admin/autocomplete/", {"app_label": "tickets", "model_name": "ticket", "field_name": field_name}
        )
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")
