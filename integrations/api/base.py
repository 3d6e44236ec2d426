"""Base view of the partner API: application key, per-credential rate limit,
rate-limit headers, and Idempotency-Key replays for POST."""

import json

from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from helpdesk.api.views import EnvelopeAPIView, raw_body
from integrations.authentication import ApiKeyAuthentication
from integrations.idempotency import HEADER, Replay, fingerprint, idempotency_claim, idempotency_complete
from integrations.ratelimit import partner_rate_limit


class PartnerAPIView(EnvelopeAPIView):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    auth_error_field = "api_key"

    @property
    def organization(self):
        return self.request.user.organization

    def rate_limit(self, request) -> None:
        partner_rate_limit(request)

    def initial(self, request, *args, **kwargs):
        self._idempotency = None
        super().initial(request, *args, **kwargs)
        key = request.headers.get(HEADER)
        if request.method == "POST" and key is not None:
            self._idempotency = idempotency_claim(
                credential=request.auth,
                key=key,
                request_fingerprint=fingerprint(request.method, request.path, raw_body(request)),
            )

            if isinstance(self._idempotency, Replay):
                raise _ReplayStored(self._idempotency)

    def handle_exception(self, exc):
        if isinstance(exc, _ReplayStored):
            response = Response(exc.replay.body, status=exc.replay.status_code)
            response.is_envelope = True
            response["Idempotent-Replayed"] = "true"
            return response
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        idempotency = getattr(self, "_idempotency", None)
        if idempotency is not None and not isinstance(idempotency, Replay):
            idempotency_complete(record=idempotency, status_code=response.status_code, body=_final_body(response))
        response = super().finalize_response(request, response, *args, **kwargs)
        state = getattr(request, "rate_limit_state", None)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return response


class _ReplayStored(Exception):
    """Short-circuits the handler: the stored first response is the answer."""

    def __init__(self, replay: Replay):
        self.replay = replay


def _final_body(response) -> dict:
    """The envelope exactly as the renderer will write it."""
    body = response.data
    if response.status_code < 400 and not getattr(response, "is_envelope", False):
        body = {"success": True, "message": getattr(response, "message", ""), "data": body, "errors": []}
    return json.loads(JSONRenderer().render(body))
