"""The request log: a request id for every request, and one line per request once it is answered."""

import re
import time
import uuid

import structlog
from django.utils.functional import SimpleLazyObject, empty

from foundation.routes import route_of

logger = structlog.get_logger("helpdesk.requests")

REQUEST_ID_HEADER = "X-Request-ID"
# A caller's id is kept only when it cannot break a log line or smuggle anything into one.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def request_id_of(request) -> str:
    """The caller's X-Request-ID when it is a sane value, else a new one."""
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if _SANE_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex


def caller_of(request) -> dict:
    """Who made the request, from what authentication already loaded: no query is made here.

    DRF sets request.user on this (Django) request when a view authenticates: a PartnerClient
    (integrations.authentication) for a partner key, a User for a panel token. The admin's user
    comes from AuthenticationMiddleware's lazy object, read only if the request already loaded it.
    """
    user = request.__dict__.get("user")
    if isinstance(user, SimpleLazyObject):
        # Private Django API: test_the_admin_answers_with_a_request_id_and_logs_its_user
        user = None if user._wrapped is empty else user._wrapped
    if not getattr(user, "is_authenticated", False):
        return {}
    credential = getattr(user, "credential", None)
    if credential is not None:
        return {"organization_id": str(credential.organization_id), "credential_prefix": credential.key_prefix}
    organization_id = getattr(user, "organization_id", None)
    return {"organization_id": str(organization_id) if organization_id else None, "user_id": str(user.pk)}


class RequestLogMiddleware:
    """Binds the request id to every line logged while the request is served, echoes it in the
    `X-Request-ID` response header, and logs one `request` line with the route, status, duration
    and caller. Never the path, the query string, a header or the body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        request_id = request_id_of(request)
        # Unbound when the response is closed (forget_request): Django logs an error answer after
        # every middleware has returned, and that line belongs to this request too.
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        logger.info(
            "request",
            method=request.method,
            route=route_of(request),
            status=response.status_code,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
            **caller_of(request),
        )
        return response


def forget_request(**kwargs) -> None:
    """request_finished: lines logged after the response is closed belong to no request."""
    structlog.contextvars.clear_contextvars()
