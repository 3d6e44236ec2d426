"""Real answers of the service validated against the OpenAPI schema it publishes (GET /api/schema/),
with schemathesis' own response validation (status code, headers, content type and body), the one
the contract fuzzing (tests/fuzz) uses: a null where the schema says `string` fails here.

The answers are the ones real data gives: a ticket whose requester has no e-mail, phone or
external_id, an unresolved ticket, an agent without a photo, an unused key.
"""

import copy
import re
import uuid

import pytest
import requests
import schemathesis
from django.core.validators import EmailValidator, ValidationError
from django.test import Client
from hypothesis import given, settings
from hypothesis import strategies as st
from schemathesis.core.failures import FailureGroup

from integrations.webhook_urls import UnsafeWebhookUrl, validate_webhook_url
from tests.contract import ALL_EVENTS, TICKET_BODY
from tests.factories import make_agent, make_webhook

pytestmark = pytest.mark.usefixtures("example_dns")


@pytest.fixture(scope="module")
def published_schema() -> dict:
    response = Client().get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def raw_schema(published_schema) -> dict:
    return copy.deepcopy(published_schema)


@pytest.fixture
def documented(raw_schema):
    return schemathesis.openapi.from_dict(raw_schema)


def as_schemathesis(response) -> schemathesis.Response:
    """A Django test client response as schemathesis sees one that came over HTTP."""
    request = requests.Request(response.request["REQUEST_METHOD"], "http://testserver" + response.request["PATH_INFO"])
    return schemathesis.Response(
        status_code=response.status_code,
        headers={name: [value] for name, value in response.headers.items()},
        content=response.content,
        request=request.prepare(),
        elapsed=0.0,
        verify=True,
    )


def assert_conforms(documented, method: str, path: str, response) -> dict:
    """The answer is one the operation documents: status code, headers, content type and body."""
    documented[path][method].validate_response(as_schemathesis(response))
    return response.json()


def violations(documented, method: str, path: str, response) -> list[str]:
    """schemathesis' messages for each way the answer departs from the operation's schema."""
    try:
        documented[path][method].validate_response(as_schemathesis(response))
    except FailureGroup as group:
        return [failure.message for failure in group.exceptions]
    return []


# --- nullable fields, as real data has them -----------------------------------------------------


def test_a_ticket_with_only_the_required_fields_answers_nulls_the_schema_allows(partner, documented):
    created = partner.post("/api/v1/tickets", TICKET_BODY, format="json")

    ticket = assert_conforms(documented, "POST", "/api/v1/tickets", created)["data"]
    assert ticket["solicitante"] == {"nome": "Ana", "email": None, "telefone": None, "external_id": None}
    assert ticket["external_id"] is None
    assert ticket["resolvido_em"] is None

    read = partner.get(f"/api/v1/tickets/{ticket['id']}")
    assert assert_conforms(documented, "GET", "/api/v1/tickets/{id}", read)["data"]["solicitante"]["email"] is None
    listed = partner.get("/api/v1/tickets")
    assert assert_conforms(documented, "GET", "/api/v1/tickets", listed)["data"]["data"][0]["external_id"] is None


def test_the_same_answer_fails_a_schema_that_says_string_where_the_service_answers_null(
    partner, raw_schema, documented
):
    created = partner.post("/api/v1/tickets", TICKET_BODY, format="json")
    assert violations(documented, "POST", "/api/v1/tickets", created) == []

    requester = raw_schema["components"]["schemas"]["RequesterOut"]["properties"]
    for name in ("email", "telefone", "external_id"):
        assert requester[name].pop("nullable") is True
    strict = schemathesis.openapi.from_dict(raw_schema)

    found = violations(strict, "POST", "/api/v1/tickets", created)
    assert len(found) == 3
    for name, message in zip(("email", "telefone", "external_id"), found, strict=True):
        assert 'null is not of type "string"' in message
        assert f"/components/schemas/RequesterOut/properties/{name}:" in message


def test_a_panel_ticket_without_assignee_conforms(partner, agent_client, documented):
    ticket = partner.post("/api/v1/tickets", TICKET_BODY, format="json").json()["data"]

    read = agent_client.get(f"/api/tickets/{ticket['id']}")

    data = assert_conforms(documented, "GET", "/api/tickets/{id}", read)["data"]
    assert data["atendente"] is None
    assert data["solicitante"]["telefone"] is None


