"""The envelope of every answer under /api (api-spec.md, "Response envelope" and "Errors"), built here
and nowhere else: `success_body` and `error_body` make it, `json_bytes` writes it.

Who answers, and through what:

- an API view's success: the renderer (api_framework.renderers) wraps the payload with `success_body`;
- an API view's error: the exception handler (api_framework.exception_handler) puts `error_body` in the response;
- an Idempotency-Key replay (integrations.api.base): the stored body, written again with `json_bytes`;
- Django's handler400/404/500 (api_framework.views): `error_response`;
- gunicorn's own refusals, before Django sees the request (gunicorn.conf.py): `error_body`, `spaced_json_bytes`.
"""

import json

import orjson
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpResponse
from django.utils.functional import Promise
from rest_framework.renderers import JSONRenderer

from foundation.exceptions import ApplicationError, ValidationFailed

VALIDATION_MESSAGE = "Erro de validação"

# orjson writes U+2028 and U+2029 raw; DRF's JSONRenderer escapes them, and so do we, byte for byte.
_LINE_SEPARATORS = (("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def success_body(data, message: str) -> dict:
    return {"success": True, "message": message, "data": data, "errors": []}


def error_body(error: ApplicationError | ValidationFailed) -> dict:
    """An error's envelope; a validation error's has its own shape (the spec's): no status, no data."""
    if isinstance(error, ValidationFailed):
        return {"success": False, "message": VALIDATION_MESSAGE, "errors": error.errors}
    return {
        "success": False,
        "message": error.message,
        "status": error.status_code,
        "data": None,
        "errors": {"field": error.field, "message": error.detail},
    }


def json_bytes(body) -> bytes:
    """Compact UTF-8 JSON, as DRF's JSONRenderer writes it, at orjson's speed."""
    try:
        encoded = orjson.dumps(body, default=_lazy_text, option=orjson.OPT_UTC_Z)
    except (orjson.JSONEncodeError, TypeError):
        return _drf_json_bytes(body)
    for raw, escaped in _LINE_SEPARATORS:
        if raw in encoded:
            encoded = encoded.replace(raw, escaped)
    return encoded


def _lazy_text(value):
    if isinstance(value, Promise):  # lazy translations in error messages
        return str(value)
    raise TypeError


def _drf_json_bytes(body) -> bytes:
    """What orjson refuses (a lone surrogate, an exotic type): DRF's own encoder, \\u-escaped if need be."""
    renderer = JSONRenderer()
    try:
        return renderer.render(body)
    except UnicodeEncodeError:
        renderer.ensure_ascii = True
        return renderer.render(body)


def spaced_json_bytes(body) -> bytes:
    """The bytes of an answer given outside any API view (Django's handlers, gunicorn's refusals): json.dumps
    with its default ", " and ": " separators, as Django's JsonResponse has always written them here."""
    return json.dumps(body, cls=DjangoJSONEncoder, ensure_ascii=False).encode()


def error_response(error: ApplicationError) -> HttpResponse:
    """The envelope of `error` answered outside any API view, with the error's headers (Retry-After)."""
    response = HttpResponse(
        spaced_json_bytes(error_body(error)), status=error.status_code, content_type="application/json"
    )
    for name, value in error.headers.items():
        response[name] = value
    return response
