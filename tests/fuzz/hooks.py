"""Schemathesis hooks of the contract fuzzing (tests/fuzz/test_contract_fuzz.py).

`schemathesis run` loads this module (the `hooks` of tests/fuzz/schemathesis.toml). What the test
seeded in the running stack comes in the JSON file named by HELPDESK_FUZZ_FIXTURES; every call is
logged, one JSON line each, to HELPDESK_FUZZ_LOG for the test's own assertions.

- Authentication: organization A's partner key on the partner API, a panel JWT of A's admin
  (logged in here, again every 10 minutes and on a 401) on the panel APIs.
- Realistic ids: in the generated phases, most path ids are swapped for ids seeded in
  organization A (to reach past the 404s) or in organization B (whose answer must be the 404 of
  an id that does not exist); the stateful phase keeps the ids its links carry.
- Realistic values in valid bodies: A's admin on login, real refresh tokens on refresh and
  logout, a public webhook URL, A's (or B's) statuses and agents on a ticket update.
- Guards: nothing revokes the key, deletes/changes the webhook the run relies on or deletes a
  seeded ticket (such a request goes to an id that does not exist instead; tickets made to be
  deleted are seeded for DELETE /api/tickets/{id}).
- Checks of our own: the exact envelope, and tenancy.
- Two failure filters for what a schema cannot say (see `filter_failure`).
"""

import hashlib
import json
import os
import re
import threading
import uuid
from datetime import date
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jsonschema
import requests
import schemathesis
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import TestPhase
from schemathesis.generation.modes import GenerationMode

FIXTURES = json.loads(Path(os.environ["HELPDESK_FUZZ_FIXTURES"]).read_text())
LOG = Path(os.environ["HELPDESK_FUZZ_LOG"])
FILTERED_LOG = LOG.with_name("filtered.jsonl")
BASE_URL = FIXTURES["base_url"]

# Operation label -> {"a": [path parameters...], "b": [...]}: ids seeded in each organization.
POOLS: dict[str, dict[str, list[dict]]] = FIXTURES["paths"]
OTHER_ORGANIZATION_IDS: set[str] = set(FIXTURES["other_organization_ids"])
# Operation label -> ids the run relies on: such a request is sent to an id that does not exist.
PROTECTED: dict[str, dict[str, list[str]]] = FIXTURES["protected"]

SHARE_OF_OWN_IDS = 50  # percent of generated cases sent with organization A's ids
SHARE_OF_OTHER_IDS = 15  # then with organization B's ids; the rest keep the generated ids


