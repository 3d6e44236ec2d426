"""Application-key authentication of the partner API: schemes, refusals, revocation, last use."""

import base64
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from integrations.keys import generate_key, key_digest
from integrations.models import ApiCredential
from integrations.services import credential_revoke
from tests.contract import NOT_AUTHENTICATED, TICKET_BODY
from tests.factories import credential_of, make_key, make_ticket
from tickets.models import Contact, Ticket

TICKETS = "/api/v1/tickets"


def client_with(authorization: str | None) -> APIClient:
    client = APIClient()
    if authorization is not None:
        client.credentials(HTTP_AUTHORIZATION=authorization)
    return client


def basic(user: str, password: str = "") -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def wrong_checksum(key: str) -> str:
    return key[:-1] + ("A" if key[-1] != "A" else "B")


def credential_queries(captured) -> list[str]:
    return [query["sql"] for query in captured.captured_queries if "integrations_apicredential" in query["sql"]]


def credential_updates(captured) -> list[str]:
    return [sql for sql in credential_queries(captured) if sql.lstrip().upper().startswith("UPDATE")]


def test_bearer_key_authenticates_as_its_organization(api_key, organization):
    ticket = make_ticket(organization)

    response = client_with(f"Bearer {api_key}").get(TICKETS)

    assert response.status_code == 200
    assert response.json()["success"] is True
    assert [item["id"] for item in response.json()["data"]["data"]] == [str(ticket.pk)]


def test_bearer_scheme_is_case_insensitive(api_key):
    response = client_with(f"bearer {api_key}").get(TICKETS)

    assert response.status_code == 200


def test_basic_with_key_as_user_and_empty_password_authenticates(api_key, organization):
    ticket = make_ticket(organization)

    response = client_with(basic(api_key)).get(TICKETS)

    assert response.status_code == 200
    assert [item["id"] for item in response.json()["data"]["data"]] == [str(ticket.pk)]


def test_basic_key_can_create_a_ticket(api_key):
    response = client_with(basic(api_key)).post(TICKETS, TICKET_BODY, format="json")

    assert response.status_code == 201
    assert Ticket.objects.count() == 1


def test_missing_authorization_header_is_401(db):
    response = client_with(None).get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED
    assert response["Content-Type"] == "application/json"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.parametrize(
    "authorization",
    [
        "",
        "Bearer",
        "Bearer ",
        "Bearer    ",
        "hdk_live_",
        "Basic",
        "Basic !!!not-base64!!!",
        "Basic " + base64.b64encode(b"\xff\xfe:").decode("ascii"),
    ],
    ids=[
        "empty",
        "bearer-no-key",
        "bearer-blank",
        "bearer-spaces",
        "no-scheme",
        "basic-empty",
        "basic-bad",
        "basic-utf8",
    ],
)
def test_malformed_authorization_header_is_401(db, authorization):
    response = client_with(authorization).get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_basic_without_the_colon_separator_is_401(api_key):
    authorization = "Basic " + base64.b64encode(api_key.encode()).decode("ascii")

    response = client_with(authorization).get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_basic_with_the_key_as_password_is_401(api_key):
    response = client_with(basic("", api_key)).get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_bearer_with_trailing_garbage_after_the_key_is_401(api_key):
    response = client_with(f"Bearer {api_key} extra").get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


@pytest.mark.parametrize("scheme", ["Token", "Digest", "ApiKey", "Bearer:"])
def test_unknown_scheme_is_401_even_with_a_valid_key(api_key, scheme):
    response = client_with(f"{scheme} {api_key}").get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_key_with_a_wrong_checksum_is_401(api_key):
    response = client_with(f"Bearer {wrong_checksum(api_key)}").get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_unknown_well_formed_key_is_401(db):
    response = client_with(f"Bearer {generate_key()}").get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_key_whose_credential_row_was_deleted_is_401(api_key):
    ApiCredential.objects.filter(key_digest=key_digest(api_key)).delete()

    response = client_with(f"Bearer {api_key}").get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_revoked_key_is_401(api_key):
    credential_revoke(credential=credential_of(api_key))

    response = client_with(f"Bearer {api_key}").get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_revoked_key_fails_on_the_very_next_request(api_key):
    client = client_with(f"Bearer {api_key}")
    assert client.get(TICKETS).status_code == 200

    credential_revoke(credential=credential_of(api_key))
    response = client.get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_revoked_key_fails_through_basic_too(api_key):
    credential_revoke(credential=credential_of(api_key))

    response = client_with(basic(api_key)).get(TICKETS)

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED


def test_revoking_one_key_leaves_the_other_keys_of_the_organization_working(api_key, organization):
    other_key = make_key(organization, name="Outra")
    credential_revoke(credential=credential_of(api_key))

    assert client_with(f"Bearer {other_key}").get(TICKETS).status_code == 200


