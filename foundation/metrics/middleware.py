"""Counts and times every request by route pattern, method and status (no query, no I/O).

First in settings.MIDDLEWARE after SecurityMiddleware, so the time covers the other
middleware too. The route is the URL pattern that answered, written as the contract writes
paths (`/api/v1/tickets/{id}`), never the raw path: ids would make a series per ticket.
"""

import time

from foundation.metrics.instruments import request_observed
from foundation.routes import STATIC, UNMATCHED, route_label, route_of

__all__ = ["STATIC", "UNMATCHED", "RequestMetricsMiddleware", "route_label"]


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        seconds = time.perf_counter() - started
        match = request.resolver_match
        if match is not None and getattr(match.func, "metrics_exempt", False):
            return response  # Prometheus's own scrapes are not the service's traffic
        request_observed(route=route_of(request), method=request.method, status=response.status_code, seconds=seconds)
        return response
