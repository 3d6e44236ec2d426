"""The service's counters and histograms (docs/operations.md lists each one).

Importing this imports prometheus_client, which picks per-process or multiprocess values
once, from PROMETHEUS_MULTIPROC_DIR: a server points that at its own directory first
(foundation/metrics/directory.py). Every metric has labels, so a process writes a file only
for what it actually counts.
"""

import functools
import logging

from prometheus_client import Counter, Histogram

logger = logging.getLogger(__name__)

# Up to WEB_TIMEOUT (30 s), when gunicorn kills the request.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

http_requests = Counter(
    "helpdesk_http_requests",
    "HTTP requests answered, by route pattern, method and status code.",
    ["route", "method", "status"],
)
http_request_duration = Histogram(
    "helpdesk_http_request_duration_seconds",
    "Time from the request reaching Django's middleware to its response, by route pattern and method.",
    ["route", "method"],
    buckets=REQUEST_BUCKETS,
)
rate_limit_rejections = Counter(
    "helpdesk_rate_limit_rejections",
    "Requests refused with 429 by a rate limit, by limit (the RateLimit-Policy name).",
    ["limit"],
)
celery_task_failures = Counter(
    "helpdesk_celery_task_failures",
    "Celery tasks that raised, by task name.",
    ["task"],
)


def never_fails(record):
    """A metric that cannot be written (a missing directory, a full disk) is logged, never the
    request's or the task's failure."""

    @functools.wraps(record)
    def guarded(*args, **kwargs) -> None:
        try:
            record(*args, **kwargs)
        except Exception:
            logger.warning("metric not recorded by %s", record.__name__, exc_info=True)

    return guarded


# What clients may send as a method is unbounded; a label must not be.
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_children: dict[tuple[str, str, int], tuple] = {}


@never_fails
def request_observed(*, route: str, method: str, status: int, seconds: float) -> None:
    """One answered request. The labelled children are looked up once per combination."""
    method = method if method in _METHODS else "other"
    key = (route, method, status)
    children = _children.get(key)
    if children is None:
        children = (http_requests.labels(route, method, str(status)), http_request_duration.labels(route, method))
        _children[key] = children
    children[0].inc()
    children[1].observe(seconds)


@never_fails
def rate_limit_rejected(limit: str) -> None:
    rate_limit_rejections.labels(limit or "outro").inc()


@never_fails
def task_failed(task: str) -> None:
    celery_task_failures.labels(task).inc()


ticket_count_corrections = Counter(
    "helpdesk_ticket_count_corrections",
    "Tickets the periodic recount found missing from (or extra in) the organizations' ticket counters.",
    ["direction"],
)


search_totals = Counter(
    "helpdesk_ticket_search_totals",
    "Totals of ticket searches (busca): kept from an earlier count (kept) or counted (counted).",
    ["source"],
)


@never_fails
def search_totals_read(*, kept: bool) -> None:
    search_totals.labels("kept" if kept else "counted").inc()


@never_fails
def ticket_counts_corrected(*, added: int, removed: int) -> None:
    if added:
        ticket_count_corrections.labels("acrescentados").inc(added)
    if removed:
        ticket_count_corrections.labels("retirados").inc(removed)
