"""The one exception handler: every error of every API becomes an envelope.

Domain errors and validation errors keep what the request wrote: services check
before they write, and the partner door stores the answer to an Idempotency-Key
in the request's own transaction (docs/decisions.md). Framework errors go
through DRF's own handler first (Http404, PermissionDenied, WWW-Authenticate,
Retry-After, rollback); a database that cannot be reached is a 503 with
Retry-After; anything unexpected is a 500. Both roll the request back.
"""

import logging

from django.db import InterfaceError, OperationalError, connections
from django_ratelimit.exceptions import Ratelimited
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from api_framework.envelope import error_body
from foundation import exceptions as domain
from foundation.metrics.instruments import rate_limit_rejected

logger = logging.getLogger(__name__)

_BY_STATUS = {
    400: lambda: domain.BadRequest("JSON inválido.", detail="O corpo da requisição não é um JSON válido."),
    403: domain.AccessDenied,
    404: domain.NotFound,
    405: domain.MethodNotAllowed,
    415: domain.UnsupportedMediaType,
    429: domain.RateLimited,
}


def flatten_validation_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail to {"solicitante.nome": [...]}."""
    if isinstance(detail, dict):
        items = ((_field_name(prefix, key), value) for key, value in detail.items())
    elif isinstance(detail, list) and any(isinstance(item, (dict, list)) for item in detail):
        items = ((f"{prefix}.{index}" if prefix else str(index), value) for index, value in enumerate(detail) if value)
    else:
        messages = detail if isinstance(detail, list) else [detail]
        return {prefix or "body": [_printable(message) for message in messages]}
    flat: dict[str, list[str]] = {}
    for name, value in items:
        for field, messages in flatten_validation_errors(value, name).items():
            flat.setdefault(field, []).extend(messages)
    return flat


def _field_name(prefix: str, key) -> str:
    if key == api_settings.NON_FIELD_ERRORS_KEY:
        return prefix or "body"
    return f"{prefix}.{key}" if prefix else str(key)


def _printable(message) -> str:
    """Messages may echo the input; a lone surrogate in it must not break the UTF-8 response."""
    return str(message).encode("utf-8", "backslashreplace").decode("utf-8")


def envelope_exception_handler(exc, context):
    if isinstance(exc, drf.ValidationError):
        exc = domain.ValidationFailed(flatten_validation_errors(exc.detail))
    if isinstance(exc, domain.ValidationFailed):
        return Response(error_body(exc), status=422)
    if isinstance(exc, Ratelimited):
        exc = domain.RateLimited()
    if isinstance(exc, domain.RateLimited):
        rate_limit_rejected(exc.limit)
    if isinstance(exc, domain.ApplicationError):
        return _render(exc, Response(), context)
    if is_database_outage(exc):
        logger.error("Database unavailable in %s", type(context.get("view")).__name__, exc_info=exc)
        _roll_back_request()
        return _render(database_unavailable(), Response(), context)
    response = drf_exception_handler(exc, context)
    if response is None:
        logger.exception("Unhandled error in %s", type(context.get("view")).__name__)
        _roll_back_request()
        return _render(internal_error(), Response(), context)
    return _render(_framework_error(response.status_code, context), response, context)


def _framework_error(status_code: int, context) -> domain.ApplicationError:
    if status_code == 401:
        field = getattr(context.get("view"), "auth_error_field", "token")
        detail = "Token ausente, inválido ou expirado." if field == "token" else None
        return domain.NotAuthenticated(field=field, detail=detail)
    error = _BY_STATUS.get(status_code, domain.ApplicationError)()
    error.status_code = status_code
    return error


def _render(error: domain.ApplicationError, response: Response, context) -> Response:
    """The envelope for `error`, keeping the headers DRF put on `response` (Retry-After, WWW-Authenticate)."""
    response.data = error_body(error)
    response.status_code = error.status_code
    for name, value in error.headers.items():
        response[name] = value
    view, request = context.get("view"), context.get("request")
    if error.status_code == 401 and view is not None and not response.has_header("WWW-Authenticate"):
        header = view.get_authenticate_header(request)
        if header:
            response["WWW-Authenticate"] = header
    return response


def _roll_back_request() -> None:
    """An unexpected failure undoes whatever the request wrote (see EnvelopeViewMixin.dispatch)."""
    for connection in connections.all(initialized_only=True):
        if connection.in_atomic_block:
            connection.set_rollback(True)


def is_database_outage(exc: BaseException | None) -> bool:
    """The database refused, dropped or did not answer (connect or answer timeout, statement_timeout)."""
    return isinstance(exc, (OperationalError, InterfaceError))


def database_unavailable() -> domain.ServiceUnavailable:
    """The answer /api/health gives for the same outage."""
    return domain.ServiceUnavailable(field="database", detail="database indisponível.")


def internal_error() -> domain.ApplicationError:
    error = domain.ApplicationError(
        "Erro interno do servidor.", field="server", detail="Ocorreu um erro inesperado. Tente novamente."
    )
    error.status_code = 500
    return error
