"""Refuse to start a misconfigured process (the web server, a worker, beat).

Django runs the system checks in management commands only; gunicorn and Celery
import the project without them. A process started with an error-level check
failing (foundation.checks, integrations.checks) stops here, with the checks' own
words, instead of serving.
"""

from django.core import checks
from django.core.exceptions import ImproperlyConfigured


def refuse_misconfiguration() -> None:
    errors = [message for message in checks.run_checks() if message.is_serious() and not message.is_silenced()]
    if errors:
        raise ImproperlyConfigured(
            "refusing to start:\n" + "\n".join(f"  {error.id}: {error.msg} {error.hint or ''}" for error in errors)
        )
