"""Base viewset of the partner API: application key, per-credential rate limit,
rate-limit headers, and Idempotency-Key replays for POST (and the PATCHes a viewset names); the replays'
mixin serves the panel's bulk edit too."""

import json

from django.conf import settings
from django.db import connection, transaction
from django.http import HttpResponse
from rest_framework import exceptions as drf
from rest_framework.permissions import IsAuthenticated

from api_framework.base import EnvelopeViewSet, raw_body
from api_framework.envelope import json_bytes
from foundation.ratelimit import client_address, client_ip, count_request, in_flight_acquire, in_flight_release
from integrations.authentication import ApiKeyAuthentication
from integrations.idempotency import (
    HEADER,
    Replay,
    fingerprint,
    idempotency_claim,
    idempotency_complete,
    multipart_fingerprint,
)
from integrations.scopes import Scope
from integrations.services import credential_authorize
from tickets.attachments.uploads import upload_sha256


def _credential_key(group, request) -> str:
    return str(request.auth.pk)


class IdempotencyKeyMixin:
    """Idempotency-Key replays (integrations.idempotency): the first answer to a request sent with a key is kept
    and replayed for its retries. Keys belong to `idempotency_owner` (the partner's credential, the panel's user);
    the requests that take one are `takes_idempotency_key`'s."""

    def idempotency_owner(self, request) -> dict:
        raise NotImplementedError

    def takes_idempotency_key(self, request) -> bool:
        raise NotImplementedError

    def idempotency_begin(self, request) -> None:
        """After authentication: claim the key, or answer the stored response (raised, for handle_exception)."""
        self._idempotency = None
        key = request.headers.get(HEADER)
        # A method the route does not serve (no action) is the 405 of every request: it claims no key.
        if self.action is not None and key is not None and self.takes_idempotency_key(request):
            self._idempotency = idempotency_claim(
                **self.idempotency_owner(request), key=key, request_fingerprint=self.request_fingerprint(request)
            )
            if isinstance(self._idempotency, Replay):
                raise _ReplayStored(self._idempotency)

    def request_fingerprint(self, request) -> str:
        """What makes two requests with one Idempotency-Key the same request: the path with its query string
        (`incluir` shapes the answer), and the JSON body, or an upload's fields and files (each file by its
        SHA-256, computed while it streamed). An action without fields (`takes_body=False`) reads no body:
        whatever came with it (nothing, `{}`) is the same request."""
        if self.action in self.upload_actions:
            self.read_upload(request)
            fields = {name: request.data.getlist(name) for name in request.data if name not in request.FILES}
            files = [
                (field, upload.name, upload.size, upload_sha256(upload))
                for field, uploads in request.FILES.lists()
                for upload in uploads
            ]
            return multipart_fingerprint(request.method, request.get_full_path(), fields, files)
        if not self.takes_body:
            return fingerprint(request.method, request.get_full_path(), b"")
        return fingerprint(request.method, request.get_full_path(), raw_body(request))

    def read_upload(self, request) -> None:
        """Upload actions: check what can be checked before the body, then read it (streamed)."""
        raise NotImplementedError

    def handle_exception(self, exc):
        if isinstance(exc, _ReplayStored):
            # The stored answer is the whole envelope already: written as it is, never wrapped again.
            body = json_bytes(exc.replay.body)
            response = HttpResponse(body, status=exc.replay.status_code, content_type="application/json")
            response["Idempotent-Replayed"] = "true"
            return response
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        idempotency = getattr(self, "_idempotency", None)
        # A rolled-back request takes its claim with it: a retry runs again.
        # An upload runs outside the request's transaction (EnvelopeViewMixin.streams_upload): its claim
        # was committed, and a 5xx answer deletes it (idempotency_complete).
        rolled_back = connection.in_atomic_block and transaction.get_rollback()
        response = super().finalize_response(request, response, *args, **kwargs)
        if idempotency is not None and not isinstance(idempotency, Replay) and not rolled_back:
            # What is stored is what is sent: the answer rendered now (Django then sends it as it is).
            body = json.loads(response.render().content)
            idempotency_complete(record=idempotency, status_code=response.status_code, body=body)
        return response


class PartnerViewSet(IdempotencyKeyMixin, EnvelopeViewSet):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    auth_error_field = "api_key"
    # The scope each action needs (integrations.scopes); an action missing here is refused to scoped keys.
    scopes: dict[str, Scope] = {}
    # PATCH actions that take Idempotency-Key as every POST does (a tags change: its answer is kept too).
    idempotent_patches: frozenset[str] = frozenset()

    @property
    def organization(self):
        return self.request.user.organization

    def rate_limit(self, request) -> None:
        # Past the limit count_request raises RateLimited, which carries the same headers.
        request.rate_limit_state = count_request(
            request, group="partner-api", rate=settings.PARTNER_RATE_LIMIT, key=_credential_key, policy="parceiro"
        )

    def idempotency_owner(self, request) -> dict:
        return {"credential": request.auth}

    def takes_idempotency_key(self, request) -> bool:
        return request.method == "POST" or (request.method == "PATCH" and self.action in self.idempotent_patches)

    def initial(self, request, *args, **kwargs):
        self._idempotency = None
        self._in_flight = None
        try:
            super().initial(request, *args, **kwargs)
        except (drf.NotAuthenticated, drf.AuthenticationFailed):
            # No valid key: counted per client address, so keys cannot be guessed at full speed.
            count_request(
                request,
                group="partner-unauthenticated",
                rate=settings.PARTNER_UNAUTHENTICATED_RATE_LIMIT,
                key=client_address,
                policy="sem-credencial",
            )
            raise
        if self.action is not None:  # None: a method the route does not serve, answered 405 by the handler
            credential_authorize(
                credential=request.auth, scope=self.scopes.get(self.action), address=client_ip(request)
            )
        self._in_flight = in_flight_acquire(self.organization.pk)
        self.idempotency_begin(request)

    def finalize_response(self, request, response, *args, **kwargs):
        in_flight_release(getattr(self, "_in_flight", None))
        self._in_flight = None
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