def test_an_agent_without_a_photo_has_a_null_avatar_url_and_conforms(partner, organization, documented):
    make_agent(organization, name="Sem Foto")

    listed = partner.get("/api/v1/atendentes")

    agents = assert_conforms(documented, "GET", "/api/v1/atendentes", listed)["data"]["data"]
    assert agents
    assert {agent["avatar_url"] for agent in agents} == {None}


def test_an_unused_key_has_null_timestamps_and_conforms(manager, documented):
    created = manager.post("/api/api-keys", {"nome": "Nova"}, format="json")
    key = assert_conforms(documented, "POST", "/api/api-keys", created)["data"]
    assert key["ultimo_uso_em"] is None and key["revogado_em"] is None

    listed = manager.get("/api/api-keys")
    assert_conforms(documented, "GET", "/api/api-keys", listed)


# --- webhooks: segredo only when regenerated, the rules of eventos -------------------------------


def test_webhook_patch_answers_segredo_only_when_it_regenerates_it(manager, organization, documented):
    webhook = make_webhook(organization, url="https://hooks.example.com/a")
    path = f"/api/webhooks/{webhook.id}"

    renamed = manager.patch(path, {"nome": "Outro"}, format="json")
    regenerated = manager.patch(path, {"regenerar_segredo": True}, format="json")

    assert "segredo" not in assert_conforms(documented, "PATCH", "/api/webhooks/{id}", renamed)["data"]
    secret = assert_conforms(documented, "PATCH", "/api/webhooks/{id}", regenerated)["data"]["segredo"]
    assert secret.startswith("whsec_")


