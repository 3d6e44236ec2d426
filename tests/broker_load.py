"""Producers and consumers of the embedded broker, each a process of its own, for
tests/test_embedded_broker.py. They use the project's Celery app and settings,
so they reach the broker DATA_DIR points at, exactly as web, beat and worker do.

    python -m tests.broker_load produce QUEUE PRODUCER THREADS COUNT
    python -m tests.broker_load consume QUEUE OUTPUT STOP_FILE
"""

import json
import sys
import threading
import time
from pathlib import Path

from kombu import Consumer, Exchange, Queue

from config.celery import app

DEADLINE = 120  # seconds: a process never outlives a failed test for long


def produce(queue: str, producer: int, threads: int, count: int) -> None:
    """`threads` threads publish `count` messages each, as a web process's threads do."""
    failures = []

    def publish(thread: int) -> None:
        for number in range(count):
            try:
                app.send_task("tests.broker_load.probe", args=[producer, thread, number], queue=queue)
            except Exception as error:  # reported below: the test fails on any
                failures.append(repr(error))

    workers = [threading.Thread(target=publish, args=(thread,)) for thread in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failures:
        raise SystemExit(f"{len(failures)} publishes failed, first: {failures[0]}")


def consume(queue: str, output: Path, stop_file: Path) -> None:
    """Takes messages one at a time (prefetch 1, acked after it is written down, as the worker's
    late acks) and writes each down at once; stops when told to and nothing more arrives."""
    started = time.monotonic()
    with output.open("a") as record, app.connection_for_read() as connection:

        def on_message(body, message) -> None:
            args, _kwargs, _embed = body
            record.write(json.dumps(args) + "\n")
            record.flush()
            message.ack()

        target = Queue(queue, Exchange(queue, type="direct"), routing_key=queue)
        with Consumer(connection, queues=[target], callbacks=[on_message], accept=["json"], prefetch_count=1):
            while time.monotonic() - started < DEADLINE:
                try:
                    connection.drain_events(timeout=1)
                except TimeoutError:
                    if stop_file.exists():
                        return


if __name__ == "__main__":
    command, queue, *rest = sys.argv[1:]
    if command == "produce":
        produce(queue, *(int(value) for value in rest))
    else:
        consume(queue, Path(rest[0]), Path(rest[1]))
