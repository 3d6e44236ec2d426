"""Calls made at the same moment from threads, for the PostgreSQL concurrency tests."""

import threading

from django.db import connections


def in_parallel(calls: list) -> list:
    """Each call in a thread of its own, all released at once; what each returned (or raised)."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def worker(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = calls[index]()
        except Exception as error:  # the test shows it
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results
