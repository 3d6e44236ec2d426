"""Authorization matrix: every (route, method) of the partner, panel and management APIs, read from the URL
resolver, with every kind of caller, on organization A's real objects.

- no credential, or A's credential of the other door (a JWT on a partner route, a key on a panel
  route): 401 on the door's field (`api_key` for partner, `token` for panel and management);
- a panel user without the door's right (no organization, no permission, not an agent): 403;
- B's credential of the right door on A's objects: exactly the 404 of a missing id, and nothing of A
  changes; the same request on B's own objects succeeds, so the 404 is tenancy, not a bad body;
- B on a collection: an answer without A's rows, and what B creates lands in B.
"""

import itertools

import pytest
from django.utils import timezone

from helpdesk.models import User
from integrations.models import ApiCredential
from integrations.scopes import Scope
from integrations.services import credential_create
from tests.assertions import assert_error, assert_success, bearer_client, panel_client
from tests.authorization import (
    AUTH_FIELD,
    BODIES,
    CREATED_MODELS,
    ECHOES,
    IDEMPOTENCY_KEY,
    MANAGEMENT,
    NOT_CREATING,
    NOT_FOUND,
    PANEL,
    PARTNER,
    PUBLIC,
    PUBLIC_ROUTES,
    REALM,
    SUCCESS,
    Operation,
    body_of,
    door_of,
    kind_of,
    operations,
    path_of,
    scope_of,
    send,
    unclassified_routes,
)
from tests.factories import PASSWORD, make_agent
from tests.routes import api_routes

OPERATIONS = operations()
OBJECT_OPERATIONS = [operation for operation in OPERATIONS if operation.params]
COLLECTION_OPERATIONS = [operation for operation in OPERATIONS if not operation.params]
MATRIX_ROUTES = sorted({operation.route for operation in OPERATIONS})
VERBS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def by_name(operations_):
    return pytest.mark.parametrize("operation", operations_, ids=[operation.name for operation in operations_])


def foreign_variants(operation: Operation) -> list[tuple[str, ...]]:
    """Owners of the path parameters, at least one of them A: A's ticket with A's reply, but also B's
    ticket with A's reply and A's ticket with B's reply."""
    return [owners for owners in itertools.product("AB", repeat=len(operation.params)) if "A" in owners]


FOREIGN_CASES = [
    pytest.param(
        operation,
        owners,
        id=f"{operation.name} [{','.join(f'{param}={owner}' for param, owner in zip(operation.params, owners))}]",
    )
    for operation in OBJECT_OPERATIONS
    for owners in foreign_variants(operation)
]


def tenants(world, owners) -> tuple:
    return tuple({"A": world.a, "B": world.b, None: None}[owner] for owner in owners)


def other_door(door: str) -> str:
    return PANEL if door == PARTNER else PARTNER


def assert_no_trace_of(response, traces: set[str]) -> None:
    content = response.content.decode()
    leaked = sorted(trace for trace in traces if trace in content)
    assert not leaked, f"another organization's data in the answer: {leaked}"


# --- The matrix covers every route -----------------------------------------------------------------


def test_every_api_route_has_a_known_door():
    unknown = unclassified_routes()

    assert not unknown, "routes the authorization matrix cannot place:\n" + "\n".join(
        f"{route}: {what_to_do}" for route, what_to_do in unknown.items()
    )


def test_public_routes_are_exactly_the_listed_ones():
    public = {route for route in api_routes() if door_of(route) == PUBLIC}

    assert public == set(PUBLIC_ROUTES)


def test_the_matrix_covers_every_door():
    doors = {operation.door for operation in OPERATIONS}

    assert doors == {PARTNER, PANEL, MANAGEMENT}
    assert len(OPERATIONS) == sum(len(methods) for route, methods in api_routes().items() if route not in PUBLIC_ROUTES)


def test_every_operation_knows_its_objects_body_and_success_answer():
    """What a new route needs before the matrix can run it; each missing piece names where to add it."""
    missing = []
    for operation in OPERATIONS:
        for param in operation.params:
            try:
                kind = kind_of(operation.route, param)
            except LookupError as error:
                missing.append(str(error))
                continue
            if kind not in NOT_FOUND:
                missing.append(f"{operation.route}: add the 404 of a {kind} to NOT_FOUND in tests/authorization.py")
        if operation.method in ("POST", "PATCH", "PUT") and operation.name not in BODIES:
            missing.append(f"add a valid body for {operation.name} to BODIES in tests/authorization.py")
        if operation.name not in SUCCESS:
            missing.append(f"add the success answer of {operation.name} to SUCCESS in tests/authorization.py")
        creates = operation.route not in NOT_CREATING
        if operation.method == "POST" and not operation.params and creates and operation.route not in CREATED_MODELS:
            missing.append(f"add where {operation.name} stores its rows to CREATED_MODELS in tests/authorization.py")

    assert not missing, "\n".join(missing)


