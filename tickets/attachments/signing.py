"""The download link of an attachment: this service's own URL with a timestamped signature, valid
ATTACHMENT_URL_MAX_AGE (30 minutes), bound to the attachment and its organization (as the avatars').

A partner's link never opens an internal note's attachment; agents' links (the panel's list, the
admin) are signed with a salt of their own, so a partner's link cannot be turned into one.
"""

from django.conf import settings
from django.core import signing
from django.urls import reverse

from foundation.exceptions import AccessDenied
from foundation.ids import parse_uuid

_PARTNER = signing.TimestampSigner(salt="tickets.attachment")
_AGENT = signing.TimestampSigner(salt="tickets.attachment.agent")


def attachment_token(attachment_id, organization_id, *, for_agent: bool = False) -> str:
    signer = _AGENT if for_agent else _PARTNER
    return signer.sign_object({"a": str(attachment_id), "o": str(organization_id)}, compress=True)


def attachment_url(request, attachment_id, organization_id, *, for_agent: bool = False) -> str:
    token = attachment_token(attachment_id, organization_id, for_agent=for_agent)
    return request.build_absolute_uri(reverse("attachment-download-detail", kwargs={"token": token}))


def attachment_claims(token: str) -> tuple:
    """(attachment id, organization id, agents' link?) of a valid token; else 403 on `assinatura`."""
    for signer, for_agent in ((_PARTNER, False), (_AGENT, True)):
        try:
            claims = signer.unsign_object(token, max_age=settings.ATTACHMENT_URL_MAX_AGE)
        except signing.BadSignature:
            continue
        if isinstance(claims, dict):
            attachment_id, organization_id = parse_uuid(claims.get("a")), parse_uuid(claims.get("o"))
            if attachment_id and organization_id:
                return attachment_id, organization_id, for_agent
    raise AccessDenied(field="assinatura", detail="Link de anexo expirado ou inválido.")
