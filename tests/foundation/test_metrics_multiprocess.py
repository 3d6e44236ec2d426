"""Several processes, one server: a directory of its own per server, and a scrape that adds up its processes.

Each case runs in fresh Python processes: prometheus_client picks per-process or multiprocess
values once, at import, and preparing a directory changes the process's environment.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]

PREPARE = (
    "import json, os; from foundation.metrics.directory import prepare_server_directory as prepare; "
    "first = prepare('web'); second = prepare('web'); "
    "print(json.dumps([str(first), str(second), os.environ['PROMETHEUS_MULTIPROC_DIR'], os.getpid()]))"
)


def python(code: str, **environment: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PROMETHEUS_MULTIPROC_DIR", "HELPDESK_METRICS_MACHINE_DIR")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**env, **environment}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def stale_server(machine: Path, name: str) -> Path:
    """The directory and (free) lock of a server that is gone."""
    directory = machine / name
    directory.mkdir(parents=True)
    (directory / "counter_123.db").write_bytes(b"old")
    (machine / f"{name}.lock").touch()
    return directory


def test_a_server_gets_an_empty_directory_of_its_own_in_the_machines(tmp_path):
    machine = tmp_path / "metrics"
    gone = stale_server(machine, "web-999999999")

    first, second, exported, pid = json.loads(python(PREPARE, PROMETHEUS_MULTIPROC_DIR=str(machine)))

    assert first == second == exported == str(machine / f"web-{pid}")
    assert not gone.exists()
    assert not (machine / "web-999999999.lock").exists()
    assert sorted(path.name for path in machine.iterdir()) == [f"web-{pid}", f"web-{pid}.lock"]


def test_a_lock_named_after_the_parent_never_deletes_the_data_directory(tmp_path):
    """`...lock` in DATA_DIR/metrics once named `..`, DATA_DIR itself: a start deleted the database and keys."""
    data_dir = tmp_path / "var"
    machine = data_dir / "metrics"
    machine.mkdir(parents=True)
    (data_dir / "db.sqlite3").write_bytes(b"database")
    (data_dir / "secret_key").write_text("key")
    for name in ("...lock", "..lock", ".lock", "notes.lock", "web-.lock", "web-12x.lock", "worker-7.lock"):
        (machine / name).touch()
    (machine / "notes").mkdir()
    (machine / "notes" / "keep.txt").write_text("kept")
    (machine / "worker-7").mkdir()

    _, _, _, pid = json.loads(python(PREPARE, DATA_DIR=str(data_dir)))

    assert (data_dir / "db.sqlite3").read_bytes() == b"database"
    assert (data_dir / "secret_key").read_text() == "key"
    assert (machine / "notes" / "keep.txt").read_text() == "kept"
    assert sorted(path.name for path in machine.iterdir()) == sorted(
        [
            "...lock",
            "..lock",
            ".lock",
            "notes",
            "notes.lock",
            "web-.lock",
            "web-12x.lock",
            "worker-7",
            "worker-7.lock",
            f"web-{pid}",
            f"web-{pid}.lock",
        ]
    )


def test_a_stale_servers_name_as_a_link_removes_the_link_never_what_it_points_to(tmp_path):
    machine = tmp_path / "metrics"
    machine.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.db").write_bytes(b"precious")
    (elsewhere / "lock").touch()
    (machine / "web-999999991").symlink_to(elsewhere)  # a free lock, the directory a link
    (machine / "web-999999991.lock").touch()
    (machine / "celery-999999992").mkdir()  # the lock a link to a file elsewhere
    (machine / "celery-999999992.lock").symlink_to(elsewhere / "lock")

    python(PREPARE, PROMETHEUS_MULTIPROC_DIR=str(machine))

    assert (elsewhere / "precious.db").read_bytes() == b"precious"
    assert (elsewhere / "lock").exists()
    assert not (machine / "web-999999991").is_symlink()
    assert (machine / "celery-999999992").is_dir()  # its lock is not a file this service wrote


def test_by_default_the_machines_directory_is_data_dir_metrics(tmp_path):
    first, _, _, pid = json.loads(python(PREPARE, DATA_DIR=str(tmp_path)))

    assert first == str(tmp_path / "metrics" / f"web-{pid}")


def test_a_running_servers_directory_is_kept_and_removed_once_it_and_its_children_are_gone(tmp_path):
    machine = tmp_path / "metrics"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(machine)}
    env.pop("HELPDESK_METRICS_MACHINE_DIR", None)
    # The server forks a child (as gunicorn and Celery do), prints its directory, and exits;
    # the child lives until its standard input closes.
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys; from foundation.metrics.directory import prepare_server_directory as prepare; "
            "directory = prepare('web'); (directory / 'counter_1.db').write_bytes(b'live'); "
            "child = os.fork()\n"
            "if child == 0: sys.stdin.read(); os._exit(0)\n"
            "print(directory, flush=True)",
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    directory = Path(server.stdout.readline().strip())
    server.wait(timeout=30)

    python(PREPARE, PROMETHEUS_MULTIPROC_DIR=str(machine))
    kept = (directory / "counter_1.db").exists()
    server.stdin.close()  # the child exits
    server.stdout.read()  # at end of file once the child, the last holder of the pipe, is gone
    python(PREPARE, PROMETHEUS_MULTIPROC_DIR=str(machine))

    assert kept
    assert not directory.exists()


WRITER = (
    "import sys; from foundation.metrics.instruments import request_observed, task_failed\n"
    "for _ in range(int(sys.argv[1])):\n"
    "    request_observed(route='/api/health', method='GET', status=200, seconds=0.02)\n"
    "task_failed('integrations.deliver_webhook')"
)


def test_a_scrape_adds_up_every_process_of_the_server_including_those_that_exited(tmp_path):
    directory = tmp_path / "web-1"
    directory.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    for count in (3, 4):
        subprocess.run([sys.executable, "-c", WRITER, str(count)], cwd=ROOT, env=env, check=True, timeout=60)

    text = python(
        "import sys; from foundation.metrics.exposition import render; sys.stdout.write(render()[0].decode())",
        PROMETHEUS_MULTIPROC_DIR=str(directory),
    )

    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    route = (("method", "GET"), ("route", "/api/health"))
    assert len(list(directory.glob("counter_*.db"))) == 2
    assert samples[("helpdesk_http_requests_total", (*route, ("status", "200")))] == 7
    assert samples[("helpdesk_http_request_duration_seconds_count", route)] == 7
    assert samples[("helpdesk_http_request_duration_seconds_bucket", (("le", "0.025"), *route))] == 7
    assert samples[("helpdesk_celery_task_failures_total", (("task", "integrations.deliver_webhook"),))] == 2
