"""Celery application; configuration comes from Django settings (CELERY_ prefix)."""

import functools
import os

from celery import Celery
from celery.signals import beat_init, setup_logging, task_failure, task_postrun, task_prerun, worker_init
from celery.worker.consumer import Consumer as CeleryConsumer

from foundation.logs import configure as configure_logging
from foundation.logs import task_failure_log
from foundation.metrics.worker import connect_worker_metrics

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class Consumer(CeleryConsumer):
    """The worker's broker connection, tried again every second while the broker is away.

    kombu waits 2, 4, 6 ... up to 30 s between attempts, so a worker could sit out half a
    minute of a broker that is already back; events written during the outage are due at
    once and must not wait for that (settings.CELERY_WORKER_CONSUMER).
    """

    def ensure_connected(self, conn):
        conn.ensure_connection = functools.partial(
            conn.ensure_connection, interval_start=1, interval_step=0, interval_max=1
        )
        return super().ensure_connected(conn)


# Before the app: a worker's metrics directory must be set before Django's fixup sets Django up.
connect_worker_metrics()
app = Celery("helpdesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect(dispatch_uid="helpdesk.task_db_connections_before")
@task_postrun.connect(dispatch_uid="helpdesk.task_db_connections_after")
def _database_connections_around_a_task(**kwargs) -> None:
    """What Django does around a request, around a task: a connection is kept for CONN_MAX_AGE,
    health-checked before reuse, and dropped when broken. Celery's own fixup would close every
    connection around every task, a new PostgreSQL connection per delivery
    (settings.CELERY_DB_REUSE_MAX turns that off)."""
    from django.db import close_old_connections

    close_old_connections()


@setup_logging.connect(dispatch_uid="helpdesk.logging")
def _logging_as_the_web_process(**kwargs) -> None:
    """Worker and beat log through settings.LOGGING (JSON lines or console, foundation/logs.py),
    not in Celery's own format; a receiver here also keeps Celery from taking over the root logger."""
    from django.conf import settings

    configure_logging(settings.LOGGING)


task_failure.connect(task_failure_log, dispatch_uid="helpdesk.task_failure_log")


@worker_init.connect(dispatch_uid="helpdesk.refuse_misconfigured_worker")
@beat_init.connect(dispatch_uid="helpdesk.refuse_misconfigured_beat")
def _refuse_misconfiguration(**kwargs) -> None:
    """Celery logs and ignores an exception raised by a signal receiver: exit explicitly."""
    from django.core.exceptions import ImproperlyConfigured

    from foundation.startup import refuse_misconfiguration

    try:
        refuse_misconfiguration()
    except ImproperlyConfigured as error:
        raise SystemExit(str(error)) from None
