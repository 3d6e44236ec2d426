"""gunicorn settings of the web process (the Procfile's `web`); every value can come from the environment.

With a shared cache (REDIS_URL) rate-limit counters live in Redis, so the web
server runs one process per core and then some: threads do not beat the GIL.
Without one (the embedded default) it runs a single process whose threads share
the local cache. docs/operations.md explains each variable.
"""

import multiprocessing
import os
import re

from gunicorn.glogging import Logger

shared_cache = bool(os.environ.get("REDIS_URL"))

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY") or (multiprocessing.cpu_count() * 2 + 1 if shared_cache else 1))
threads = int(os.environ.get("WEB_THREADS") or (1 if shared_cache else 8))
worker_class = "gthread" if threads > 1 else "sync"
if workers > 1 and not shared_cache:
    # Each process would keep its own rate-limit counters: a limit of 60 a minute would let 60 x workers through.
    raise RuntimeError(
        f"refusing to start {workers} web processes without a shared cache: set REDIS_URL, or WEB_CONCURRENCY=1"
    )

# A request that takes longer than this is killed (the database refuses statements past
# DB_STATEMENT_TIMEOUT_MS well before); on SIGTERM, requests in flight get this long to finish.
timeout = int(os.environ.get("WEB_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("WEB_GRACEFUL_TIMEOUT", "30"))
keepalive = 5

# The application logs one structured line per request (foundation/request_log.py), so gunicorn's
# access log is off unless WEB_ACCESS_LOG asks for it; it never has %(u)s, the HTTP Basic user,
# which is a partner's whole API key.
accesslog = "-" if os.environ.get("WEB_ACCESS_LOG", "false").lower() in ("1", "true", "yes") else None
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms'

# A signed agent-photo or attachment URL carries its credential in the path: the access log writes it without.
_SIGNED_PHOTO_PATH = re.compile(r"(/api/v1/(?:atendentes/avatar|anexos)/)[^/?\s]+")


class AccessLogger(Logger):
    """gunicorn's logger; the path of a signed photo or attachment URL is written with `{token}` for its token."""

    # Private gunicorn API: test_the_access_log_writes_a_signed_urls_token_as_a_placeholder
    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for name in ("U", "r"):
            if atoms.get(name):
                atoms[name] = _SIGNED_PHOTO_PATH.sub(r"\1{token}", atoms[name])
        return atoms


logger_class = AccessLogger

# gunicorn's runtime control socket (one path per user, $HOME/.gunicorn/gunicorn.ctl): unused here,
# and two servers of one user on one machine (web and `make bench`, tests) would share it.
control_socket_disable = True


# Metrics (foundation/metrics/directory.py): this server's processes write prometheus_client's
# multiprocess files to a directory of their own, empty at start, set before any worker loads
# the application (so not with preload_app); a worker that exits is marked dead.
def on_starting(server):
    from foundation.metrics.directory import prepare_server_directory

    prepare_server_directory("web")


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


# --- What gunicorn itself refuses, before Django sees the request -------------------------------
# A request line over limit_request_line (414), headers over their limits (431), a malformed
# request (400): answered in the API's JSON envelope, not gunicorn's HTML page (never HTML).
_GUNICORN_ERRORS = {
    400: ("Requisição inválida.", "request", "A requisição HTTP está malformada."),
    414: ("URI muito longa.", "path", "A linha da requisição excede o limite do servidor."),
    431: ("Cabeçalhos muito grandes.", "headers", "Os cabeçalhos da requisição excedem o limite do servidor."),
}


def _write_error(sock, status_int, reason, mesg):
    # Imported here: a worker has loaded the application (and Django's settings) by the time it answers.
    from gunicorn import util

    from api_framework.envelope import error_body, spaced_json_bytes
    from api_framework.exception_handler import internal_error
    from foundation.exceptions import ApplicationError

    if status_int >= 500:
        error = internal_error()
    else:
        message, field, detail = _GUNICORN_ERRORS.get(
            status_int, ("Requisição inválida.", "request", "A requisição não pôde ser processada.")
        )
        error = ApplicationError(message, field=field, detail=detail)
    error.status_code = status_int
    body = spaced_json_bytes(error_body(error))
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


def _answer_gunicorns_own_errors_in_the_envelope():
    from gunicorn import util

    # Private gunicorn API: test_the_web_servers_own_refusals_are_in_the_envelope
    util.write_error = _write_error


_answer_gunicorns_own_errors_in_the_envelope()
