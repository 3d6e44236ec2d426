"""Application-key authentication for the partner API."""

import base64
import binascii
from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from helpdesk.models import Organization
from integrations.models import ApiCredential
from integrations.selectors import credential_for_key
from integrations.services import credential_record_use


@dataclass(frozen=True)
class PartnerClient:
    """request.user of a partner request: the credential and its organization."""

    credential: ApiCredential

    is_authenticated = True

    @property
    def organization(self) -> Organization:
        return self.credential.organization


class ApiKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer <key>` or `Authorization: Basic base64(<key>:)`."""

    def authenticate(self, request):
        header = get_authorization_header(request)
        if not header:
            return None
        key = _key_from_header(header)
        credential = credential_for_key(key) if key else None
        if credential is None:
            raise AuthenticationFailed()
        credential_record_use(credential=credential)
        return PartnerClient(credential), credential

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


def _key_from_header(header: bytes) -> str | None:
    try:
        scheme, _, value = header.decode("latin-1").partition(" ")
    except UnicodeDecodeError:
        return None
    value = value.strip()
    if scheme.lower() == "bearer":
        return value or None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return None
        key, separator, _password = decoded.partition(":")
        return key if separator else None
    return None