# --- No credential, or the other door's credential: 401 ------------------------------------------------


@by_name(OPERATIONS)
def test_without_the_doors_credential_the_answer_is_401_on_its_field(world, anon_client, operation):
    """No credential at all, and A's own credential of the other door: a JWT on a partner route, a key
    on a panel or management route."""
    path = path_of(operation, (world.a,) * len(operation.params))
    body = body_of(operation, world)
    before = world.a.snapshot()

    for caller in (anon_client, world.a.client(other_door(operation.door))):
        response = send(caller, operation, path, body)

        assert_error(response, 401, "Não autenticado.", AUTH_FIELD[operation.door])
        assert response["WWW-Authenticate"] == REALM[operation.door]
    assert world.a.snapshot() == before


PANEL_OPERATIONS = [operation for operation in OPERATIONS if operation.door in (PANEL, MANAGEMENT)]


def lacking_users(organization, door: str) -> list[User]:
    """Panel users with a valid JWT but not the right to this door: a user without an organization
    (a superuser), and for management a plain agent, for the panel a user of the organization who is no agent."""
    n = User.objects.count()
    superuser = User.objects.create_superuser(email=f"raiz{n}@example.test", password=PASSWORD)
    if door == MANAGEMENT:
        return [superuser, make_agent(organization, name="Sem permissão").user]
    return [
        superuser,
        User.objects.create_user(email=f"gerente{n}@example.test", password=PASSWORD, organization=organization),
    ]


@by_name(PANEL_OPERATIONS)
def test_a_panel_user_without_the_doors_right_is_403_on_the_organizations_objects(world, operation):
    users = lacking_users(world.a.organization, operation.door)
    path = path_of(operation, (world.a,) * len(operation.params))
    before = world.a.snapshot()

    for user in users:
        response = send(panel_client(user.email), operation, path, body_of(operation, world))

        assert_error(response, 403, "Acesso negado.", "permissao")
    assert world.a.snapshot() == before


# --- B's credential on A's objects: the 404 of a missing id ---------------------------------------------


@pytest.mark.parametrize(("operation", "owners"), FOREIGN_CASES)
def test_another_organizations_object_answers_exactly_like_a_missing_one(world, operation, owners):
    client = world.b.client(operation.door)
    body = body_of(operation, world)
    traces = world.a.traces()
    before = world.a.snapshot()

    response = send(client, operation, path_of(operation, tenants(world, owners)), body)
    missing = send(
        client, operation, path_of(operation, tenants(world, [o if o == "B" else None for o in owners])), body
    )

    first_foreign = operation.params[owners.index("A")]
    assert_error(response, 404, *NOT_FOUND[kind_of(operation.route, first_foreign)])
    assert (missing.status_code, missing.json()) == (404, response.json())
    assert_no_trace_of(response, traces)
    assert world.a.snapshot() == before


@by_name(OBJECT_OPERATIONS)
def test_the_same_request_on_own_objects_succeeds(world, operation):
    """The control of the test above: B's body and credential are good, only the owner made it a 404."""
    status, message = SUCCESS[operation.name]
    traces = world.a.traces()
    path = path_of(operation, (world.b,) * len(operation.params))
    before = world.a.snapshot()

    response = send(world.b.client(operation.door), operation, path, body_of(operation, world))

    assert_success(response, status, message)
    assert_no_trace_of(response, traces)
    assert world.a.snapshot() == before


# --- B on collections: only B's rows, and what B creates is B's ------------------------------------------


def owners_of_related_rows(row) -> set:
    """The organizations of the rows a new row points at (its requester, its creator...)."""
    related = (getattr(row, f.name) for f in row._meta.concrete_fields if f.is_relation and f.name != "organization")
    return {obj.organization_id for obj in related if obj is not None and hasattr(obj, "organization_id")}


@by_name(COLLECTION_OPERATIONS)
def test_collections_answer_and_store_only_the_callers_rows(world, operation):
    client = world.b.client(operation.door)
    body = body_of(operation, world)
    headers = {}
    if operation.door == PARTNER and operation.method == "POST":
        # A sent this very request first: an Idempotency-Key shared across credentials would replay A's answer.
        headers = {"HTTP_IDEMPOTENCY_KEY": IDEMPOTENCY_KEY}
        assert send(world.a.client(PARTNER), operation, operation.route, body, **headers).status_code < 300
    status, message = SUCCESS[operation.name]
    traces = world.a.traces() - ECHOES.get(operation.name, lambda world: set())(world)
    before = world.a.snapshot()

    response = send(client, operation, operation.route, body, **headers)

    data = assert_success(response, status, message)
    assert_no_trace_of(response, traces)
    assert world.a.snapshot() == before
    if operation.method == "POST" and operation.route not in NOT_CREATING:
        created = CREATED_MODELS[operation.route].objects.get(pk=data["id"])
        assert created.organization == world.b.organization
        assert owners_of_related_rows(created) <= {world.b.organization.pk}


