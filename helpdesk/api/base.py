"""What every API view shares: JSON only, the rate limit, the body rule, one transaction per write."""

from django.core.exceptions import RequestDataTooBig
from django.db import transaction
from rest_framework import viewsets
from rest_framework.permissions import SAFE_METHODS
from rest_framework.views import APIView

from helpdesk import exceptions as domain
from helpdesk.api.renderers import JSONOnlyNegotiation


def raw_body(request) -> bytes:
    """The request body, refused past the 1 MiB limit (Django raises before reading more)."""
    try:
        return request._request.body
    except RequestDataTooBig:
        raise domain.PayloadTooLarge()


class EnvelopeViewMixin:
    content_negotiation_class = JSONOnlyNegotiation
    # POST and PATCH handlers read a JSON object: an empty body is malformed JSON (400), not {}.
    # Actions without fields say `@action(..., takes_body=False)`.
    takes_body = True

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication, permissions
        self.rate_limit(request)
        has_handler = hasattr(self, request.method.lower())
        if self.takes_body and has_handler and request.method in ("POST", "PATCH") and not raw_body(request):
            raise domain.BadRequest("JSON inválido.", field="body", detail="O corpo da requisição está vazio.")

    def rate_limit(self, request) -> None:
        """Counts the request against its limit; raises RateLimited past it."""

    def dispatch(self, request, *args, **kwargs):
        # A write request is one transaction, so a failure after a service
        # committed its part leaves nothing behind for a retry to duplicate.
        # Reads stay outside: on SQLite a transaction takes the write lock.
        if request.method in SAFE_METHODS:
            return super().dispatch(request, *args, **kwargs)
        with transaction.atomic():
            return super().dispatch(request, *args, **kwargs)


# Docstrings of API view classes are the OpenAPI operations' descriptions; these bases have none.
class EnvelopeAPIView(EnvelopeViewMixin, APIView):
    pass


class EnvelopeViewSet(EnvelopeViewMixin, viewsets.ViewSet):
    # Each action parses, calls one service or selector, and renders.
    lookup_field = "id"
    lookup_value_regex = "[^/]+"
