"""Unicode-aware LIKE for the embedded SQLite database, in linear time.

SQLite's built-in LIKE folds case for ASCII only, so `busca=instalação` would
miss "INSTALAÇÃO". SQLite lets an application replace like(); this one folds
case for all of Unicode (str.casefold), as PostgreSQL's UPPER() LIKE does.

No regular expression: a pattern is split on `%` and its pieces are found left
to right with str.find, so a crafted search costs time linear in the value per
piece (a regex could backtrack for seconds per row on a pattern like
`%a%a%a%a%b`). A pattern with an unescaped `_` (Django's lookups escape it)
uses the two-pointer wildcard match, which is bounded by len(value) * len(pattern).
"""

from functools import lru_cache

_ANY, _ONE = object(), object()


def _tokens(pattern: str, escape: str | None) -> list:
    tokens: list = []
    chars = iter(pattern)
    for char in chars:
        if escape is not None and char == escape:
            tokens.append(next(chars, ""))
        elif char == "%":
            tokens.append(_ANY)
        elif char == "_":
            tokens.append(_ONE)
        else:
            tokens.append(char)
    return tokens


@lru_cache(maxsize=256)
def _matcher(pattern: str, escape: str | None):
    tokens = _tokens(pattern, escape)
    if _ONE in tokens:
        folded = [token if token in (_ANY, _ONE) else token.casefold() for token in tokens]
        return lambda value: _wildcard(folded, list(value.casefold()))
    pieces: list[str] = [""]
    for token in tokens:
        if token is _ANY:
            pieces.append("")
        else:
            pieces[-1] += token
    return _pieces_matcher([piece.casefold() for piece in pieces])


def _pieces_matcher(pieces: list[str]):
    """Pieces that were separated by `%`: the first is a prefix, the last a suffix, the rest in order."""
    if len(pieces) == 1:
        return lambda value: value.casefold() == pieces[0]
    first, middle, last = pieces[0], pieces[1:-1], pieces[-1]

    def match(value: str) -> bool:
        value = value.casefold()
        if len(value) < len(first) + len(last) or not value.startswith(first) or not value.endswith(last):
            return False
        position, end = len(first), len(value) - len(last)
        for piece in middle:
            found = value.find(piece, position, end)
            if found < 0:
                return False
            position = found + len(piece)
        return True

    return match


def _wildcard(tokens: list, value: list) -> bool:
    """`%` and `_` over characters: the classic two-pointer match with one backtrack point."""
    t = v = 0
    star, star_value = -1, 0
    while v < len(value):
        if t < len(tokens) and (tokens[t] is _ONE or tokens[t] == value[v]):
            t, v = t + 1, v + 1
        elif t < len(tokens) and tokens[t] is _ANY:
            star, star_value, t = t, v, t + 1
        elif star >= 0:
            t, star_value = star + 1, star_value + 1
            v = star_value
        else:
            return False
    while t < len(tokens) and tokens[t] is _ANY:
        t += 1
    return t == len(tokens)


def unicode_like(pattern, value, escape=None):
    if pattern is None or value is None:
        return None
    return _matcher(str(pattern), escape)(str(value))


def install_unicode_like(sender, connection, **kwargs) -> None:
    if connection.vendor == "sqlite":
        connection.connection.create_function("like", 2, unicode_like, deterministic=True)
        connection.connection.create_function("like", 3, unicode_like, deterministic=True)