def _draw(*parts) -> bytes:
    """A deterministic draw from a case's generated values, so a case shrinks and replays the same."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).digest()


def _bearer(case, token: str) -> None:
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


@schemathesis.auth(refresh_interval=None, retry_on=[]).apply_to(
    path_regex=r"^/api/v1/(tickets.*|atendentes|eventos|contatos.*)$"
)
class PartnerKey:
    def get(self, case, context):
        return FIXTURES["partner_key"]

    def set(self, case, data, context):
        _bearer(case, data)


@schemathesis.auth(refresh_interval=600).apply_to(
    path_regex=r"^/api/(api-keys|webhooks|tickets|ticket-status|tags|auditoria|contatos|campos|horario-atendimento|sla|macros)(/.*)?$"
)
class PanelToken:
    """A's admin; the access token lives 15 minutes, and a 401 logs in again (retry_on's default)."""

    def get(self, case, context):
        response = requests.post(f"{BASE_URL}/api/auth/login", json=FIXTURES["admin"], timeout=30)
        response.raise_for_status()
        return response.json()["data"]["access_token"]

    def set(self, case, data, context):
        _bearer(case, data)


def _phase(case) -> TestPhase | None:
    return case.meta.phase.name if case.meta is not None else None


def _is_positive(case) -> bool:
    return case.meta is not None and case.meta.generation.mode == GenerationMode.POSITIVE


@schemathesis.hook
def before_call(context, case, kwargs):
    label = case.operation.label
    if _phase(case) != TestPhase.STATEFUL:
        _use_seeded_ids(label, case)
        if _is_positive(case):
            _use_seeded_body_values(label, case)
    protected = PROTECTED.get(label, {})
    for name, ids in protected.items():
        if (case.path_parameters or {}).get(name) in ids:
            case.path_parameters = {**case.path_parameters, name: str(uuid.uuid4())}


def _use_seeded_ids(label: str, case) -> None:
    pools = POOLS.get(label)
    if not pools or not case.path_parameters:
        return
    draw = _draw(label, case.path_parameters, case.query, case.body if isinstance(case.body, dict | list) else None)
    share = draw[0] * 100 // 256
    if share < SHARE_OF_OWN_IDS:
        pool = pools["a"]
    elif share < SHARE_OF_OWN_IDS + SHARE_OF_OTHER_IDS:
        pool = pools["b"]
    else:
        return
    case.path_parameters = {**case.path_parameters, **pool[draw[1] % len(pool)]}


_refresh_tokens = list(FIXTURES["refresh_tokens"])
_refresh_lock = threading.Lock()
_seeded_labels: set[str] = set()
_seeded_lock = threading.Lock()


def _use_seeded_body_values(label: str, case) -> None:
    """Positive bodies only, and only values already valid: the case stays as valid as it was."""
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and _draw(label, key, case.body)[0] < 180:
        # Mostly a key of its own (a retry with the same key and body replays, another body is a 422).
        case.headers = {**case.headers, "Idempotency-Key": f"{key[:200]}-{uuid.uuid4().hex}"}
    body = case.body
    seeded = BODY_VALUES.get(label)
    body_component = (case.meta.components if case.meta else {}).get(ParameterLocation.BODY)
    if body_component is not None and body_component.mode.is_negative:
        return  # a case can be positive with a negative body: its violation must reach the service
    if seeded is not None and isinstance(body, dict):
        draw = _draw(label, body)
        with _seeded_lock:
            if label not in _seeded_labels:
                # The first positive body of each operation always takes the seeded values: Hypothesis
                # repeats small bodies, and a run whose few distinct draws all missed never saw a 2xx.
                _seeded_labels.add(label)
                draw = bytes(len(draw))
        changes = seeded(body, draw)
        case.body = changes.get(REPLACE, {**body, **changes})


# A seeded value of BODY_VALUES that is the whole body, not keys merged into it.
REPLACE = "__body__"


def _login(body: dict, draw: bytes) -> dict:
    return FIXTURES["admin"] if draw[0] < 40 else {}


def _refresh(body: dict, draw: bytes) -> dict:
    with _refresh_lock:
        if draw[0] < 40 and _refresh_tokens:
            return {"refresh_token": _refresh_tokens.pop()}
    return {}


def _logout(body: dict, draw: bytes) -> dict:
    # Logging out twice with one token is a 200 too: a pool of its own, reused.
    pool = FIXTURES["logout_tokens"]
    return {"refresh_token": pool[draw[1] % len(pool)]} if draw[0] < 40 else {}


def _webhook(body: dict, draw: bytes) -> dict:
    # A made-up host never resolves here (tests/fuzz/offline_wsgi.py): most valid bodies get a
    # public address instead. Nothing is ever delivered to it (the worker is stopped).
    if isinstance(body.get("url"), str) and draw[0] < 160:
        return {"url": f"{FIXTURES['public_url']}/{draw[1:5].hex()}"}
    return {}


def _field_values(body: dict, draw: bytes) -> dict:
    """Values of A's seeded custom fields (issue 22): random keys and values are a 422 per key (the fields are
    the organization's data, which a schema cannot list)."""
    if draw[-1] >= 200:
        return {}
    values = FIXTURES["field_values"]
    keys = list(values)
    chosen = {key: values[key] for n, key in enumerate(keys) if draw[-2 - n] % 3}
    return chosen or {keys[0]: values[keys[0]]}


