"""The route that answered a request, as the request log and the metrics name it.

The URL pattern, written as the contract writes paths (`/api/v1/tickets/{id}`), never the raw path:
a path carries ids (a metrics series per ticket) and, for agent photos, a signed token.
"""

import re
from functools import lru_cache

from django.conf import settings

UNMATCHED = "unmatched"
STATIC = "static"

_REGEX_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")
_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")
_REGEX_LEFT = re.compile(r"[()|*+?\[\]\\]")


@lru_cache(maxsize=512)
def route_label(route: str) -> str:
    """`api/v1/tickets/(?P<id>[^/]+)$` -> `/api/v1/tickets/{id}`; a catch-all pattern (the /api 404)
    has no path to show and counts as unmatched, like a path no pattern answered."""
    path = _CONVERTER.sub(r"{\1}", _REGEX_GROUP.sub(r"{\1}", route)).replace("^", "").replace("$", "")
    return UNMATCHED if _REGEX_LEFT.search(path) else "/" + path


def route_of(request) -> str:
    """The route of an answered request; `static` for WhiteNoise's files (served before URL
    resolution), `unmatched` for a path no pattern answered."""
    match = request.resolver_match
    if match is None:
        return STATIC if request.path.startswith("/" + settings.STATIC_URL.lstrip("/")) else UNMATCHED
    return route_label(match.route)