# --- Methods a route does not answer, HEAD and OPTIONS ------------------------------------------------


@pytest.mark.parametrize("route", MATRIX_ROUTES)
def test_every_other_method_is_refused_before_anything_is_looked_up(world, anon_client, route):
    """Unanswered verbs, OPTIONS among them (the OpenAPI document describes the API): 401 without the
    door's credential, else a 405 envelope with Allow; HEAD answers as GET without a body."""
    door = door_of(route)
    answered = api_routes()[route]
    probe = Operation("GET", route, door)
    a_path = path_of(probe, (world.a,) * len(probe.params))
    client = world.b.client(door)
    allowed = set(answered) | ({"HEAD"} if "GET" in answered else set())
    before = world.a.snapshot()

    for verb in sorted(set(VERBS) - set(answered)):
        operation = Operation(verb, route, door)
        for caller in (anon_client, world.a.client(other_door(door))):
            assert_error(send(caller, operation, a_path, None), 401, "Não autenticado.", AUTH_FIELD[door])
        response = send(client, operation, a_path, None)
        assert_error(response, 405, "Método não permitido.", "method")
        assert set(response["Allow"].split(", ")) == allowed
    if "GET" in answered:
        assert client.head(a_path).status_code == client.get(a_path).status_code
        assert client.head(a_path).content == b""
    options = client.options(a_path)
    assert_error(options, 405, "Método não permitido.", "method")
    assert set(options["Allow"].split(", ")) == allowed
    assert_error(anon_client.options(a_path), 401, "Não autenticado.", AUTH_FIELD[door])
    assert world.a.snapshot() == before


# --- Ids of A inside B's body ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "message"), [("status_id", "Status não encontrado."), ("atendente_id", "Atendente não encontrado.")]
)
def test_panel_update_naming_another_organizations_status_or_agent_is_404(world, field, message):
    foreign = {"status_id": world.a.ticket.status_id, "atendente_id": world.a.colleague.pk}[field]
    before = {"a": world.a.snapshot(), "b_ticket": world.b.snapshot()["tickets"]}

    response = world.b.client(PANEL).patch(f"/api/tickets/{world.b.ticket.pk}", {field: str(foreign)}, format="json")

    assert_error(response, 404, message, field)
    assert {"a": world.a.snapshot(), "b_ticket": world.b.snapshot()["tickets"]} == before


# --- Scoped keys: each partner operation needs its own scope -------------------------------------------

PARTNER_OPERATIONS = [operation for operation in OPERATIONS if operation.door == PARTNER]


def test_every_partner_operation_declares_its_scope():
    """A partner action without a scope is refused to every scoped key (fail closed); this names it."""
    missing = [operation.name for operation in PARTNER_OPERATIONS if scope_of(operation) not in Scope.values]

    assert not missing, f"declare the scope of these actions in their viewset's `scopes`: {missing}"


def scoped_client(organization, scopes: list[str]):
    credential, key = credential_create(organization=organization, name="Escopo", scopes=scopes)
    # Used a moment ago: the request's own "last used" write (at most one a minute) is not a change it made.
    ApiCredential.objects.filter(pk=credential.pk).update(last_used_at=timezone.now())
    return bearer_client(key)


@by_name(PARTNER_OPERATIONS)
def test_a_key_without_the_operations_scope_is_403_on_escopo(world, operation):
    needed = scope_of(operation)
    client = scoped_client(world.a.organization, [scope for scope in Scope.values if scope != needed])
    before = world.a.snapshot()

    response = send(
        client, operation, path_of(operation, (world.a,) * len(operation.params)), body_of(operation, world)
    )

    assert_error(response, 403, "Acesso negado.", "escopo")
    assert needed in response.json()["errors"]["message"]
    assert world.a.snapshot() == before


@by_name(PARTNER_OPERATIONS)
def test_a_key_with_only_the_operations_scope_succeeds(world, operation):
    """B's bodies carry A's identifiers (a create is then new in B): B's key, on B's objects."""
    client = scoped_client(world.b.organization, [scope_of(operation)])

    response = send(
        client, operation, path_of(operation, (world.b,) * len(operation.params)), body_of(operation, world)
    )

    assert_success(response, *SUCCESS[operation.name])
