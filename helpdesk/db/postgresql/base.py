"""Django's PostgreSQL backend, with health checks that a busy connection does not pay for.

CONN_HEALTH_CHECKS sends a `SELECT 1` before the first query of every request
(and of every Celery task): on a loaded server, one statement in five. A
connection that finished a request or task less than DB_HEALTH_CHECK_GRACE
seconds ago (default 5) is not pinged; one that sat idle longer, where a
restarted or failed-over server shows up, still is. A failure inside the
grace is caught like any database error, and the connection is dropped when
the request ends.
"""

import time

from django.conf import settings
from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    _used_at = float("-inf")

    def close_if_unusable_or_obsolete(self):
        # Django calls this when a request (or task) starts and when it ends; only at the end
        # has the connection been used (and health-checked) since the last call.
        used = self.health_check_done and not self.errors_occurred
        super().close_if_unusable_or_obsolete()
        if used and self.connection is not None:
            self._used_at = time.monotonic()

    def close_if_health_check_failed(self):
        grace = settings.DB_HEALTH_CHECK_GRACE
        if self.connection is not None and not self.health_check_done and time.monotonic() - self._used_at < grace:
            self.health_check_done = True
            return
        super().close_if_health_check_failed()