def test_revoke_keeps_the_row_for_audit(api_key):
    credential = credential_revoke(credential=credential_of(api_key))

    stored = ApiCredential.objects.get(pk=credential.pk)
    assert stored.is_active is False
    assert stored.revoked_at is not None


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer", "Bearer hdk_live_short", "Token x", "Bearer " + "x" * 49],
    ids=["missing", "empty", "short", "scheme", "no-prefix"],
)
def test_unauthenticated_post_writes_nothing(db, authorization):
    response = client_with(authorization).post(TICKETS, TICKET_BODY, format="json")

    assert response.status_code == 401
    assert response.json() == NOT_AUTHENTICATED
    assert Ticket.objects.count() == 0
    assert Contact.objects.count() == 0


def test_revoked_key_post_writes_nothing(api_key):
    credential_revoke(credential=credential_of(api_key))

    response = client_with(f"Bearer {api_key}").post(TICKETS, TICKET_BODY, format="json")

    assert response.status_code == 401
    assert Ticket.objects.count() == 0
    assert Contact.objects.count() == 0


@pytest.mark.parametrize(
    "make_bad_key",
    [
        wrong_checksum,
        lambda key: "hdk_test_" + key[9:],
        lambda key: key[:-1],
        lambda key: key + "0",
        lambda key: key[:20] + "-" + key[21:],
        lambda key: "não-é-uma-chave",
    ],
    ids=["checksum", "prefix", "short", "long", "non-base62", "garbage"],
)
def test_malformed_key_is_refused_without_querying_credentials(api_key, make_bad_key):
    client = client_with(f"Bearer {make_bad_key(api_key)}")

    with CaptureQueriesContext(connection) as captured:
        response = client.get(TICKETS)

    assert response.status_code == 401
    assert credential_queries(captured) == []


def test_malformed_basic_key_is_refused_without_querying_credentials(api_key):
    client = client_with(basic(wrong_checksum(api_key)))

    with CaptureQueriesContext(connection) as captured:
        response = client.get(TICKETS)

    assert response.status_code == 401
    assert credential_queries(captured) == []


def test_well_formed_unknown_key_is_looked_up_once(db):
    # The counterpart of the tests above: a well-formed key does reach the database.
    client = client_with(f"Bearer {generate_key()}")

    with CaptureQueriesContext(connection) as captured:
        response = client.get(TICKETS)

    assert response.status_code == 401
    assert len(credential_queries(captured)) == 1
    assert credential_updates(captured) == []


def test_last_used_at_is_written_on_first_use(api_key):
    assert credential_of(api_key).last_used_at is None
    before = timezone.now()

    response = client_with(f"Bearer {api_key}").get(TICKETS)

    after = timezone.now()
    assert response.status_code == 200
    assert before <= credential_of(api_key).last_used_at <= after


def test_last_used_at_is_written_once_across_many_requests_within_a_minute(api_key):
    client = client_with(f"Bearer {api_key}")

    with CaptureQueriesContext(connection) as captured:
        for _ in range(10):
            assert client.get(TICKETS).status_code == 200

    assert len(credential_updates(captured)) == 1


def test_last_used_at_is_not_written_again_before_a_minute_has_passed(api_key):
    client = client_with(f"Bearer {api_key}")
    client.get(TICKETS)
    recent = timezone.now() - timedelta(seconds=50)
    ApiCredential.objects.filter(key_digest=key_digest(api_key)).update(last_used_at=recent)

    with CaptureQueriesContext(connection) as captured:
        for _ in range(5):
            assert client.get(TICKETS).status_code == 200

    assert credential_updates(captured) == []
    assert credential_of(api_key).last_used_at == recent


def test_last_used_at_is_written_once_more_after_a_minute_has_passed(api_key):
    client = client_with(f"Bearer {api_key}")
    client.get(TICKETS)
    stale = timezone.now() - timedelta(seconds=61)
    ApiCredential.objects.filter(key_digest=key_digest(api_key)).update(last_used_at=stale)

    with CaptureQueriesContext(connection) as captured:
        for _ in range(5):
            assert client.get(TICKETS).status_code == 200

    assert len(credential_updates(captured)) == 1
    assert credential_of(api_key).last_used_at > stale + timedelta(seconds=60)


def test_last_used_at_is_written_on_use_through_basic_too(api_key):
    response = client_with(basic(api_key)).get(TICKETS)

    assert response.status_code == 200
    assert credential_of(api_key).last_used_at is not None


def test_refused_key_does_not_touch_last_used_at(api_key):
    credential_revoke(credential=credential_of(api_key))

    client_with(f"Bearer {api_key}").get(TICKETS)

    assert credential_of(api_key).last_used_at is None