def _ticket_fields(body: dict, draw: bytes) -> dict:
    """PATCH /api/v1/tickets/{id}/campos: the body is the values themselves."""
    values = _field_values(body, draw)
    return {REPLACE: values} if values else {}


def _with_field_values(body: dict, draw: bytes) -> dict:
    """A ticket's create or update that sends `campos`: A's fields' values."""
    if not isinstance(body.get("campos"), dict):
        return {}
    values = _field_values(body, draw)
    return {"campos": values} if values else {}


def _custom_field(body: dict, draw: bytes) -> dict:
    """A new field: a key of its own (a taken one is a 422 of stored state), options exactly for the list types."""
    if draw[0] >= 200:
        return {}
    changes = {}
    if isinstance(body.get("chave"), str):
        changes["chave"] = f"{body['chave'][:20]}_{draw[1:6].hex()}"
    if body.get("tipo") in ("lista", "multilista"):
        changes["opcoes"] = ["a", "b"]
    elif "opcoes" in body:
        changes["opcoes"] = []
    return changes


def _custom_field_update(body: dict, draw: bytes) -> dict:
    """A seeded field's change: its key and type stay (another is a 422), options only on its list field."""
    if draw[0] >= 200:
        return {}
    return {REPLACE: {name: value for name, value in body.items() if name not in ("chave", "tipo", "opcoes")}}


def _ticket_update(body: dict, draw: bytes) -> dict:
    # Mostly A's statuses and agents (a 200), some of B's (a 404, like an id that does not exist).
    values = FIXTURES["ticket_update_values"]
    changes = _with_field_values(body, draw)
    for position, field in enumerate(("status_id", "atendente_id")):
        if _is_uuid(body.get(field)) and draw[position] < 200:
            pool = values[field]["a" if draw[position] < 160 else "b"]
            changes[field] = pool[draw[position + 2] % len(pool)]
    return changes


def _merge_sources(body: dict, draw: bytes) -> dict:
    # `origens`: mostly A's tickets made to be merged away (a 200, then a 409 once merged), some of B's (a 404).
    sources = body.get("origens")
    if not isinstance(sources, list) or not sources or not all(_is_uuid(value) for value in sources):
        return {}
    pools = FIXTURES["merge_sources"]
    pool = pools["a" if draw[0] < 220 else "b"]
    count = min(len(sources), 1 + draw[1] % 3)
    return {"origens": [pool[(draw[2] + n * 7) % len(pool)] for n in range(count)]}


_ZONES = ("America/Sao_Paulo", "America/New_York", "Europe/Lisbon", "UTC", "Asia/Tokyo")


def _business_hours(body: dict, draw: bytes) -> dict:
    """A calendar sla.rules accepts: a known zone, the generated intervals that do not overlap an earlier one of
    their day nor end before they start (a schema cannot say either), and each holiday date once, real."""
    if draw[0] >= 200:
        return {}
    changes = {"fuso_horario": _ZONES[draw[1] % len(_ZONES)]}
    if isinstance(body.get("intervalos"), list):
        kept = []
        for interval in body["intervalos"]:
            try:
                weekday, start, end = interval["dia_semana"], _minutes(interval["inicio"]), _minutes(interval["fim"])
            except (KeyError, TypeError, ValueError):
                continue
            if start < end and not any(d == weekday and s < end and start < e for d, s, e, _ in kept):
                kept.append((weekday, start, end, interval))
        changes["intervalos"] = [interval for *_, interval in kept]
    if isinstance(body.get("feriados"), list):
        days = {}
        for holiday in body["feriados"]:
            try:
                day = date.fromisoformat(holiday["data"]).isoformat()
            except (KeyError, TypeError, ValueError):
                continue
            days.setdefault(day, holiday)
        changes["feriados"] = list(days.values())
    return changes


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


