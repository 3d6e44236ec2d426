"""Celery application; configuration comes from Django settings (CELERY_ prefix)."""

import os

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

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
