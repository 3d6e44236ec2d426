"""Application keys: `hdk_live_` + 34 random base62 characters + 6-character CRC32 checksum.

The checksum (as in GitHub's token format) lets a mistyped or made-up key be
refused without touching the database, and makes leaked keys easy to scan for.
"""

import hashlib
import re
import secrets
import string
import zlib

KEY_PREFIX = "hdk_live_"
RANDOM_LENGTH = 34
CHECKSUM_LENGTH = 6
DISPLAY_PREFIX_LENGTH = 12
BASE62 = string.digits + string.ascii_letters
_KEY_RE = re.compile(rf"^{KEY_PREFIX}[0-9A-Za-z]{{{RANDOM_LENGTH + CHECKSUM_LENGTH}}}$")


def _base62(number: int, width: int) -> str:
    digits = []
    while number:
        number, remainder = divmod(number, 62)
        digits.append(BASE62[remainder])
    return "".join(reversed(digits)).rjust(width, "0")


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode("ascii")), CHECKSUM_LENGTH)


def generate_key() -> str:
    body = KEY_PREFIX + "".join(secrets.choice(BASE62) for _ in range(RANDOM_LENGTH))
    return body + _checksum(body)


def is_well_formed(key: str) -> bool:
    if not _KEY_RE.match(key):
        return False
    body, checksum = key[:-CHECKSUM_LENGTH], key[-CHECKSUM_LENGTH:]
    return secrets.compare_digest(_checksum(body), checksum)


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("ascii")).hexdigest()


def display_prefix(key: str) -> str:
    return key[:DISPLAY_PREFIX_LENGTH]