_TARGETS = ("primeira_resposta", "proxima_resposta", "resolucao")


def _sla_policies(body: dict, draw: bytes) -> dict:
    """A policy set sla.rules accepts: each priority once (the first generated policy of it kept), and a policy
    the schema let through without any target given one (a schema cannot say either)."""
    if draw[0] >= 200 or not isinstance(body.get("politicas"), list):
        return {}
    kept = {}
    for policy in body["politicas"]:
        if not isinstance(policy, dict) or "prioridade" not in policy or policy["prioridade"] in kept:
            continue
        if all(policy.get(target) is None for target in _TARGETS):
            policy = {**policy, _TARGETS[draw[1] % 3]: 1 + draw[2] * 60}
        kept[policy["prioridade"]] = policy
    return {"politicas": list(kept.values())}


# Real files for positive uploads: random bytes are rarely a type the service takes (a 415 a schema
# cannot foresee), and an empty file is a 422. A PNG and a text file, as the fixtures wrote them.
_FILES = [bytes.fromhex(content) for content in FIXTURES["upload_files"]]


def _upload(body: dict, draw: bytes) -> dict:
    if "arquivo" not in body:
        return {}
    if isinstance(body["arquivo"], list):
        return {"arquivo": [_FILES[(draw[0] + n) % len(_FILES)] for n in range(len(body["arquivo"]))]}
    return {"arquivo": _FILES[draw[0] % len(_FILES)]}


BODY_VALUES = {
    "POST /api/v1/tickets/{id}/anexos": _upload,
    "POST /api/tickets/{id}/respostas": _upload,
    "POST /api/auth/login": _login,
    "POST /api/auth/refresh": _refresh,
    "POST /api/auth/logout": _logout,
    "POST /api/webhooks": _webhook,
    "PATCH /api/webhooks/{id}": _webhook,
    "PATCH /api/tickets/{id}": _ticket_update,
    "POST /api/tickets": _ticket_update,  # atendente_id: A's agents mostly, some of B's (a 404)
    "POST /api/v1/tickets": _with_field_values,
    "PATCH /api/v1/tickets/{id}/campos": _ticket_fields,
    "POST /api/campos": _custom_field,
    "PATCH /api/campos/{id}": _custom_field_update,
    "PUT /api/horario-atendimento": _business_hours,
    "PUT /api/sla": _sla_policies,
    "POST /api/tickets/{id}/mesclar": _merge_sources,
}


def _is_uuid(value) -> bool:
    try:
        uuid.UUID(value)
    except (TypeError, ValueError, AttributeError):
        return False
    return True


# --- checks -------------------------------------------------------------------

SUCCESS_KEYS = {"success", "message", "data", "errors"}
BINARY_ANSWERS = {"GET /api/v1/atendentes/avatar/{token}", "GET /api/v1/anexos/{token}"}
ERROR_KEYS = {"success", "message", "status", "data", "errors"}
VALIDATION_KEYS = {"success", "message", "errors"}


@schemathesis.check
def envelope(ctx, response, case):
    """Every JSON answer is exactly one of the three envelopes, whatever the schema allows beside."""
    if case.operation.label in BINARY_ANSWERS and response.status_code == 200:
        return None  # the image or the file itself
    body = json.loads(response.content)
    assert isinstance(body, dict), f"not an envelope: {body!r}"
    status = response.status_code
    if status < 400:
        assert set(body) == SUCCESS_KEYS and body["success"] is True and body["errors"] == [], body
    elif set(body) == VALIDATION_KEYS:
        assert status == 422 and body["success"] is False and body["message"] == "Erro de validação", body
        assert body["errors"] and all(isinstance(v, list) and v for v in body["errors"].values()), body
    else:
        assert set(body) == ERROR_KEYS, body
        assert body["success"] is False and body["status"] == status and body["data"] is None, body
        assert set(body["errors"]) == {"field", "message"}, body
    return None


