"""Unicode-aware LIKE for the embedded SQLite database.

SQLite's built-in LIKE folds case for ASCII only, so `busca=instalação` would
miss "INSTALAÇÃO". SQLite lets an application replace like(); this one folds
case for all of Unicode, as PostgreSQL's UPPER() LIKE does.
"""

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def _like_regex(pattern: str, escape: str | None) -> re.Pattern:
    parts = []
    chars = iter(pattern)
    for char in chars:
        if escape is not None and char == escape:
            parts.append(re.escape(next(chars, "")))
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def unicode_like(pattern, value, escape=None):
    if pattern is None or value is None:
        return None
    return _like_regex(str(pattern), escape).fullmatch(str(value)) is not None


def install_unicode_like(sender, connection, **kwargs) -> None:
    if connection.vendor == "sqlite":
        connection.connection.create_function("like", 2, unicode_like, deterministic=True)
        connection.connection.create_function("like", 3, unicode_like, deterministic=True)
