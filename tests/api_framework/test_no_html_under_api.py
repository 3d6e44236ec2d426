"""Whatever reaches /api gets the JSON envelope: unknown routes with any method, a bad Host, OPTIONS."""

import pytest
from django.test import Client

from tests.assertions import assert_error


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_a_write_to_an_unknown_api_route_is_a_json_404_not_the_csrf_page(db, method):
    client = Client(enforce_csrf_checks=True)

    response = getattr(client, method)("/api/v1/nada", data=b"{}", content_type="application/json")

    assert_error(response, 404, "Rota não encontrada.", "path")
    assert response["Content-Type"] == "application/json"


def test_a_host_the_server_does_not_serve_is_a_json_400(db, settings):
    settings.ALLOWED_HOSTS = ["api.example.com"]

    response = Client().get("/api/v1/tickets", HTTP_HOST="evil.example")

    assert_error(response, 400, "Requisição inválida.", "Host")
    assert response["Content-Type"] == "application/json"


def test_a_bad_host_outside_the_api_keeps_djangos_page(db, settings):
    settings.ALLOWED_HOSTS = ["api.example.com"]

    response = Client().get("/admin/", HTTP_HOST="evil.example")

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("path", ["/api/v1/tickets", "/api/v1/atendentes"])
def test_options_on_a_partner_route_is_a_405_with_allow(partner, path):
    response = partner.options(path)

    assert_error(response, 405, "Método não permitido.", "method")
    assert "OPTIONS" not in response["Allow"]
    assert "GET" in response["Allow"]


def test_options_on_the_login_is_a_405_with_allow(anon_client, db):
    response = anon_client.options("/api/auth/login")

    assert_error(response, 405, "Método não permitido.", "method")
    assert response["Allow"] == "POST"
