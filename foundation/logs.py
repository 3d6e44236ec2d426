"""Structured logs: structlog in front of the standard library's logging, one format for both.

Every line, from structlog or from `logging.getLogger(...)` (Django, Celery, our modules), goes
through one handler and one formatter: JSON lines in production, readable lines under `make run`
(settings.LOG_FORMAT). Lines logged while a request is served carry its `request_id`
(foundation.request_log binds it in structlog's context variables).

Tracebacks are rendered as plain text: structlog's dict tracebacks (and rich's) can include the
local variables of each frame, which may hold a key, a token or a request body.
"""

import logging.config

import structlog

from foundation.routes import route_of

# Added to every line, from structlog or from the standard library.
_SHARED_PROCESSORS = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def formatter(log_format: str = "json") -> structlog.stdlib.ProcessorFormatter:
    """The logging.Formatter of settings.LOGGING: `json` (one object a line) or `console`."""
    if log_format == "console":
        rendering = [structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)]
    elif log_format == "json":
        rendering = [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        raise ValueError(f"LOG_FORMAT must be json or console, not {log_format!r}")
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_SHARED_PROCESSORS,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
    )


def configure(logging_settings: dict) -> None:
    """settings.LOGGING_CONFIG: the standard library's configuration, and structlog handing its
    events to it (so they share its handlers, levels and formatter)."""
    logging.config.dictConfig(logging_settings)
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *_SHARED_PROCESSORS,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


class RouteInsteadOfPath(logging.Filter):
    """django.request writes `<reason>: <path>` for an error answer; a path can carry a signed token
    (an agent photo's URL), so the line gets the route pattern instead, as the request line does."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        if request is not None and isinstance(record.args, tuple):
            path = request.path
            paths = {path, path.encode("unicode_escape").decode("ascii")}  # Django escapes what it logs
            record.args = tuple(route_of(request) if arg in paths else arg for arg in record.args)
        return True


def task_failure_log(sender=None, task_id=None, exception=None, **kwargs) -> None:
    """Celery's task_failure signal: which task failed and how, never its arguments (Celery's own
    error line, with the traceback, follows from celery.app.trace)."""
    structlog.get_logger("helpdesk.tasks").error(
        "task_failed",
        task=getattr(sender, "name", None),
        task_id=task_id,
        error=type(exception).__name__,
    )
