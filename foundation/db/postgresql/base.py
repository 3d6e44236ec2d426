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
answer forever. A frozen server (SIGSTOP, a hung host) even completes TCP
handshakes and acknowledges what is sent, so no TCP timeout fires either.
The web process (config/settings.py) therefore bounds its waits itself:

- `PROBE_AFTER`: a statement still unanswered after that many seconds may be
  slow (a lock, a heavy query) or may never be answered. A slow server still
  answers a new connection at once; a frozen one does not. So the client
  opens one (`server_answers`) and sends the first message of a session;
  without a reply within as many seconds again, it gives up: the
  connection is closed and OperationalError raised, which the API answers
  with a 503. A slow statement keeps its whole statement_timeout.
- `ANSWER_TIMEOUT`: whatever the probes say, no answer is awaited longer.
"""

import socket
import struct
import time

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base
from psycopg.errors import _WaitTimeout

# The SSLRequest message: the first a client may send. The server answers it with one byte
# before any authentication, and logs nothing when the client then hangs up.
_SSL_REQUEST = struct.pack("!ii", 8, 80877103)


def server_answers(info: psycopg.ConnectionInfo, timeout: float) -> bool:
    """Whether the server behind `info` answers a new connection's first message within `timeout` s."""
    deadline = time.monotonic() + timeout
    try:
        if info.host.startswith("/"):  # a Unix-domain socket directory
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(f"{info.host}/.s.PGSQL.{info.port}")
        else:
            sock = socket.create_connection((info.hostaddr or info.host, info.port), timeout=timeout)
        with sock:
            sock.sendall(_SSL_REQUEST)
            sock.settimeout(max(deadline - time.monotonic(), 0.01))
            return len(sock.recv(1)) == 1
    except OSError:  # refused, unreachable, or no reply in time
        return False


class BoundedConnection(psycopg.Connection):
    """A psycopg connection that stops waiting for a server that no longer answers (see the module)."""

    answer_timeout: float | None = None
    probe_after: float | None = None
    # Set when this connection was given up for want of an answer: a new one would wait as long.
    unanswered = False

    # Private psycopg API: test_a_server_that_does_not_answer_fails_the_query_at_the_answer_timeout
    def wait(self, gen, interval=0.1, timeout=None):
        if timeout is not None:  # psycopg's own bounded waits (a cancel) keep their bound
            return super().wait(gen, interval=interval, timeout=timeout)
        started = time.monotonic()
        while True:
            remaining = None if self.answer_timeout is None else self.answer_timeout - (time.monotonic() - started)
            step = min((max(value, 0) for value in (remaining, self.probe_after) if value is not None), default=None)
            try:
                # Resuming `gen` after a timed-out wait is what psycopg itself does after a Ctrl-C.
                return super().wait(gen, interval=interval, timeout=step)
            # Private psycopg API: test_a_slow_statement_on_a_server_that_answers_keeps_its_budget
            except _WaitTimeout:
                waited = time.monotonic() - started
                if remaining is not None and step >= remaining:
                    self._give_up(f"the database server did not answer within {self.answer_timeout} s")
                if not server_answers(self.info, self.probe_after):
                    self._give_up(
                        f"the database server did not answer within {waited:.1f} s and takes no new connection"
                    )

    def _give_up(self, message: str):
        # The server may still be running the statement: the connection is in an unknown state.
        self.unanswered = True
        self.close()
        raise psycopg.OperationalError(message) from None


class _Psycopg:
    """The psycopg module as Django's backend sees it, connecting with BoundedConnection."""

    connect = staticmethod(BoundedConnection.connect)

    def __getattr__(self, name):
        return getattr(psycopg, name)


# Private Django API: test_a_connection_a_request_used_a_moment_ago_is_not_pinged
class DatabaseWrapper(base.DatabaseWrapper):
    Database = _Psycopg()
    _used_at = float("-inf")
    # The server failed to answer during this request (or task): Django would connect again at
    # once, to roll back or restore autocommit, and each attempt would wait a connect timeout more.
    _unanswered = False

    def get_new_connection(self, conn_params):
        if self._unanswered:
            raise psycopg.OperationalError("the database server did not answer: not connecting again in this request")
        try:
            connection = super().get_new_connection(conn_params)
        except psycopg.errors.ConnectionTimeout:
            # Only where waits are bounded (the web process): elsewhere a caller may retry at will.
            self._unanswered = bool(self.settings_dict.get("PROBE_AFTER") or self.settings_dict.get("ANSWER_TIMEOUT"))
            raise
        if isinstance(connection, BoundedConnection):  # not one from a pool
            connection.answer_timeout = self.settings_dict.get("ANSWER_TIMEOUT")
            connection.probe_after = self.settings_dict.get("PROBE_AFTER")
        return connection

    def close(self):
        if getattr(self.connection, "unanswered", False):
            self._unanswered = True
        super().close()

    def close_if_unusable_or_obsolete(self):
        # Django calls this when a request (or task) starts and when it ends; only at the end
        # has the connection been used (and health-checked) since the last call.
        self._unanswered = False  # each request tries the server again
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
