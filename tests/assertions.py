"""Assertions and clients shared by the API tests: the envelope shapes of the contract."""

from rest_framework.test import APIClient

from tests.factories import PASSWORD


def assert_error(response, status: int, message: str, field: str) -> None:
    """The error envelope: success false, the message, status, data null, errors {field, message}."""
    assert response.status_code == status, response.content
    body = response.json()
    assert body == {
        "success": False,
        "message": message,
        "status": status,
        "data": None,
        "errors": {"field": field, "message": body["errors"]["message"]},
    }
    assert isinstance(body["errors"]["message"], str)
    assert body["errors"]["message"]


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


def panel_client(email: str, password: str = PASSWORD) -> APIClient:
    """An HTTP client logged in to the panel through POST /api/auth/login."""
    client = APIClient()
    response = client.post("/api/auth/login", {"email": email, "senha": password}, format="json")
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['data']['access_token']}")
    return client
