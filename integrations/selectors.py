"""Read queries on API credentials."""

import hmac

from integrations.keys import is_well_formed, key_digest
from integrations.models import ApiCredential


def credential_for_key(key: str) -> ApiCredential | None:
    """The active credential of a key, or None. A malformed key costs no query."""
    if not is_well_formed(key):
        return None
    digest = key_digest(key)
    credential = ApiCredential.objects.select_related("organization").filter(key_digest=digest, is_active=True).first()
    if credential is None or not hmac.compare_digest(credential.key_digest, digest):
        return None
    return credential
