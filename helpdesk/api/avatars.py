"""Avatar URLs: a timestamped signature stands in for authentication, valid ~30 minutes."""

import mimetypes

from django.conf import settings
from django.core import signing
from django.http import FileResponse
from django.urls import reverse
from rest_framework.permissions import AllowAny

from api_framework.base import EnvelopeViewSet
from foundation.exceptions import AccessDenied, NotFound
from helpdesk.api.avatars_docs import avatar_docs
from helpdesk.selectors import agent_avatar_for_link

_signer = signing.TimestampSigner(salt="helpdesk.avatar")


def avatar_url(request, agent_id, avatar_name: str) -> str | None:
    if not avatar_name:
        return None
    token = _signer.sign_object({"a": str(agent_id), "n": avatar_name}, compress=True)
    return request.build_absolute_uri(reverse("agent-avatar-detail", kwargs={"token": token}))


@avatar_docs
class AvatarViewSet(EnvelopeViewSet):
    """Serves the file behind a signed avatar URL; the signature is the credential."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    lookup_field = "token"

    def retrieve(self, request, token: str):
        try:
            claims = _signer.unsign_object(token, max_age=settings.AVATAR_URL_MAX_AGE)
        except signing.BadSignature:
            raise AccessDenied(field="assinatura", detail="URL de avatar expirada ou inválida.")
        agent = agent_avatar_for_link(agent_id=claims.get("a"), avatar_name=claims.get("n"))
        if agent is None:
            raise NotFound("Avatar não encontrado.", field="avatar", detail="O atendente não tem esta foto.")
        content_type, _ = mimetypes.guess_type(agent.avatar.name)
        if not (content_type or "").startswith("image/"):
            content_type = "application/octet-stream"
        response = FileResponse(agent.avatar.open("rb"), content_type=content_type)
        response["Cache-Control"] = "private, max-age=300"
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'"
        return response
