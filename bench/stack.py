"""What the bench runs on: Debian packages, a throw-away PostgreSQL and Redis,
the Procfile's processes, and the clean-up of all of them.

Every process is started in a session of its own and stopped by process group;
Supervisor.close() runs from a finally (and on SIGTERM/SIGINT), so nothing is
left running and the temporary directory goes away.
"""

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tools.ports import free_port, port_open

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
STARTED = time.monotonic()
IS_ROOT = os.geteuid() == 0


def log(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)


def wait_until(predicate, *, timeout: float, what: str, interval: float = 0.1, alive=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if alive is not None:
            alive()
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")


# --- Debian packages ----------------------------------------------------------


def postgres_bin() -> Path | None:
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    return candidates[-1].parent if candidates else None


def _has_pg_stat_statements(pg_bin: Path) -> bool:
    version = pg_bin.parent.name
    return Path(f"/usr/share/postgresql/{version}/extension/pg_stat_statements.control").exists()


def _as_root(command: list[str]) -> list[str]:
    return command if IS_ROOT else ["sudo", *command]


def ensure_packages() -> None:
    """PostgreSQL (with pg_stat_statements), redis-server and wrk, from Debian, as .ci/run does."""
    missing = []
    pg_bin = postgres_bin()
    if pg_bin is None or not _has_pg_stat_statements(pg_bin):
        missing.append("postgresql")
    if shutil.which("redis-server") is None:
        missing.append("redis-server")
    if shutil.which("wrk") is None:
        missing.append("wrk")
    if not missing:
        log("PostgreSQL, redis-server and wrk are installed")
        return
    log(f"installing {' '.join(missing)} (apt-get)")
    subprocess.run(_as_root(["apt-get", "update", "-qq"]), check=True)
    subprocess.run(
        _as_root(
            ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", "--no-install-recommends"]
        )
        + missing,
        check=True,
        stdout=subprocess.DEVNULL,
    )


# --- processes ----------------------------------------------------------------


class Supervisor:
    """Owns every process and clean-up step of the run; close() undoes them in reverse."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.logs = workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.processes: dict[str, subprocess.Popen] = {}
        self._cleanups: list = []

    def on_close(self, function) -> None:
        self._cleanups.append(function)

    def log_path(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def spawn(self, name: str, argv: list[str], env: dict) -> subprocess.Popen:
        with open(self.log_path(name), "ab") as log_file:
            process = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.processes[name] = process
        return process

    def spawn_shell(self, name: str, command: str, env: dict) -> subprocess.Popen:
        """A Procfile line, through a shell as honcho runs it (for its ${VAR:-default})."""
        return self.spawn(name, ["/bin/sh", "-c", f"exec {command}"], env)

    def check_alive(self, name: str) -> None:
        process = self.processes[name]
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{self.tail(name)}")

    def tail(self, name: str, lines: int = 30) -> str:
        path = self.log_path(name)
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, name: str, timeout: float = 30) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        # Children that outlived their leader (gunicorn or Celery workers) go too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    def close(self) -> None:
        for name in reversed(list(self.processes)):
            try:
                self.stop(name, timeout=15)
            except Exception as error:  # clean-up goes on whatever failed
                print(f"could not stop {name}: {error}", file=sys.stderr)
        for cleanup in reversed(self._cleanups):
            try:
                cleanup()
            except Exception as error:
                print(f"clean-up step failed: {error}", file=sys.stderr)
        self._cleanups.clear()


def http_status(url: str, timeout: float = 5) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (our own local server)
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, OSError):
        return None


# --- PostgreSQL and Redis -------------------------------------------------------


class PostgreSQL:
    """initdb into the work directory, on a free port, with pg_stat_statements counting utility statements."""

    def __init__(self, supervisor: Supervisor):
        self.supervisor = supervisor
        self.bin = postgres_bin()
        self.dir = supervisor.workdir / "pg"
        self.socket_dir = supervisor.workdir / "pg-socket"
        self.port = free_port()

    def _run(self, *argv: str) -> None:
        command = shlex.join(argv)
        if IS_ROOT:  # the server refuses to run as root
            subprocess.run(["su", "postgres", "-s", "/bin/sh", "-c", command], check=True, stdout=subprocess.DEVNULL)
        else:
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)

    def start(self) -> None:
        self.dir.mkdir()
        self.socket_dir.mkdir()
        if IS_ROOT:
            shutil.chown(self.supervisor.workdir, "postgres")
            for path in (self.dir, self.socket_dir):
                shutil.chown(path, "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.dir),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )
        options = " ".join(
            [
                f"-p {self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.socket_dir}",
                "-c max_connections=300",
                "-c fsync=off",
                "-c timezone=UTC",
                "-c shared_preload_libraries=pg_stat_statements",
                "-c pg_stat_statements.track_utility=on",
                "-c pg_stat_statements.max=10000",
            ]
        )
        self.supervisor.on_close(self.stop)
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.dir),
            "-l",
            str(self.supervisor.workdir / "postgres.log"),
            "-w",
            "-o",
            options,
            "start",
        )

    def stop(self) -> None:
        if (self.dir / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.dir), "-m", "immediate", "-w", "stop")

    def url(self, role: str, database: str = "helpdesk") -> str:
        return f"postgres://{role}@127.0.0.1:{self.port}/{database}"


def start_redis(supervisor: Supervisor) -> int:
    port = free_port()
    supervisor.spawn(
        "redis",
        [shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        dict(os.environ),
    )
    wait_until(lambda: port_open(port), timeout=15, what="redis-server", alive=lambda: supervisor.check_alive("redis"))
    return port


# --- the Procfile -------------------------------------------------------------


_PRODUCT_WSGI = re.compile(r"(?<![\w.])config\.wsgi(?::application)?(?![\w.:])")


def reference_web_command(web_command: str) -> str:
    """The product's web command line with the reference's WSGI module in place of config.wsgi."""
    if len(_PRODUCT_WSGI.findall(web_command)) != 1:
        raise RuntimeError(
            "the Procfile's web line must name config.wsgi exactly once, so the reference can be served "
            f"by the same command line; it is: {web_command}"
        )
    return _PRODUCT_WSGI.sub("bench.reference.wsgi:application", web_command)
