"""A 401 tells the client how to authenticate, in the realm of the door it knocked on."""

from tests.assertions import assert_error


def test_partner_401_names_the_api_realm(anon_client, db):
    response = anon_client.get("/api/v1/tickets")

    assert_error(response, 401, "Não autenticado.", "api_key")
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_panel_401_names_the_panel_realm(anon_client, db):
    for path in ("/api/tickets", "/api/webhooks", "/api/api-keys"):
        response = anon_client.get(path, HTTP_AUTHORIZATION="Bearer not-a-jwt")

        assert_error(response, 401, "Não autenticado.", "token")
        assert response["WWW-Authenticate"] == 'Bearer realm="painel"'


def test_panel_401_without_a_token_names_the_panel_realm(anon_client, db):
    response = anon_client.get("/api/tickets")

    assert_error(response, 401, "Não autenticado.", "token")
    assert response["WWW-Authenticate"] == 'Bearer realm="painel"'


def test_wrong_login_names_the_panel_realm(anon_client, db):
    response = anon_client.post("/api/auth/login", {"email": "x@example.com", "senha": "errada"}, format="json")

    assert_error(response, 401, "Credenciais inválidas.", "credenciais")
    assert response["WWW-Authenticate"] == 'Bearer realm="painel"'
