"""The one exception handler: every error of every API becomes an envelope."""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import connections
from django.http import Http404
from django_ratelimit.exceptions import Ratelimited
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.settings import api_settings

from helpdesk import exceptions as domain

logger = logging.getLogger(__name__)

VALIDATION_MESSAGE = "Erro de validação"


def error_payload(error: domain.ApplicationError) -> dict:
    return {
        "success": False,
        "message": error.message,
        "status": error.status_code,
        "data": None,
        "errors": {"field": error.field, "message": error.detail},
    }


def validation_payload(errors: dict[str, list[str]]) -> dict:
    return {"success": False, "message": VALIDATION_MESSAGE, "errors": errors}


def flatten_validation_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail to {"solicitante.nome": [...]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key == api_settings.NON_FIELD_ERRORS_KEY:
                name = prefix or "body"
            else:
                name = f"{prefix}.{key}" if prefix else str(key)
            for field, messages in flatten_validation_errors(value, name).items():
                flat.setdefault(field, []).extend(messages)
    elif isinstance(detail, list) and any(isinstance(item, (dict, list)) for item in detail):
        for index, value in enumerate(detail):
            if value:
                flat.update(flatten_validation_errors(value, f"{prefix}.{index}" if prefix else str(index)))
    elif isinstance(detail, list):
        flat[prefix or "body"] = [_printable(item) for item in detail]
    else:
        flat[prefix or "body"] = [_printable(detail)]
    return flat


def _printable(message) -> str:
    """Messages may echo the input; a lone surrogate in it must not break the UTF-8 response."""
    return str(message).encode("utf-8", "backslashreplace").decode("utf-8")


def _as_domain_error(exc, view) -> domain.ApplicationError:
    if isinstance(exc, domain.ApplicationError):
        return exc
    if isinstance(exc, Ratelimited):
        return domain.RateLimited()
    if isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
        field = getattr(view, "auth_error_field", "token")
        error = domain.NotAuthenticated(field=field)
        if field == "token":
            error.detail = "Token ausente, inválido ou expirado."
        return error
    if isinstance(exc, (drf.PermissionDenied, DjangoPermissionDenied)):
        return domain.AccessDenied()
    if isinstance(exc, (drf.NotFound, Http404)):
        return domain.NotFound()
    if isinstance(exc, drf.MethodNotAllowed):
        return domain.MethodNotAllowed()
    if isinstance(exc, drf.UnsupportedMediaType):
        return domain.UnsupportedMediaType()
    if isinstance(exc, drf.ParseError):
        return domain.BadRequest("JSON inválido.", field="body", detail="O corpo da requisição não é um JSON válido.")
    if isinstance(exc, drf.Throttled):
        return domain.RateLimited()
    if isinstance(exc, drf.APIException):
        error = domain.ApplicationError()
        error.status_code = exc.status_code
        return error
    raise exc


def envelope_exception_handler(exc, context):
    view = context.get("view")
    if isinstance(exc, drf.ValidationError):
        return Response(validation_payload(flatten_validation_errors(exc.detail)), status=422)
    if isinstance(exc, domain.ValidationFailed):
        return Response(validation_payload(exc.errors), status=422)
    try:
        error = _as_domain_error(exc, view)
    except Exception:
        logger.exception("Unhandled error in %s", type(view).__name__ if view else "API")
        error = internal_error()
        _roll_back_request()
    response = Response(error_payload(error), status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    if error.status_code == 401:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


def _roll_back_request() -> None:
    """An unexpected failure undoes whatever the request wrote (see EnvelopeAPIView.dispatch).

    Domain errors need no rollback: services check before they write."""
    for connection in connections.all(initialized_only=True):
        if connection.in_atomic_block:
            connection.set_rollback(True)


def internal_error() -> domain.ApplicationError:
    error = domain.ApplicationError(
        "Erro interno do servidor.", field="server", detail="Ocorreu um erro inesperado. Tente novamente."
    )
    error.status_code = 500
    return error
