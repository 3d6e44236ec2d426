"""A Celery worker's metrics: a directory of its own, its own /metrics port, task failures.

Every worker (its main process and its pool's children) writes to a multiprocess directory of
its own (foundation/metrics/directory.py) and serves `GET /metrics` on WORKER_METRICS_PORT behind
the same METRICS_TOKEN as the web, on WORKER_METRICS_ADDRESS (127.0.0.1 unless set). Each worker
is then a scrape target of its own, like each gunicorn server: the targets add up, and a web
server never reports a worker's counts (two web servers on one machine would both report them).
"""

import logging
import sys
import threading
from wsgiref.simple_server import WSGIRequestHandler, make_server

from celery import signals

from foundation.metrics.directory import prepare_server_directory

logger = logging.getLogger(__name__)


def connect_worker_metrics() -> None:
    """Call before the Celery app is made (config/celery.py): Django's fixup sets Django up, and so
    imports prometheus_client, in an import_modules receiver too, and receivers run in the order
    they were connected; the directory must come first."""
    signals.import_modules.connect(_prepare_directory, dispatch_uid="foundation.metrics.directory")
    signals.worker_ready.connect(_serve, dispatch_uid="foundation.metrics.serve")
    signals.worker_process_shutdown.connect(_process_gone, dispatch_uid="foundation.metrics.process_gone")
    signals.task_failure.connect(_task_failed, dispatch_uid="foundation.metrics.task_failure")


def _prepare_directory(**kwargs) -> None:
    """A worker (and beat, which sends the same signal and counts nothing) starting up."""
    if "prometheus_client" in sys.modules:
        logger.warning("prometheus_client was imported before the metrics directory was set: metrics are per process")
    prepare_server_directory("celery")


def _serve(**kwargs):
    from django.conf import settings

    if settings.METRICS_TOKEN and settings.WORKER_METRICS_PORT:
        return serve_metrics(settings.WORKER_METRICS_PORT, settings.METRICS_TOKEN, settings.WORKER_METRICS_ADDRESS)
    return None


class _QuietHandler(WSGIRequestHandler):
    timeout = 10  # a client that sends nothing does not keep a thread for long

    def log_message(self, format, *args) -> None:  # noqa: A002 (the base class's signature)
        """No line per scrape."""


def serve_metrics(port: int, token: str, address: str):
    """A thread of this process answering GET /metrics on `address` (WORKER_METRICS_ADDRESS: this machine
    only unless the operator opens it to Prometheus); None (and an error logged) when the port is taken:
    a worker without metrics still delivers webhooks."""
    from prometheus_client.exposition import ThreadingWSGIServer

    from foundation.metrics.exposition import wsgi_app

    try:
        server = make_server(address, port, wsgi_app(token), ThreadingWSGIServer, handler_class=_QuietHandler)
    except OSError:
        logger.exception("worker metrics not served: cannot listen on %s:%s", address, port)
        return None
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    logger.info("worker metrics on http://%s:%s/metrics", address, port)
    return server


def _process_gone(pid=None, **kwargs) -> None:
    """In a pool child about to exit: prometheus_client's bookkeeping for a dead process."""
    from prometheus_client import multiprocess

    from foundation.metrics.exposition import multiprocess_directory

    directory = multiprocess_directory()
    if directory and pid:
        multiprocess.mark_process_dead(pid, directory)


def _task_failed(sender=None, **kwargs) -> None:
    from foundation.metrics.instruments import task_failed

    task_failed(getattr(sender, "name", None) or "desconhecida")
