"""Workers log as the web process does, and a failed task logs which task failed and how, never its arguments."""

import logging

import structlog
from celery.signals import setup_logging, task_failure

from integrations.tasks import deliver_webhook


def test_a_failed_task_logs_its_name_id_and_error_class_only(json_log):
    error = ValueError("corpo-secreto da mensagem")

    task_failure.send(
        sender=deliver_webhook,
        task_id="tarefa-1",
        exception=error,
        args=["argumento-secreto", 0],
        kwargs={"body": "kwarg-secreto"},
        traceback=None,
        einfo=None,
    )

    [line] = [line for line in json_log() if line["event"] == "task_failed"]
    assert line.pop("timestamp")
    assert line == {
        "event": "task_failed",
        "logger": "helpdesk.tasks",
        "level": "error",
        "task": "integrations.deliver_webhook",
        "task_id": "tarefa-1",
        "error": "ValueError",
    }


def test_the_worker_keeps_the_services_logging_instead_of_celerys(monkeypatch):
    """Celery configures logging itself unless a setup_logging receiver does; ours applies settings.LOGGING."""
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])

    answers = setup_logging.send(sender=None, loglevel=logging.INFO, logfile=None, format="", colorize=False)

    assert answers, "no setup_logging receiver: Celery would take over the root logger"
    [handler] = root.handlers
    assert isinstance(handler.formatter, structlog.stdlib.ProcessorFormatter)