def test_the_schema_states_the_webhook_event_rules_the_service_applies(manager, raw_schema, documented):
    body = raw_schema["components"]["schemas"]["WebhookCreateInRequest"]
    events = body["properties"]["eventos"]
    enum = raw_schema["components"]["schemas"][events["items"]["allOf"][0]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert sorted(enum) == sorted(ALL_EVENTS)
    assert events["minItems"] == 1

    valid = {"nome": "ERP", "url": "https://hooks.example.com/x", "eventos": ["ticket.resolvido"]}
    for eventos in ([], ["ticket.mesclado_por_engano"]):
        refused = manager.post("/api/webhooks", {**valid, "eventos": eventos}, format="json")
        assert refused.status_code == 422
        assert list(assert_conforms(documented, "POST", "/api/webhooks", refused)["errors"]) == ["eventos"]
    created = manager.post("/api/webhooks", valid, format="json")
    assert assert_conforms(documented, "POST", "/api/webhooks", created)["data"]["eventos"] == ["ticket.resolvido"]


def test_the_eleventh_webhook_is_a_documented_422(manager, organization, raw_schema, documented):
    for n in range(10):
        make_webhook(organization, name=f"W{n}", url="https://hooks.example.com/x")
    body = {"nome": "Mais um", "url": "https://hooks.example.com/y", "eventos": ["ticket.resolvido"]}

    refused = manager.post("/api/webhooks", body, format="json")

    assert refused.status_code == 422
    assert assert_conforms(documented, "POST", "/api/webhooks", refused)["errors"] == {
        "webhook": ["Limite de 10 webhooks por organização atingido."]
    }
    assert "no máximo 10 webhooks" in raw_schema["paths"]["/api/webhooks"]["post"]["description"]


# --- bodies: required, NUL refused, text trimmed ------------------------------------------------


def test_every_patch_body_is_required_and_an_empty_one_is_a_documented_400(
    partner, manager, organization, raw_schema, documented
):
    ticket = partner.post("/api/v1/tickets", TICKET_BODY, format="json").json()["data"]
    reply = partner.post(f"/api/v1/tickets/{ticket['id']}/respostas", {"mensagem": "Oi"}, format="json").json()
    webhook = make_webhook(organization, url="https://hooks.example.com/a")
    patches = [path for path, operations in raw_schema["paths"].items() if "patch" in operations]
    assert all(raw_schema["paths"][path]["patch"]["requestBody"]["required"] is True for path in patches)

    empty = partner.generic(
        "PATCH", f"/api/v1/tickets/{ticket['id']}/respostas/{reply['data']['id']}", b"", content_type="application/json"
    )
    assert empty.status_code == 400
    assert_conforms(documented, "PATCH", "/api/v1/tickets/{id}/respostas/{resposta}", empty)
    empty = manager.generic("PATCH", f"/api/webhooks/{webhook.id}", b"", content_type="application/json")
    assert empty.status_code == 400
    assert_conforms(documented, "PATCH", "/api/webhooks/{id}", empty)


def test_text_with_nul_is_refused_by_the_schema_and_by_the_service(partner, raw_schema, documented):
    pattern = raw_schema["components"]["schemas"]["ReplyInRequest"]["properties"]["mensagem"]["pattern"]
    ticket = partner.post("/api/v1/tickets", TICKET_BODY, format="json").json()["data"]
    path = f"/api/v1/tickets/{ticket['id']}/respostas"

    refused = partner.post(path, {"mensagem": "a\u0000b"}, format="json")
    assert re.search(pattern, "a\u0000b") is None
    assert refused.status_code == 422
    assert list(assert_conforms(documented, "POST", "/api/v1/tickets/{id}/respostas", refused)["errors"]) == [
        "mensagem"
    ]

    blank = partner.post(path, {"mensagem": " \t\n"}, format="json")
    assert re.search(pattern, " \t\n") is None
    assert blank.status_code == 422

    trimmed = partner.post(path, {"mensagem": "  Obrigado  "}, format="json")
    assert re.search(pattern, "  Obrigado  ")
    assert assert_conforms(documented, "POST", "/api/v1/tickets/{id}/respostas", trimmed)["data"]["mensagem"] == (
        "Obrigado"
    )


def test_an_unknown_ticket_and_a_missing_key_answer_documented_errors(partner, anon_client, documented):
    missing = partner.get(f"/api/v1/tickets/{uuid.uuid4()}")
    assert missing.status_code == 404
    assert_conforms(documented, "GET", "/api/v1/tickets/{id}", missing)

    unauthenticated = anon_client.get("/api/v1/tickets")
    assert unauthenticated.status_code == 401
    assert_conforms(documented, "GET", "/api/v1/tickets", unauthenticated)


# --- the e-mail pattern is Django's EmailValidator ---------------------------------------------


@pytest.fixture
def email_pattern(raw_schema) -> re.Pattern:
    requester = raw_schema["components"]["schemas"]["RequesterInRequest"]["properties"]["email"]
    return re.compile(next(branch["pattern"] for branch in requester["oneOf"] if "pattern" in branch))


def _django_accepts(value: str) -> bool:
    try:
        EmailValidator()(value)
    except ValidationError:
        return False
    return True


EMAILS = [
    "ana@example.com",
    "Ana.Souza+vip@Example.COM.BR",
    "a@b.cc",
    "a@ñandu.com",
    "a@x.xn--p1ai",
    "a@localhost",
    "a@[192.0.2.1]",
    '"a@b"@x.cc',
    "ſ@x.cc",
    "0@0.a",
    "a@b.c",
    "a@b.c1",
    "a@-b.cc",
    "a@b-.cc",
    "a..b@x.cc",
    ".a@x.cc",
    "a@x.cc.",
    "a@LOCALHOST",
    "a@[01.2.3.4]",
    '"a b"@x.cc',
    "a b@x.cc",
    "ab",
    "",
]


@pytest.mark.parametrize("value", EMAILS)
def test_the_email_pattern_agrees_with_the_service_validator(email_pattern, value):
    assert bool(email_pattern.match(value)) == _django_accepts(value)


def test_every_address_the_email_branch_allows_is_accepted_by_the_service(email_pattern, raw_schema):
    """Pattern and maxLength together: the regex alone also generates addresses longer than any
    e-mail (Django refuses over 320 characters; the field, like the schema, over 254)."""
    requester = raw_schema["components"]["schemas"]["RequesterInRequest"]["properties"]["email"]
    branch = next(branch for branch in requester["oneOf"] if "pattern" in branch)
    assert branch["maxLength"] == 254

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.from_regex(email_pattern, fullmatch=True).filter(lambda value: len(value) <= branch["maxLength"]))
    def accepted(value):
        assert _django_accepts(value), value

    accepted()


# --- the webhook URL pattern is the service's rule, but for name resolution ---------------------

