"""What every API view shares: JSON only, the rate limit, the body rule, one transaction per write."""

import logging

from django.core.exceptions import RequestDataTooBig
from django.db import IntegrityError, transaction
from rest_framework import viewsets
from rest_framework.permissions import SAFE_METHODS
from rest_framework.views import APIView

from api_framework.renderers import JSONOnlyNegotiation
from foundation import exceptions as domain

logger = logging.getLogger(__name__)


def raw_body(request) -> bytes:
    """The request body, refused past the 1 MiB limit (Django raises before reading more)."""
    try:
        return request.body  # DRF's Request answers with its HttpRequest's attributes
    except RequestDataTooBig:
        raise domain.PayloadTooLarge()


class EnvelopeViewMixin:
    content_negotiation_class = JSONOnlyNegotiation
    # No OPTIONS: DRF's metadata answer is English docstrings in a bare 200. OPTIONS is a 405 with Allow.
    http_method_names = ["get", "post", "put", "patch", "delete", "head"]
    # POST and PATCH handlers read a JSON object: an empty body is malformed JSON (400), not {}.
    # Actions without fields say `@action(..., takes_body=False)`.
    takes_body = True
    # Actions that take multipart/form-data uploads (tickets.attachments.uploads): such a request is
    # read, in chunks to temporary files, before any transaction begins, and its handler opens its own.
    upload_actions: frozenset[str] = frozenset()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication, permissions
        self.rate_limit(request)
        has_handler = hasattr(self, request.method.lower())
        # Private DRF API: test_the_json_body_limit_does_not_apply_to_uploads
        reads_json = self.takes_body and has_handler and not self.streams_upload(request._request)
        if reads_json and request.method in ("POST", "PATCH") and not raw_body(request):
            raise domain.BadRequest("JSON inválido.", field="body", detail="O corpo da requisição está vazio.")

    def rate_limit(self, request) -> None:
        """Counts the request against its limit; raises RateLimited past it."""

    def dispatch(self, request, *args, **kwargs):
        # A write request is one transaction, so a failure after a service
        # committed its part leaves nothing behind for a retry to duplicate.
        # Reads stay outside: on SQLite a transaction takes the write lock.
        if request.method in SAFE_METHODS or self.streams_upload(request):
            return super().dispatch(request, *args, **kwargs)
        # A write that loses a race on a unique constraint (two creates with one new
        # external_id) runs once more, in a new transaction, and then sees the winner's row.
        self.retry_on_conflict = True
        try:
            with transaction.atomic():
                return super().dispatch(request, *args, **kwargs)
        except IntegrityError:
            logger.info("write conflict on %s %s; running the request again", request.method, request.path)
        self.retry_on_conflict = False
        with transaction.atomic():
            return super().dispatch(request, *args, **kwargs)

    def streams_upload(self, request) -> bool:
        """An upload is not held in the request's transaction: on SQLite that would hold the write lock,
        and on PostgreSQL the change feeds' horizon, for as long as a slow client takes to send its file."""
        action = getattr(self, "action_map", {}).get(request.method.lower())
        return action in self.upload_actions and request.content_type == "multipart/form-data"

    def handle_exception(self, exc):
        if isinstance(exc, IntegrityError) and getattr(self, "retry_on_conflict", False):
            raise exc  # out of this transaction, to dispatch's second run
        return super().handle_exception(exc)


# OpenAPI descriptions come from the docs module beside each view module, never from docstrings (EnvelopeAutoSchema).
class EnvelopeAPIView(EnvelopeViewMixin, APIView):
    pass


class EnvelopeViewSet(EnvelopeViewMixin, viewsets.ViewSet):
    # Each action parses, calls one service or selector, and renders.
    lookup_field = "id"
    lookup_value_regex = "[^/]+"
