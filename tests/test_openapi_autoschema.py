"""What EnvelopeAutoSchema (api_framework/schema.py) changes in drf-spectacular's output, each effect once.

Its hooks override private methods of drf-spectacular's AutoSchema: a release that renames one would
drop its effect without an error (docs/decisions.md, "Private APIs we lean on"). The effects other tests
already check are named there; these are the rest.
"""

import pytest
from drf_spectacular.generators import SchemaGenerator

from api_framework.schema import NO_NUL


@pytest.fixture(scope="module")
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_path_ids_are_plain_strings(schema):
    """A malformed id is the resource's 404, never a route 404: the schema does not say uuid."""
    path_parameters = [
        (path, parameter["name"], parameter["schema"])
        for path, _method, operation in operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "path"
    ]

    assert ("/api/v1/tickets/{id}", "id", {"type": "string"}) in path_parameters
    assert [entry for entry in path_parameters if entry[2] != {"type": "string"}] == []


def test_optional_query_parameters_allow_an_empty_value(schema):
    """`?prioridade=` counts as absent."""
    optional = [
        (path, parameter["name"], parameter.get("allowEmptyValue"))
        for path, _method, operation in operations(schema)
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query" and not parameter.get("required")
    ]

    assert ("/api/v1/tickets", "prioridade", True) in optional
    assert [entry for entry in optional if entry[2] is not True] == []


def test_a_422_is_documented_where_a_query_string_or_a_body_is_read(schema):
    ticket_list = schema["paths"]["/api/v1/tickets"]["get"]["responses"]
    ticket = schema["paths"]["/api/v1/tickets/{id}"]["get"]["responses"]  # `incluir` (issue 21)
    webhook = schema["paths"]["/api/webhooks/{id}"]["get"]["responses"]

    assert "422" in ticket_list
    assert sorted(ticket) == ["200", "401", "404", "414", "422", "429", "503"]
    assert "422" not in webhook
    assert sorted(webhook) == ["200", "401", "403", "404", "414", "429", "503"]


def test_a_text_that_may_be_blank_has_one_pattern_not_a_one_of(schema):
    """drf-spectacular would offer "" as a second branch, which NO_NUL matches too: `oneOf` would refuse ""."""
    telefone = schema["components"]["schemas"]["RequesterInRequest"]["properties"]["telefone"]

    assert "oneOf" not in telefone
    assert telefone["pattern"] == NO_NUL


def test_every_answer_has_a_description(schema):
    descriptions = [
        (path, method, code, response.get("description"))
        for path, method, operation in operations(schema)
        for code, response in operation["responses"].items()
    ]

    assert ("/api/v1/tickets", "get", "200", "Sucesso.") in descriptions
    assert [entry for entry in descriptions if not entry[3]] == []
