"""The fuzzing's failure filters, on requests like the ones they judge (tests/fuzz/hooks.py): a filter that
drops too much hides a real failure, one that drops too little fails `make fuzz` on what the service does on
purpose."""

import importlib
import json
from types import SimpleNamespace

import pytest

FIXTURES = {
    "base_url": "http://127.0.0.1:1",
    "paths": {},
    "other_organization_ids": [],
    "protected": {},
    "refresh_tokens": [],
    "upload_files": [],
}
# GET /api/v1/tickets's schema for these parameters (the service's OpenAPI document).
PARAMETERS = {
    "status": {"type": "array", "items": {"type": "string", "enum": ["aberto", "em_andamento", "resolvido"]}},
    "tag": {"type": "array", "items": {"type": "string", "pattern": "^[^\\u0000]*$"}},
    "solicitante_external_id": {"type": "string", "pattern": "^[^\\u0000]*$", "maxLength": 255},
    "por_pagina": {"type": "integer", "minimum": 1, "maximum": 100},
}


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    fixtures = tmp_path_factory.mktemp("fuzz-hooks") / "fixtures.json"
    fixtures.write_text(json.dumps(FIXTURES))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HELPDESK_FUZZ_FIXTURES", str(fixtures))
        patch.setenv("HELPDESK_FUZZ_LOG", str(fixtures.with_name("calls.jsonl")))
        yield importlib.import_module("tests.fuzz.hooks")


def sent(query: str):
    operation = SimpleNamespace(
        get_parameter=lambda name, location: (
            SimpleNamespace(validation_schema=PARAMETERS[name], is_required=False) if name in PARAMETERS else None
        )
    )
    request = SimpleNamespace(method="GET", url=f"http://127.0.0.1:1/api/v1/tickets?{query}")
    return SimpleNamespace(operation=operation), SimpleNamespace(request=request)


@pytest.mark.parametrize(
    "query",
    [
        # The case CI's fuzzing found: the last of several values of a one-value parameter, a number as a tag,
        # and `status=` (empty: absent, as the parameter's description says).
        "solicitante_external_id=%7B%7D&solicitante_external_id=null&tag=2.9e-298&status=",
        "status=aberto&status=",
        "tag=&tag=%20",
        "por_pagina=%2015%20",
    ],
)
def test_a_query_valid_as_the_service_reads_it_is_not_a_schema_violation(hooks, query):
    assert hooks._query_valid_as_sent(*sent(query))


@pytest.mark.parametrize(
    "query",
    ["status=aberto&status=nenhum", "status=%20x", "por_pagina=0", "por_pagina=abc", "desconhecido=1", "tag=a%00b"],
)
def test_a_query_the_service_must_refuse_stays_a_failure(hooks, query):
    assert not hooks._query_valid_as_sent(*sent(query))
