"""The embedded Celery broker: kombu's SQLAlchemy transport on a SQLite file under DATA_DIR.

Rows, not files: a message is written by one INSERT and taken by one
transaction, so a reader never sees half a message (kombu's filesystem
transport let the worker read a file before the writer had finished it).

kombu's transport as it is fails when several processes share a new file, as
`make run` does (web threads, beat, the worker and its pool all publish).
This subclass changes only that:

- The first processes to open a new file raced to create the tables ("table
  kombu_queue already exists") and the queue row ("UNIQUE constraint failed"),
  and the publish failed. The tables are created inside one `BEGIN IMMEDIATE`
  transaction, and a queue row another process created meanwhile is read back.
- Every connection uses WAL (readers never block the writer), synchronous
  NORMAL, and waits up to BUSY_TIMEOUT seconds for the write lock instead of
  failing with "database is locked".
- A message is deleted in the transaction that takes it. kombu kept it as an
  invisible row forever; it never reads one again (a message handed back is
  published anew), so the file only grew.
- `polling_interval` is the transport's own option; kombu handed every
  transport option to create_engine(), which refuses it.
- An engine is never used across fork (a prefork worker forks new pool
  processes after it has opened the file): a child gets connections of its own.
- Connecting checks that the file answers, so /api/health reports a broker
  file that cannot be read.
- The file is created readable by this user only, like the database: messages
  carry task arguments.
- A channel gives its SQLite connection back when it closes, and a read of a queue's size ends its
  transaction (kombu kept both until garbage collection, and the worker's pool of connections ran dry).
"""

import os
from json import loads
from pathlib import Path
from queue import Empty

from kombu.transport import sqlalchemy as kombu_sqlalchemy
from kombu.utils.encoding import bytes_to_str
from sqlalchemy import create_engine, delete, event, select, text
from sqlalchemy.exc import IntegrityError

BUSY_TIMEOUT = 30  # seconds

# Options of the transport or of Celery's connection retries, not of create_engine().
_NOT_ENGINE_OPTIONS = frozenset(
    {
        "polling_interval",
        "queue_tablename",
        "message_tablename",
        "callback",
        "errback",
        "max_retries",
        "interval_start",
        "interval_step",
        "interval_max",
        "retry_errors",
    }
)


def _sqlite_pragmas(dbapi_connection, connection_record) -> None:
    dbapi_connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT * 1000}")
    dbapi_connection.execute("PRAGMA journal_mode = WAL")
    dbapi_connection.execute("PRAGMA synchronous = NORMAL")


def _create_private(database: str | None) -> None:
    """SQLite gives its -wal and -shm files the mode of the database file."""
    if database and database != ":memory:" and not Path(database).exists():
        Path(database).touch(mode=0o600)


class Channel(kombu_sqlalchemy.Channel):
    # Private kombu API: test_three_thousand_messages_from_concurrent_producers_each_arrive_exactly_once
    def _engine_from_config(self):
        conninfo = self.connection.client
        options = {key: value for key, value in conninfo.transport_options.items() if key not in _NOT_ENGINE_OPTIONS}
        engine = create_engine(conninfo.hostname, **options)
        if engine.dialect.name == "sqlite":
            _create_private(engine.url.database)
            event.listen(engine, "connect", _sqlite_pragmas)
            with engine.connect() as connection:
                # One process at a time looks for the tables and creates them.
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                kombu_sqlalchemy.metadata.create_all(connection)
                connection.commit()
        return engine

    # Private kombu API: test_three_thousand_messages_from_concurrent_producers_each_arrive_exactly_once
    def _find_queue(self, queue):
        return self.session.query(self.queue_cls).filter(self.queue_cls.name == queue).first()

    # Private kombu API: test_three_thousand_messages_from_concurrent_producers_each_arrive_exactly_once
    def _get_or_create(self, queue):
        found = self._find_queue(queue)
        if found is None:
            self.session.add(self.queue_cls(queue))
            try:
                self.session.commit()
            except IntegrityError:  # another process created it first
                self.session.rollback()
            found = self._find_queue(queue)
        return found

    # Private kombu API: test_three_thousand_messages_from_concurrent_producers_each_arrive_exactly_once
    def _get(self, queue):
        found = self._get_or_create(queue)
        messages = self.message_cls.__table__
        oldest = (
            select(messages.c.id)
            .where(messages.c.queue_id == found.id, messages.c.visible.is_not(False))
            .order_by(messages.c.timestamp, messages.c.id)
            .limit(1)
            .scalar_subquery()
        )
        try:
            # One statement takes the oldest message and deletes it: two consumers cannot both take it,
            # and the write lock is held for no longer than that statement.
            row = self.session.execute(delete(messages).where(messages.c.id == oldest).returning(messages.c.payload))
            taken = row.first()
        finally:
            self.session.commit()
        if taken is None:
            raise Empty()
        return loads(bytes_to_str(taken.payload))

    # Private kombu API: test_asking_the_queue_size_on_short_lived_connections_leaves_no_database_connection_checked_out
    def _size(self, queue):
        try:
            return super()._size(queue)
        finally:
            self.session.commit()  # a read ends its transaction: its connection goes back to the pool

    # Private kombu API: test_asking_the_queue_size_on_short_lived_connections_leaves_no_database_connection_checked_out
    def _new_queue(self, queue, **kwargs):
        try:
            super()._new_queue(queue, **kwargs)
        finally:
            self.session.commit()

    def close(self):
        """kombu's channel never closes its session: what it held went back to the pool only when garbage
        collection found it (the dispatcher opens a connection every 2 s, and the pool ran dry)."""
        if self._session is not None:
            self._session.close()
            self._session = None
        super().close()


class Transport(kombu_sqlalchemy.Transport):
    Channel = Channel

    def establish_connection(self):
        established = super().establish_connection()
        # Private kombu API: test_three_thousand_messages_from_concurrent_producers_each_arrive_exactly_once
        channel = self._avail_channels[-1]
        try:
            channel.session.execute(text("SELECT 1 FROM kombu_queue LIMIT 1"))
        finally:
            channel.session.commit()
        return established


def _forget_engines_in_the_child() -> None:
    # Private kombu API: test_a_forked_child_opens_broker_connections_of_its_own
    for engine, _session_factory in kombu_sqlalchemy.Channel._engines.values():
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forget_engines_in_the_child)
