"""Writer threads for the PostgreSQL concurrency tests: each draws weighted operations until time is up."""

import random
import threading
import time

from django.db import connections

from tests.assertions import bearer_client


def run_writers(shop, operations, *, writers: int, seconds: float) -> None:
    """`writers` threads for `seconds`, each calling `operation(shop, rng, client)` drawn from `operations`
    ((operation, weight) pairs), with its own seeded rng and a partner client of `shop.key`. An error ends its
    writer and is kept in `shop.errors`, for the test to report."""
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=_write, args=(shop, operations, n, deadline)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 60)


def _write(shop, operations, index: int, deadline: float) -> None:
    rng, client = random.Random(index), bearer_client(shop.key)
    functions, weights = zip(*operations, strict=True)
    try:
        while time.monotonic() < deadline:
            rng.choices(functions, weights)[0](shop, rng, client)
    except Exception as error:  # reported by the test
        shop.errors.append(f"writer {index}: {error!r}")
    finally:
        connections.close_all()
