"""Webhook throughput: steady agent replies (latency) and a 5,000-event burst (drain time)."""

import json
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from bench.loadgen import Client
from bench.stack import ROOT, log, wait_until


class Receiver:
    def __init__(self, port: int):
        self.port = port
        self.url = f"http://127.0.0.1:{port}/hook"

    def _get(self, path: str):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=30) as response:
            return json.loads(response.read())

    def count(self) -> int:
        return self._get("/_count")["count"]

    def records(self, since: int) -> list:
        return self._get(f"/_records?since={since}")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def steady(
    *, web_port: int, token: str, receiver: Receiver, ticket_ids: list[str], rate: float, seconds: float
) -> dict:
    """Agent public replies through the panel API at a fixed rate (open loop); latency event -> receiver."""
    total = int(rate * seconds)
    base = receiver.count()
    local = threading.local()
    failures = []

    def send(n: int) -> None:
        if not hasattr(local, "client"):
            local.client = Client(web_port)
        ticket = ticket_ids[n % len(ticket_ids)]
        status, data = local.client.request(
            "POST", f"/api/tickets/{ticket}/respostas", {"mensagem": f"Resposta {n}", "interna": False}, token=token
        )
        if status != 201:
            failures.append((status, str(data)[:200]))

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=8) as pool:
        for n in range(total):
            delay = started + n / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            pool.submit(send, n)
    sent_in = time.monotonic() - started
    expected = total - len(failures)
    try:
        wait_until(lambda: receiver.count() - base >= expected, timeout=60, what="the steady deliveries", interval=0.2)
    except RuntimeError:
        log(f"  only {receiver.count() - base} of {expected} steady deliveries arrived in 60 s")
    records = receiver.records(base)
    latencies = [
        arrived - datetime.fromisoformat(created).timestamp() for arrived, _, _, created, _ in records if created
    ]
    result = {
        "rate": rate,
        "seconds": seconds,
        "replies": total,
        "reply_failures": len(failures),
        "first_failure": failures[0] if failures else None,
        "send_seconds": round(sent_in, 2),
        "delivered": len(records),
        "latency_p50_s": _percentile(latencies, 50) if latencies else None,
        "latency_p95_s": _percentile(latencies, 95) if latencies else None,
        "latency_p99_s": _percentile(latencies, 99) if latencies else None,
        "latency_max_s": max(latencies) if latencies else None,
        "latency_mean_s": statistics.fmean(latencies) if latencies else None,
    }
    return result


def burst(
    *,
    supervisor,
    start_worker,
    env: dict,
    receiver: Receiver,
    ticket_file,
    count: int,
    drain_cap: float,
    webhooks_file=None,
) -> dict:
    """Worker stopped, `count` events written and queued, worker started: time until all arrived."""
    supervisor.stop("worker")
    base = receiver.count()
    log(f"  writing {count} webhook events (worker stopped)")
    started = time.monotonic()
    parts = 2
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.burst",
                "--tickets",
                str(ticket_file),
                "--count",
                str(count),
                "--part",
                str(part),
                "--parts",
                str(parts),
                *(["--webhooks", str(webhooks_file)] if webhooks_file else []),
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for part in range(parts)
    ]
    paths = set()
    for writer in writers:
        stdout, stderr = writer.communicate(timeout=600)
        if writer.returncode != 0:
            raise RuntimeError(f"bench.burst failed:\n{stderr[-3000:]}")
        paths.add(stdout.strip())
    written_in = time.monotonic() - started
    early = receiver.count() - base
    log(f"  {count} events written in {written_in:.1f} s ({'; '.join(sorted(paths))}); starting the worker")
    spawned = time.time()
    start_worker()
    deadline = time.monotonic() + drain_cap + 30  # the cap counts from the first delivery; boot gets 30 s more
    unique: set = set()
    records: list = []
    while time.monotonic() < deadline:
        records += receiver.records(base + len(records))
        unique = {delivery for _, delivery, _, _, _ in records}
        if len(unique) >= count:
            break
        if records and time.time() - records[0][0] > drain_cap:
            break
        time.sleep(0.25)
    arrivals = sorted(arrived for arrived, _, _, _, _ in records)
    drained = len(unique) >= count
    first, last = (arrivals[0], arrivals[-1]) if arrivals else (None, None)
    drain_s = (last - first) if arrivals else None
    return {
        "events": count,
        "written_with": "; ".join(sorted(paths)),
        "written_seconds": round(written_in, 2),
        "delivered_before_worker": early,
        "delivered_unique": len(unique),
        "duplicates": len(records) - len(unique),
        "drained": drained,
        "drain_seconds": drain_s if drained else None,
        "drain_cap_seconds": drain_cap,
        "worker_start_to_last_seconds": (last - spawned) if drained else None,
        "deliveries_per_second": (len(unique) - 1) / drain_s if drain_s else None,
    }
