"""Assertions and clients shared by the tests: the envelope shapes of the contract, and what a request changed."""

from datetime import UTC, datetime

from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from helpdesk.models import Agent, Organization, User
from integrations.models import (
    ApiCredential,
    IdempotencyRecord,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookEvent,
)
from macros.models import Macro
from sla.models import BusinessHours, SlaPolicies, SlaRetarget
from tests.contract import error_envelope
from tests.factories import PASSWORD
from tickets.models import (
    Attachment,
    Contact,
    CustomField,
    Reply,
    Ticket,
    TicketFieldValue,
    TicketRating,
    TicketSequence,
    TicketStatus,
)


def assert_error(response, status: int, message: str, field: str) -> None:
    """The error envelope: success false, the message, status, data null, errors {field, message}."""
    assert response.status_code == status, response.content
    body = response.json()
    assert body == error_envelope(status, message, field, body["errors"]["message"])
    assert isinstance(body["errors"]["message"], str)
    assert body["errors"]["message"]


def assert_ticket_not_found(response) -> None:
    """The 404 of a ticket id the caller may not see, whether it belongs to another organization or to none."""
    assert_error(response, 404, "Ticket não encontrado.", "id")


def assert_reply_not_found(response) -> None:
    """The 404 of a reply id that is not one of the ticket's (or not one the caller may see)."""
    assert_error(response, 404, "Resposta não encontrada.", "resposta")


def assert_success(response, status: int, message: str):
    """The success envelope: success true, the message, errors []; returns its data."""
    assert response.status_code == status, response.content
    body = response.json()
    assert body == {"success": True, "message": message, "data": body["data"], "errors": []}
    return body["data"]


def assert_validation_error(response, fields) -> None:
    """A 422 naming exactly `fields` (one name or a set), each with non-empty messages; no status, no data."""
    expected = {fields} if isinstance(fields, str) else set(fields)
    assert response.status_code == 422, response.content
    body = response.json()
    assert body == {"success": False, "message": "Erro de validação", "errors": body["errors"]}
    assert set(body["errors"]) == expected
    for messages in body["errors"].values():
        assert messages
        assert all(isinstance(message, str) and message for message in messages)


def assert_exact_validation_error(response, errors: dict) -> None:
    """A JSON 422 whose errors are exactly `errors`, messages included (assert_validation_error checks names only)."""
    assert response.status_code == 422, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"success": False, "message": "Erro de validação", "errors": errors}


def utc(value: str) -> datetime:
    """An API timestamp: ISO 8601, UTC, written with a trailing Z."""
    assert isinstance(value, str)
    assert value.endswith("Z"), value
    return datetime.fromisoformat(value)


def api_timestamp(value: datetime | None) -> str | None:
    """A datetime as the API renders it: ISO 8601 in UTC with a trailing Z (None stays None)."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def numbers(response) -> list[int]:
    """The ticket numbers of a paginated ticket list, in the order listed."""
    assert response.status_code == 200, response.content
    return [item["numero"] for item in response.json()["data"]["data"]]


def row_counts() -> dict[str, int]:
    """How many tickets, contacts and replies exist, to prove a refused request wrote nothing."""
    return {
        "tickets": Ticket.objects.count(),
        "contacts": Contact.objects.count(),
        "replies": Reply.objects.count(),
    }


def organization_snapshot(organization: Organization) -> dict[str, list[dict]]:
    """Every stored column of every row of the organization, to prove a request changed nothing of it."""
    querysets = {
        "organization": Organization.objects.filter(pk=organization.pk),
        "users": User.objects.filter(organization=organization),
        "agents": Agent.objects.filter(organization=organization),
        "statuses": TicketStatus.objects.filter(organization=organization),
        "sequence": TicketSequence.objects.filter(organization=organization),
        "contacts": Contact.objects.filter(organization=organization),
        "tickets": Ticket.objects.filter(organization=organization),
        "replies": Reply.objects.filter(ticket__organization=organization),
        "attachments": Attachment.objects.filter(organization=organization),
        "credentials": ApiCredential.objects.filter(organization=organization),
        "idempotency": IdempotencyRecord.objects.filter(credential__organization=organization),
        "webhooks": Webhook.objects.filter(organization=organization),
        "events": WebhookEvent.objects.filter(organization=organization),
        "deliveries": WebhookDelivery.objects.filter(webhook__organization=organization),
        "attempts": WebhookDeliveryAttempt.objects.filter(delivery__webhook__organization=organization),
        "custom_fields": CustomField.objects.filter(organization=organization),
        "custom_field_values": TicketFieldValue.objects.filter(ticket__organization=organization),
        "business_hours": BusinessHours.objects.filter(organization=organization),
        "sla_policies": SlaPolicies.objects.filter(organization=organization),
        "sla_retargets": SlaRetarget.objects.filter(organization=organization),
        "ratings": TicketRating.objects.filter(organization=organization),
        "macros": Macro.objects.filter(organization=organization),
    }
    return {name: list(queryset.order_by("pk").values()) for name, queryset in querysets.items()}


def reply_state(reply: Reply) -> tuple:
    """What a refused edit must leave alone: (body, edited, is_internal, updated_at)."""
    reply.refresh_from_db()
    return (reply.body, reply.edited, reply.is_internal, reply.updated_at)


def measured_get(client, path: str, params=None) -> tuple[list[str], object]:
    """GET twice and return the SQL of the second request, and its response (a 200)."""
    # Warm-up first, so nothing done once per process, per session or per minute (the write of
    # ultimo_uso_em) lands in the measurement.
    assert client.get(path, params).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, params)
    assert response.status_code == 200, response.content
    return [query["sql"] for query in captured.captured_queries], response


def queries_of(client, path: str, params=None) -> tuple[list[str], object]:
    """measured_get for the JSON API: the SQL and the envelope's data."""
    sql, response = measured_get(client, path, params)
    return sql, response.json()["data"]


def bearer_client(token: str) -> APIClient:
    """An HTTP client that sends `Authorization: Bearer <token>`: a partner key or a panel access token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def panel_client(email: str, password: str = PASSWORD) -> APIClient:
    """An HTTP client logged in to the panel through POST /api/auth/login."""
    client = APIClient()
    response = client.post("/api/auth/login", {"email": email, "senha": password}, format="json")
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['data']['access_token']}")
    return client


def run_admin_action(client, changelist_url: str, action: str, objects):
    """Tick `objects` on an admin changelist and run `action`, as staff do; redirects are followed."""
    return client.post(
        changelist_url,
        {"action": action, "_selected_action": [str(obj.pk) for obj in objects], "index": "0"},
        follow=True,
    )
