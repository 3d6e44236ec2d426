"""Counts and times every request by route pattern, method and status (no query, no I/O).

First in settings.MIDDLEWARE after SecurityMiddleware, so the time covers the other
middleware too. The route is the URL pattern that answered, written as the contract writes
paths (`/api/v1/tickets/{id}`), never the raw path: ids would make a series per ticket.
"""

import re
import time
from functools import lru_cache

from django.conf import settings

from helpdesk.metrics.instruments import request_observed

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


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.static_prefix = "/" + settings.STATIC_URL.lstrip("/")

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        seconds = time.perf_counter() - started
        match = request.resolver_match
        if match is None:
            route = STATIC if request.path.startswith(self.static_prefix) else UNMATCHED
        elif getattr(match.func, "metrics_exempt", False):
            return response  # Prometheus's own scrapes are not the service's traffic
        else:
            route = route_label(match.route)
        request_observed(route=route, method=request.method, status=response.status_code, seconds=seconds)
        return response
