"""The embedded broker (foundation/broker.py: kombu's SQLAlchemy transport on DATA_DIR/broker.sqlite3)
loses nothing and hands nothing out twice, with several processes publishing and taking at once.

Real processes, started on a new DATA_DIR and always on the embedded default (whatever broker
this test run uses); they open the new broker file at the same moment, as web, worker and beat
do on the first `make run` (kombu's transport as it is fails there: "table kombu_queue already
exists", "UNIQUE constraint failed: kombu_queue.name"). Producers publish with the
project's Celery app from two threads each, as the web process does; two consumers take
messages one at a time, as a worker does (the stress is on the broker, so a consumer writes a
message down instead of running a task: a worker with prefetch 1 would take minutes).

Exactly once: a message is taken and deleted by one statement, so no two consumers can take it.
What a consumer holds unacknowledged goes back to the queue when it closes cleanly, and is lost
if it is killed; the webhook outbox re-queues what a killed worker held.
"""

import json
import os
import sqlite3
import stat
import subprocess
import sys
from collections import Counter

from django.conf import settings
from kombu import Connection
from kombu.transport import sqlalchemy as kombu_sqlalchemy

from tests.e2e.stack import wait_for

PRODUCERS, THREADS, PER_THREAD = 4, 2, 375  # 3,000 messages
CONSUMERS = 2
QUEUE = "broker-load-test"


def _spawn(env, *args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.broker_load", *(str(arg) for arg in args)],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finish(process: subprocess.Popen) -> str:
    """Its output once it has exited; killed if it does not exit in time."""
    try:
        return process.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()[0]


def _lines(paths) -> int:
    return sum(len(path.read_text().splitlines()) for path in paths if path.exists())


def test_three_thousand_messages_from_concurrent_producers_each_arrive_exactly_once(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "CELERY_BROKER_URL")}
    data_dir, run_dir = tmp_path / "data", tmp_path / "run"
    data_dir.mkdir(mode=0o700)
    run_dir.mkdir()
    # The keys given, so that the processes share only the broker file.
    env.update(DATA_DIR=str(data_dir), SECRET_KEY="broker-load", JWT_SIGNING_KEY="broker-load", PYTHONUNBUFFERED="1")
    total = PRODUCERS * THREADS * PER_THREAD
    outputs = [run_dir / f"consumer-{number}.jsonl" for number in range(CONSUMERS)]
    consumers = [_spawn(env, "consume", run_dir, QUEUE, number) for number in range(CONSUMERS)]
    producers = [_spawn(env, "produce", run_dir, QUEUE, number, THREADS, PER_THREAD) for number in range(PRODUCERS)]
    try:
        # Every process opens the new broker file at the same moment.
        ready = PRODUCERS + CONSUMERS
        wait_for(lambda: len(list(run_dir.glob("ready-*"))) == ready, timeout=60, message="every process ready")
        (run_dir / "go").touch()
        for producer in producers:
            output, _ = producer.communicate(timeout=90)
            assert producer.returncode == 0, output
        wait_for(lambda: _lines(outputs) >= total, timeout=60, interval=0.5, message="every message taken")
    finally:
        (run_dir / "go").touch()
        (run_dir / "stop").touch()
        ended = [_finish(process) for process in producers + consumers]
    for process, output in zip(producers + consumers, ended, strict=True):
        assert process.returncode == 0, output

    taken = [[tuple(json.loads(line)) for line in output.read_text().splitlines()] for output in outputs]
    counts = Counter(message for messages in taken for message in messages)
    expected = {
        (producer, thread, number)
        for producer in range(PRODUCERS)
        for thread in range(THREADS)
        for number in range(PER_THREAD)
    }
    assert len(expected) == total
    assert expected - set(counts) == set()  # none lost
    assert set(counts) - expected == set()  # nothing else
    assert [message for message, count in counts.items() if count > 1] == []  # none twice
    assert all(messages for messages in taken)  # both consumers took messages, side by side
    broker_file = data_dir / "broker.sqlite3"
    with sqlite3.connect(broker_file) as broker:
        # Taken messages are deleted: the file does not grow with every message ever sent.
        assert broker.execute("SELECT count(*) FROM kombu_message").fetchone() == (0,)
        assert broker.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # Messages carry task arguments: readable by this user only, like the database.
    assert stat.S_IMODE(broker_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(data_dir.joinpath("broker.sqlite3-wal").stat().st_mode) == 0o600


def test_a_forked_child_opens_broker_connections_of_its_own(tmp_path):
    """A prefork worker forks its pool after it opened the broker file: a child must not share the
    parent's pooled SQLite connections (foundation/broker.py forgets kombu's cached engines at fork)."""
    url = f"sqlite:///{tmp_path / 'broker.sqlite3'}"
    with Connection(url, transport="foundation.broker:Transport") as connection:
        connection.connect()
        engine, _session_factory = kombu_sqlalchemy.Channel._engines[url]
        assert engine.pool.checkedin() >= 1  # the connection check left one in the pool

        child = os.fork()
        if child == 0:  # the child reports on its inherited engine, and leaves at once
            os._exit(0 if engine.pool.checkedin() == 0 else 1)
        _pid, status = os.waitpid(child, 0)

        assert os.waitstatus_to_exitcode(status) == 0
        assert engine.pool.checkedin() >= 1  # the parent's connections are untouched
    engine.dispose()
    kombu_sqlalchemy.Channel._engines.pop(url)


def test_asking_the_queue_size_on_short_lived_connections_leaves_no_database_connection_checked_out(tmp_path):
    """The webhook dispatcher asks the queue's size on a new broker connection every 2 seconds
    (integrations.tasks._queue_is_empty). Each read must give its SQLite connection back when the broker
    connection closes: kept by a session until garbage collection, they exhausted the engine's pool (5 + 10)
    and every publish of the worker waited 30 s, then failed."""
    url = f"sqlite:///{tmp_path / 'broker.sqlite3'}"
    for _ in range(40):
        with Connection(url, transport="foundation.broker:Transport") as connection:
            assert connection.default_channel.queue_declare(queue=QUEUE, passive=False).message_count == 0
            assert connection.default_channel.queue_declare(queue=QUEUE, passive=True).message_count == 0
        engine, _session_factory = kombu_sqlalchemy.Channel._engines[url]
        assert engine.pool.checkedout() == 0
    engine.dispose()
    kombu_sqlalchemy.Channel._engines.pop(url)
