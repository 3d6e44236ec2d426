"""The OpenAPI schema validates, describes every API route, and the docs page needs no CDN."""

import re

import yaml
from django.core.management import call_command

from tests.routes import api_routes

UNDOCUMENTED = {"/api/schema/", "/api/docs/"}


def _api_routes() -> set[str]:
    return set(api_routes()) - UNDOCUMENTED


def _schema(tmp_path) -> dict:
    target = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    return yaml.safe_load(target.read_text())


def test_schema_validates_without_warnings_and_names_every_api_route(tmp_path):
    schema = _schema(tmp_path)

    routes = _api_routes()
    assert "/api/v1/tickets/{id}/respostas/{resposta}" in routes
    assert "/api/webhooks/{id}" in routes
    assert set(schema["paths"]) == routes


def test_every_operation_documents_the_envelope(tmp_path):
    schema = _schema(tmp_path)
    components = schema["components"]["schemas"]

    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            success = [code for code in operation["responses"] if code.startswith("2")]
            assert success, (method, path)
            for code in success:
                content = operation["responses"][code]["content"]
                if path.endswith("/avatar/{token}"):
                    assert "image/*" in content
                    continue
                if path == "/api/v1/anexos/{token}":  # the file itself
                    assert "*/*" in content
                    continue
                ref = content["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
                assert set(components[ref]["properties"]) == {"success", "message", "data", "errors"}, (path, ref)


def test_partner_and_panel_security_schemes_are_declared(tmp_path):
    schema = _schema(tmp_path)

    assert set(schema["components"]["securitySchemes"]) == {"chaveDeAplicacao", "tokenDoPainel"}
    assert schema["paths"]["/api/v1/tickets"]["get"]["security"] == [{"chaveDeAplicacao": []}]
    assert schema["paths"]["/api/webhooks"]["post"]["security"] == [{"tokenDoPainel": []}]


def test_docs_page_loads_its_assets_from_this_server(client):
    response = client.get("/api/docs/")

    assert response.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', response.content.decode())
    assert assets
    assert all(asset.startswith("/static/") for asset in assets), assets
    assert client.get("/api/schema/", HTTP_ACCEPT="application/json").status_code == 200


def test_every_429_and_503_promises_the_retry_after_the_service_sends(tmp_path):
    schema = _schema(tmp_path)

    retry_answers = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for code in ("429", "503"):
                if code in operation["responses"]:
                    headers = operation["responses"][code].get("headers", {})
                    assert headers.get("Retry-After") == {"$ref": "#/components/headers/Retry-After"}, (method, path)
                    retry_answers += 1
    assert schema["components"]["headers"]["Retry-After"]["required"] is True
    assert retry_answers > len(schema["paths"])  # every operation's 503, and the rate-limited ones' 429