def _other_organization_ids_in(case) -> list[str]:
    values = list((case.path_parameters or {}).values())
    if _is_positive(case) and isinstance(case.body, dict):
        values += [case.body.get("status_id"), case.body.get("atendente_id")]
        origens = case.body.get("origens")
        values += origens if isinstance(origens, list) and all(isinstance(v, str) for v in origens) else []
    return [value for value in values if value in OTHER_ORGANIZATION_IDS]


def _error_fields(response) -> set[str]:
    body = json.loads(response.content)
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, dict):
        return set()
    return {errors["field"]} if "field" in errors else set(errors)


@schemathesis.check
def tenancy(ctx, response, case):
    """An id of another organization answers exactly as an id that does not exist: 404, never 2xx or 403."""
    if not _other_organization_ids_in(case) or response.request.method != case.operation.method.upper():
        return None  # an undocumented method is refused before any lookup (405)
    status = response.status_code
    # Answered before any lookup: authentication, an unreadable body, a request line too long for the web server
    # (414: the same for every id, it never reaches the application), the Idempotency-Key claim, and a body
    # refused for what a schema cannot say (SEMANTIC_REJECTIONS: its message names no object of anyone's).
    early = status in (400, 401, 413, 414, 415)
    early = early or (status in (409, 422) and _error_fields(response) == {"Idempotency-Key"})
    early = early or (status == 422 and _semantic_refusal(response))
    assert status == 404 or early, f"an id of organization B answered {status}, not 404: {response.content[:300]!r}"
    return None


# --- failures a schema cannot express -------------------------------------------

# Field -> the only messages that may refuse a schema-valid request on it: rules about stored state
# or about the world, which a schema cannot say (each is in the description of its operation or field).
SEMANTIC_REJECTIONS = {
    # The 11th webhook of an organization.
    "webhook": ("Limite de 10 webhooks por organização atingido.",),
    # The 21st active API key of an organization (API_KEYS_PER_ORGANIZATION's default).
    "credencial": ("Limite de 20 credenciais ativas por organização atingido. Revogue uma antes.",),
    # An Idempotency-Key reused with another body.
    "Idempotency-Key": ("Esta chave já foi usada com outra requisição.",),
    # An empty file: the schema's minLength of a binary part is not always honoured by the generator.
    "arquivo": ("O arquivo enviado está vazio.",),
    # A webhook URL whose host does not resolve, or not only to public addresses.
    "url": ("Não foi possível resolver o host da URL.", "O host da URL deve resolver apenas para endereços públicos."),
    # The change list's `desde`: a cursor only the service can make (signed), or an instant with its time zone.
    "desde": (
        "Informe o proximo_cursor de uma resposta anterior ou uma data e hora ISO 8601 com fuso horário "
        "(por exemplo, 2025-01-31T12:00:00Z).",
    ),
    # The ticket list's `cursor`: empty, or a cursor only the service can make (signed).
    "cursor": ("Informe o proximo_cursor de uma resposta anterior, ou deixe vazio para começar do início da lista.",),
    # A key's expiry: in the future, and within what a database stores (year 9999 with a negative offset is not).
    "expira_em": (
        "A data de expiração deve estar no futuro.",
        "Informe data e hora ISO 8601 com fuso (por exemplo, 2026-12-31T23:59:00Z).",
    ),
    "ate": ("Informe data e hora ISO 8601 com fuso (por exemplo, 2026-12-31T23:59:00Z).",),
    # Custom fields (issue 22): the 51st of an organization, a key taken or changed, a type changed, options that
    # do not fit the type (a rule between two fields), or that tickets use.
    "campo": ("Limite de 50 campos por organização atingido.",),
    "chave": ("Já existe um campo com esta chave.", "A chave de um campo não muda: crie outro campo."),
    "tipo": ("O tipo de um campo não muda: crie outro campo.",),
    "opcoes": (
        "Só campos do tipo lista ou multilista têm opções.",
        "Informe ao menos uma opção.",
        "As opções não podem se repetir.",
        "Cada opção é um texto de 1 a 100 caracteres.",
    ),
    # A value of a custom field: the organization's fields (their keys, types and options) are stored state.
    "campos.*": (
        "Campo desconhecido nesta organização.",
        "Campo inativo: não aceita valores.",
        "Este campo não pode ser alterado pela API.",
    ),
}
# Business hours (issue 23): a zone must be one zoneinfo knows, an interval end after it starts and overlap no
# other of its day, a date be real (2026-02-30 fits the pattern) and a holiday once: rules no schema can say.
SEMANTIC_REJECTIONS["fuso_horario"] = ("Fuso horário desconhecido: informe um nome IANA, como America/Sao_Paulo.",)
SEMANTIC_REJECTIONS["intervalos.*"] = ("O início deve ser anterior ao fim, no mesmo dia (o fim vai até 24:00).",)
SEMANTIC_REJECTIONS["feriados.*.data"] = ("Informe uma data válida no formato AAAA-MM-DD.",)
# SLA policies (issue 23, part 2): a policy needs at least one target; the schema can only say each is optional.
SEMANTIC_REJECTIONS["politicas.*"] = ("Informe ao menos um prazo: primeira_resposta, proxima_resposta ou resolucao.",)
SEMANTIC_REJECTIONS["desde"] += SEMANTIC_REJECTIONS["ate"]
# The ticket list's times (issue 21): a date-time past what a database stores once in UTC (year 1 with a
# positive offset, year 9999 with a negative one); and a cursor made for another `ordenacao`.
for _field in ("atualizado_desde", "criado_desde", "criado_ate"):
    SEMANTIC_REJECTIONS[_field] = SEMANTIC_REJECTIONS["ate"]