# Every host here resolves (example_dns) to public addresses: what is left is the URL's form.
WEBHOOK_URLS = [
    "https://hooks.example.com/helpdesk",
    "HTTPS://hooks.example.com",
    "https://hooks.example.com:8443/a?b=c#d",
    "https://hooks.example.com:/a",
    "https://hooks.example.com:00443/a",
    "https://93.184.216.34/a",
    "http://hooks.example.com/a",
    "ftp://hooks.example.com/a",
    "https://user:senha@hooks.example.com/a",
    "https://user@hooks.example.com/a",
    "https://hooks.example.com:65536/a",
    "https://hooks.example.com:+1/a",
    "https:///a",
    "hooks.example.com/a",
]


def _service_accepts_url(value: str) -> bool:
    try:
        validate_webhook_url(value)
    except UnsafeWebhookUrl:
        return False
    return True


@pytest.mark.parametrize("value", WEBHOOK_URLS)
def test_the_webhook_url_pattern_agrees_with_the_service_rule(raw_schema, value):
    url = raw_schema["components"]["schemas"]["WebhookCreateInRequest"]["properties"]["url"]

    assert bool(re.search(url["pattern"], value)) == _service_accepts_url(value)


# --- attachments ----------------------------------------------------------------------------------


def test_attachment_answers_conform_to_the_schema(partner, agent_client, organization, documented, settings):
    from tests.attachments.samples import PNG, REFUSED, upload_file
    from tests.factories import make_ticket

    ticket = make_ticket(organization)
    upload_path = "/api/v1/tickets/{id}/anexos"
    url = f"/api/v1/tickets/{ticket.pk}/anexos"

    created = partner.post(url, {"arquivo": upload_file(PNG, "tela.png")}, format="multipart")
    refused = partner.post(url, {"arquivo": upload_file(REFUSED["html"], "a.png")}, format="multipart")
    missing = partner.post(url, {}, format="multipart")
    as_json = partner.post(url, {"arquivo": "x"}, format="json")
    settings.ANEXO_MAX_BYTES = 10
    too_big = partner.post(url, {"arquivo": upload_file(PNG, "tela.png")}, format="multipart")
    listed = partner.get(url)
    panel = agent_client.get(f"/api/tickets/{ticket.pk}/anexos")
    note = agent_client.post(
        f"/api/tickets/{ticket.pk}/respostas",
        {"mensagem": "Nota", "interna": "true", "arquivo": [upload_file(PNG, "n.png")]},
        format="multipart",
    )

    assert [r.status_code for r in (created, refused, missing, as_json, too_big)] == [201, 415, 422, 422, 413]
    for response in (created, refused, missing, as_json, too_big):
        assert_conforms(documented, "POST", upload_path, response)
    assert assert_conforms(documented, "GET", upload_path, listed)["data"]["total"] == 1
    assert assert_conforms(documented, "GET", "/api/tickets/{id}/anexos", panel)["data"]["total"] == 1
    settings.ANEXO_MAX_BYTES = 10 * 1024 * 1024
    assert note.status_code == 413  # the limit above still holds for the note
    note = agent_client.post(
        f"/api/tickets/{ticket.pk}/respostas",
        {"mensagem": "Nota", "interna": "true", "arquivo": [upload_file(PNG, "n.png")]},
        format="multipart",
    )
    assert assert_conforms(documented, "POST", "/api/tickets/{id}/respostas", note)["data"]["anexos"][0]["interna"]
    link = created.json()["data"]["url"].removeprefix("http://testserver")
    download = Client().get(link)
    if download.status_code == 200:  # the embedded storage; object storage answers 302
        documented["/api/v1/anexos/{token}"]["GET"].validate_response(as_schemathesis_stream(download))
    forbidden = Client().get(link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB"))
    assert_conforms(documented, "GET", "/api/v1/anexos/{token}", forbidden)


def as_schemathesis_stream(response) -> schemathesis.Response:
    request = requests.Request("GET", "http://testserver" + response.request["PATH_INFO"])
    return schemathesis.Response(
        status_code=response.status_code,
        headers={name: [value] for name, value in response.headers.items()},
        content=b"".join(response.streaming_content),
        request=request.prepare(),
        elapsed=0.0,
        verify=True,
    )
