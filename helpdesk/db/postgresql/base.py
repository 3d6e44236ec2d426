"""Django's PostgreSQL backend, with health checks that a busy connection does not pay
for, and a bound on how long the web process waits for the server.

CONN_HEALTH_CHECKS sends a `SELECT 1` before the first query of every request
(and of every Celery task): on a loaded server, one statement in five. A
connection that finished a request or task less than DB_HEALTH_CHECK_GRACE
seconds ago (default 5) is not pinged; one that sat idle longer, where a
restarted or failed-over server shows up, still is. A failure inside the
grace is caught like any database error, and the connection is dropped when
the request ends.

`statement_timeout` is enforced by the server, so a server that is frozen or
behind a dropped network never enforces it, and libpq would wait for its
answer forever. With `ANSWER_TIMEOUT` in the database settings (the web
process sets it, see config/settings.py) the client gives up after that many
seconds, closes the connection and raises OperationalError, which the API
answers with a 503.
"""

import time

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base
from psycopg.errors import _WaitTimeout


class BoundedConnection(psycopg.Connection):
    """A psycopg connection whose every wait for the server ends after `answer_timeout` seconds."""

    answer_timeout: float | None = None

    def wait(self, gen, interval=0.1, timeout=None):
        try:
            return super().wait(gen, interval=interval, timeout=timeout or self.answer_timeout)
        except _WaitTimeout:
            # The server may still be running the statement: the connection is in an unknown state.
            self.close()
            raise psycopg.OperationalError(
                f"the database server did not answer within {timeout or self.answer_timeout} s"
            ) from None


class _Psycopg:
    """The psycopg module as Django's backend sees it, connecting with BoundedConnection."""

    connect = staticmethod(BoundedConnection.connect)

    def __getattr__(self, name):
        return getattr(psycopg, name)


class DatabaseWrapper(base.DatabaseWrapper):
    Database = _Psycopg()
    _used_at = float("-inf")

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        if isinstance(connection, BoundedConnection):  # not one from a pool
            connection.answer_timeout = self.settings_dict.get("ANSWER_TIMEOUT")
        return connection

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