SEMANTIC_REJECTIONS["cursor"] += (
    "Este proximo_cursor é de outra ordenacao: use a mesma ordenacao em todas as páginas, ou deixe o cursor "
    "vazio para começar do início.",
)
# Tags (issue 22): at most 20 on a ticket, counted on what the ticket ends up with (its tags now, the added, the
# removed), which a schema cannot say; and a body that asks nothing (`{}`, or only unknown keys).
SEMANTIC_REJECTIONS["tags"] = ("Um ticket tem no máximo 20 tags.", "Informe adicionar, remover ou os dois.")
SEMANTIC_REJECTIONS["body"] = ("Informe adicionar, remover ou os dois.",)
# Bulk edits (issue 24): every change is optional in the schema, one at least is asked for.
SEMANTIC_REJECTIONS["body"] += ("Informe ao menos uma alteração: status_id, prioridade, atendente_id ou tags.",)
# Rejections whose message names the value refused: matched by their fixed beginning.
SEMANTIC_REJECTION_PREFIXES = {
    # A key's networks: CIDR notation, which a schema pattern cannot say for IPv4 and IPv6 at once.
    "redes_permitidas": ("Rede inválida (use a notação CIDR",),
    # What a custom field expects, naming its options (tickets.fields.values.expected).
    "campos.*": ("Informe ",),
    # Business hours: the interval an interval overlaps, the holiday a date repeats, each named.
    "intervalos.*": ("Sobrepõe intervalos.",),
    "feriados.*.data": ("Data repetida: já está em feriados.",),
    # SLA policies: a priority once, the message naming the policy that has it.
    "politicas.*.prioridade": ("Prioridade repetida: já está em politicas.",),
    # A tag's 1..50 characters count after normalisation (casefold may lengthen it, inner whitespace collapses,
    # a lone surrogate is refused): the schema says only "not blank, no NUL". One tag in both lists is a 422 too.
    **{field: ("Tag inválida: ",) for field in ("tags", "tag", "adicionar", "tags.adicionar")},
    **{
        field: ("Tag inválida: ", "Tag em adicionar e em remover ao mesmo tempo: ")
        for field in ("remover", "tags.remover")
    },
}


