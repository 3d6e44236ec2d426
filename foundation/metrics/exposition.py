"""A scrape: the bearer token check and the Prometheus text of this server's processes.

In multiprocess mode (a server prepared its directory, foundation/metrics/directory.py) the
scrape adds up the files of every process of this server, live or gone; otherwise (runserver,
tests) it reads this process's own registry. Collectors passed in are read at scrape time
(the web's delivery queue gauges).
"""

import hashlib
import hmac
import os

from prometheus_client import REGISTRY, values
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector

from foundation.metrics.directory import MULTIPROC_ENV


def token_accepted(authorization: str | None, token: str) -> bool:
    """`Authorization: Bearer <token>`, compared in constant time (digests, so not even the length leaks)."""
    scheme, _, presented = (authorization or "").partition(" ")
    if not token or scheme.lower() != "bearer":
        return False
    presented_digest = hashlib.sha256(presented.strip().encode("utf-8", "surrogatepass")).digest()
    return hmac.compare_digest(presented_digest, hashlib.sha256(token.encode()).digest())


def multiprocess_directory() -> str | None:
    """This server's directory, when prometheus_client writes values to files (it decided at import)."""
    # Private prometheus_client API: test_a_scrape_adds_up_every_process_of_the_server_including_those_that_exited
    return os.environ.get(MULTIPROC_ENV) if getattr(values.ValueClass, "_multiprocess", False) else None


class _Scrape:
    """What generate_latest reads: this server's metrics, then the scrape-time collectors."""

    def __init__(self, collectors):
        self.collectors = collectors

    def collect(self):
        for collector in self.collectors:
            yield from collector.collect()


def render(accept: str = "", *scrape_time_collectors) -> tuple[bytes, str]:
    """The body and Content-Type of a scrape, in the format the Accept header asks for."""
    directory = multiprocess_directory()
    source = MultiProcessCollector(None, path=directory) if directory else REGISTRY
    encoder, content_type = choose_encoder(accept)
    return encoder(_Scrape([source, *scrape_time_collectors])), content_type


def wsgi_app(token: str):
    """GET /metrics behind the token, for a process that has no Django view to answer it (a Celery worker)."""

    def app(environ, start_response):
        if environ.get("PATH_INFO") != "/metrics":
            return _plain(start_response, "404 Not Found")
        if environ.get("REQUEST_METHOD") != "GET":
            return _plain(start_response, "405 Method Not Allowed", [("Allow", "GET")])
        if not token_accepted(environ.get("HTTP_AUTHORIZATION"), token):
            return _plain(start_response, "401 Unauthorized", [("WWW-Authenticate", 'Bearer realm="metrics"')])
        body, content_type = render(environ.get("HTTP_ACCEPT", ""))
        start_response("200 OK", [("Content-Type", content_type), ("Cache-Control", "no-store")])
        return [body]

    return app


def _plain(start_response, status: str, headers=()) -> list[bytes]:
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), *headers])
    return [status.encode() + b"\n"]
