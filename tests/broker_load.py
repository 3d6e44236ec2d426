"""Producers and consumers of the embedded broker, each a process of its own, for
tests/test_embedded_broker.py. They use the project's Celery app and settings,
so they reach the broker DATA_DIR points at, exactly as web, beat and worker do.

    python -m tests.broker_load produce RUN_DIR QUEUE PRODUCER THREADS COUNT
    python -m tests.broker_load consume RUN_DIR QUEUE CONSUMER

Each process announces itself with RUN_DIR/ready-NAME and opens the broker only
once RUN_DIR/go exists, so they all open a new broker file at the same moment,
as web, worker and beat do on the first `make run`. A consumer writes what it
takes to RUN_DIR/consumer-CONSUMER.jsonl and stops once RUN_DIR/stop exists and
nothing more arrives.
"""

import json
import sys
import threading
import time
from pathlib import Path

from kombu import Consumer, Exchange, Queue

from config.celery import app

DEADLINE = 120  # seconds: a process never outlives a failed test for long


def _queue(name: str) -> Queue:
    return Queue(name, Exchange(name, type="direct"), routing_key=name)


def _start_together(run_dir: Path, name: str, queue: str) -> None:
    """Waits for the others, then opens the broker and declares the queue at once, as each of web,
    worker and beat does when it starts."""
    (run_dir / f"ready-{name}").touch()
    started = time.monotonic()
    while not (run_dir / "go").exists():
        if time.monotonic() - started > DEADLINE:
            raise SystemExit("never told to go")
        time.sleep(0.001)
    with app.connection_for_write() as connection:
        _queue(queue)(connection.default_channel).declare()


def produce(run_dir: Path, queue: str, producer: int, threads: int, count: int) -> None:
    """`threads` threads publish `count` messages each, as a web process's threads do."""
    failures = []

    def publish(thread: int) -> None:
        for number in range(count):
            try:
                app.send_task("tests.broker_load.probe", args=[producer, thread, number], queue=queue)
            except Exception as error:  # reported below: the test fails on any
                failures.append(repr(error))

    workers = [threading.Thread(target=publish, args=(thread,)) for thread in range(threads)]
    _start_together(run_dir, f"producer-{producer}", queue)
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failures:
        raise SystemExit(f"{len(failures)} publishes failed, first: {failures[0]}")


def consume(run_dir: Path, queue: str, consumer: int) -> None:
    """Takes messages one at a time (prefetch 1, acked after it is written down, as the worker's
    late acks) and writes each down at once."""
    _start_together(run_dir, f"consumer-{consumer}", queue)
    started = time.monotonic()
    output = run_dir / f"consumer-{consumer}.jsonl"
    with output.open("a") as record, app.connection_for_read() as connection:

        def on_message(body, message) -> None:
            args, _kwargs, _embed = body
            record.write(json.dumps(args) + "\n")
            record.flush()
            message.ack()

        with Consumer(connection, queues=[_queue(queue)], callbacks=[on_message], accept=["json"], prefetch_count=1):
            while time.monotonic() - started < DEADLINE:
                try:
                    connection.drain_events(timeout=1)
                except TimeoutError:
                    if (run_dir / "stop").exists():
                        return
        raise SystemExit(f"still taking messages after {DEADLINE} s")


if __name__ == "__main__":
    command, run_dir, queue, *rest = sys.argv[1:]
    if command == "produce":
        produce(Path(run_dir), queue, *(int(value) for value in rest))
    else:
        consume(Path(run_dir), queue, int(rest[0]))