# A file's type is recognised from its content, and its size counted as it streams: neither is
# something a schema can say of `format: binary` (both are in the upload's description).
FILE_REJECTIONS = {
    415: ("Tipo de arquivo não aceito.", "arquivo"),
    413: ("Arquivo muito grande.", "arquivo"),
}


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Drops these kinds of failure, and only these:

    - a schema-valid request refused (ST202) with a 422 whose every field error is one of
      SEMANTIC_REJECTIONS, or a file refused for its content or size (FILE_REJECTIONS);
    - a schema-violating body or query accepted because the service trims text before validating,
      as the fields' descriptions say (ST201 whose body or query is valid once its strings are trimmed);
    - a "schema-violating" multipart upload that was valid as sent (ST201): schemathesis cannot
      always make a multipart form with a file invalid, and then sends a valid one.

    Each dropped failure is written to filtered.jsonl beside the call log.
    """
    keep = True
    if failure.code == "ST202" and response.status_code == 422:
        errors = json.loads(response.content)["errors"]
        keep = not (errors and all(_semantic(field, messages) for field, messages in errors.items()))
    elif failure.code == "ST202" and response.status_code in FILE_REJECTIONS:
        body = json.loads(response.content)
        keep = (body["message"], body["errors"]["field"]) != FILE_REJECTIONS[response.status_code]
    elif failure.code == "ST201":
        keep = not (_valid_once_trimmed(case) or _multipart_valid_as_sent(case) or _query_valid_as_sent(case, response))
    if not keep:
        _write(FILTERED_LOG, {**_entry(case, response), "failure": failure.code, "body": repr(case.body)[:300]})
    return keep


# Fields whose 422 names each refused value in a message of its own (every refused tag of a list).
ONE_MESSAGE_PER_VALUE = frozenset({"tags", "tag", "adicionar", "remover", "tags.adicionar", "tags.remover"})


def _semantic_refusal(response) -> bool:
    errors = json.loads(response.content).get("errors")
    return bool(errors) and isinstance(errors, dict) and all(_semantic(f, m) for f, m in errors.items())


def _semantic(field: str, messages: list[str]) -> bool:
    if len(messages) != 1 and field not in ONE_MESSAGE_PER_VALUE:
        return False
    if field.startswith("campos."):  # a custom field's value, by its key
        field = "campos.*"
    field = re.sub(r"^(intervalos|feriados|politicas)\.[0-9]+", r"\1.*", field)  # a list's entry, by its position
    return all(
        message in SEMANTIC_REJECTIONS.get(field, ())
        or message.startswith(SEMANTIC_REJECTION_PREFIXES.get(field, ("\0",)))
        for message in messages
    )


def _trimmed(value):
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return {key: _trimmed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_trimmed(item) for item in value]
    return value


def _valid_once_trimmed(case) -> bool:
    components = case.meta.components if case.meta else {}
    negative = [location for location, info in components.items() if info.mode.is_negative]
    if negative == [ParameterLocation.QUERY] and isinstance(case.query, dict):
        return _query_valid_once_trimmed(case)
    if negative != [ParameterLocation.BODY] or not isinstance(case.body, dict | list):
        return False
    body = case.operation.get_body_for_media_type("application/json")
    trimmed = _trimmed(case.body)
    if body is None or trimmed == case.body:
        return False
    validator = jsonschema.validators.validator_for(body.validation_schema)
    return validator(body.validation_schema, format_checker=validator.FORMAT_CHECKER).is_valid(trimmed)


def _query_valid_once_trimmed(case) -> bool:
    """The query's texts are trimmed before validation too: valid once trimmed, every parameter checked
    against its schema (an empty optional value is no value, as the service reads it)."""
    trimmed = {name: _trimmed(value) for name, value in case.query.items()}
    if trimmed == case.query:
        return False
    for name, value in trimmed.items():
        parameter = case.operation.get_parameter(name, "query")
        if parameter is None:
            return False
        schema = parameter.validation_schema
        if value == "" and not parameter.is_required:
            continue
        if schema.get("type") in ("integer", "number") and isinstance(value, str):
            try:
                value = int(value) if schema["type"] == "integer" else float(value)
            except ValueError:
                return False
        validator = jsonschema.validators.validator_for(schema)
        if not validator(schema, format_checker=validator.FORMAT_CHECKER).is_valid(value):
            return False
    return True


def _query_valid_as_sent(case, response) -> bool:
    """A query is text on the wire: a "schema-violating" value schemathesis made (`false`, null or `[]` for a
    list of free texts) arrives as a valid text, and a parameter given several times is read as its last value
    when it takes one (Django's QueryDict). Valid as the service read it (the query string of the request
    sent), every parameter checked against its schema (an empty optional value is no value, and an empty
    value of a repeatable one counts as absent, as `status=` and `tag=` say)."""
    if response.request.method != "GET":  # a body or a header may be what violates the schema
        return False
    sent = parse_qs(urlsplit(response.request.url).query, keep_blank_values=True)
    if not sent:
        return False
    for name, values in sent.items():
        parameter = case.operation.get_parameter(name, "query")
        if parameter is None:
            return False
        schema = parameter.validation_schema
        text = json.dumps(schema)
        if '"array"' in text:
            value = [item for item in (_trimmed(item) for item in values) if item != ""]
        else:
            value = _trimmed(values[-1])
        if value in ("", []) and not parameter.is_required:
            continue
        if not isinstance(value, list) and '"integer"' in text:
            try:
                value = int(value)
            except ValueError:
                return False
        validator = jsonschema.validators.validator_for(schema)
        if not validator(schema, format_checker=validator.FORMAT_CHECKER).is_valid(value):
            return False
    return True


def _multipart_valid_as_sent(case) -> bool:
    body = case.operation.get_body_for_media_type("multipart/form-data")
    if body is None or not isinstance(case.body, dict):
        return False
    schema = body.validation_schema
    validator = jsonschema.validators.validator_for(schema)
    sent = _as_sent(case.body, schema.get("properties", {}))
    return validator(schema, format_checker=validator.FORMAT_CHECKER).is_valid(sent)


def _as_sent(body: dict, properties: dict) -> dict:
    """A form as it goes on the wire: a file is a file whatever its bytes, a boolean or a number sent to a
    text field is its text (`true`), an empty list sends no part, a list of one text sends that text.
    Schemathesis cannot always make a form invalid."""

    def part(name, value):
        if hasattr(value, "data") or isinstance(value, bytes):
            return "<arquivo>"
        if properties.get(name, {}).get("type") == "string" and isinstance(value, bool | int | float):
            return ("true" if value else "false") if isinstance(value, bool) else str(value)
        return value

    sent = {}
    for name, value in body.items():
        if isinstance(value, list):
            if not value:
                continue
            value = [part(name, item) for item in value]
            if len(value) == 1 and value[0] != "<arquivo>" and not isinstance(value[0], (list, dict)):
                value = value[0]
        sent[name] = part(name, value)
    return sent


# --- the call log -----------------------------------------------------------------

_log_lock = threading.Lock()


def _entry(case, response) -> dict:
    components = case.meta.components if case.meta else {}
    return {
        "operation": case.operation.label,
        "status": response.status_code,
        "phase": str(_phase(case) or ""),
        "negative": sorted(str(location.value) for location, info in components.items() if info.mode.is_negative),
        "authorization": "Authorization" in response.request.headers,
        "other_organization": bool(_other_organization_ids_in(case)),
        "answer": response.content[:200].decode(errors="replace") if response.status_code in (401, 422) else "",
    }


def _write(path: Path, entry: dict) -> None:
    with _log_lock, path.open("a") as log:
        log.write(json.dumps(entry) + "\n")


@schemathesis.hook
def after_call(context, case, response):
    _write(LOG, _entry(case, response))
