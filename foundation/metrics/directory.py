"""One prometheus_client multiprocess directory per server, so several servers share a machine.

prometheus_client's multiprocess mode keeps each process's values in files named after its
pid inside PROMETHEUS_MULTIPROC_DIR, and a scrape adds up every file there. The directory
must be set before prometheus_client is imported and be empty when the server starts: files
of an earlier run would be added to the new one's counters. Two servers on one machine
(two gunicorn masters on two ports, a gunicorn and a Celery worker) must not share it, or
each would report the other's processes and the first to start would wipe the other's files.

So PROMETHEUS_MULTIPROC_DIR, as the operator sets it (default DATA_DIR/metrics), is the
machine's metrics directory, and each server makes `<role>-<pid>/` inside it, empty, and
points its own processes there before any of them imports prometheus_client. A server holds
an flock on `<role>-<pid>.lock` for as long as it or any process it forked lives; a server
starting removes the directories whose lock nobody holds (servers that are gone). It touches
only names it writes itself (`web-<pid>`, `celery-<pid>`), as plain files and directories of
the machine's directory: any other entry (`...lock` would name its parent, DATA_DIR) and any
symbolic link is left alone, so a stray or planted name never makes a start delete elsewhere.

Nothing here imports Django or prometheus_client: gunicorn's master runs it first.
"""

import contextlib
import fcntl
import os
import re
import shutil
import stat
from pathlib import Path

import environ

PROJECT_DIR = Path(__file__).resolve().parents[2]
# prometheus_client reads this; inside a server it names the server's own directory.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# The machine's directory, remembered for processes a server starts (a gunicorn re-exec).
MACHINE_ENV = "HELPDESK_METRICS_MACHINE_DIR"

# The only servers that make directories here (gunicorn.conf.py, foundation/metrics/worker.py).
ROLES = ("web", "celery")
_SERVER_NAME = re.compile(rf"^(?:{'|'.join(ROLES)})-[1-9][0-9]*$")

_owned: Path | None = None


def machine_directory() -> Path:
    """PROMETHEUS_MULTIPROC_DIR as the operator set it (environment or .env), else DATA_DIR/metrics."""
    # The .env file as config/settings.py reads it, into a scratch mapping: the gunicorn master
    # must not load the project's settings (nor put .env into its environment) to learn DATA_DIR.
    dotenv = type("DotEnv", (environ.Env,), {"ENVIRON": {}})
    dotenv.read_env(PROJECT_DIR / ".env", overwrite=False)
    values = {**dotenv.ENVIRON, **os.environ}
    if values.get(MACHINE_ENV):
        return Path(values[MACHINE_ENV])
    if values.get(MULTIPROC_ENV):
        return Path(values[MULTIPROC_ENV]).resolve()
    return Path(values.get("DATA_DIR") or PROJECT_DIR / "var").resolve() / "metrics"


def prepare_server_directory(role: str) -> Path:
    """Called by a server's main process before prometheus_client is imported: an empty
    `<role>-<pid>` directory of the machine's, in PROMETHEUS_MULTIPROC_DIR for every process
    it forks from now on. Calling it again in the same process changes nothing."""
    global _owned
    if _owned is not None:
        return _owned
    if role not in ROLES:
        raise ValueError(f"unknown metrics role {role!r}")
    machine = machine_directory()
    machine.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = f"{role}-{os.getpid()}"
    # Never closed: the lock lives as long as this process and the processes it forks.
    _hold_lock(machine / f"{name}.lock")
    remove_stale_directories(machine)
    directory = machine / name
    _remove_directory(directory)  # an earlier process had this pid
    directory.mkdir(mode=0o700)
    os.environ[MACHINE_ENV] = str(machine)
    os.environ[MULTIPROC_ENV] = str(directory)
    _owned = directory
    return directory


def _hold_lock(path: Path) -> int:
    """An exclusive flock on `path`, kept open; retried if a sweeping server removed the file meanwhile."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # a sweeping server holds it for a moment at most
        with contextlib.suppress(FileNotFoundError):
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        os.close(fd)


def remove_stale_directories(machine: Path) -> list[str]:
    """Removes the directory of every server whose lock is free (it and its children are gone).

    Only `<role>-<pid>.lock` files and `<role>-<pid>` directories, never through a symbolic link."""
    removed = []
    for lock in sorted(machine.glob("*.lock")):
        if not _SERVER_NAME.match(lock.stem):
            continue
        try:
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
        except (FileNotFoundError, OSError):
            continue  # gone meanwhile, or a symbolic link (ELOOP): not ours
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            _remove_directory(machine / lock.stem)
            lock.unlink(missing_ok=True)
            removed.append(lock.stem)
        finally:
            os.close(fd)
    return removed


def _remove_directory(directory: Path) -> None:
    """A server's directory and what is in it; a link or file of that name goes itself, never what it points to."""
    try:
        mode = os.lstat(directory).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(directory, ignore_errors=True)
    else:
        directory.unlink(missing_ok=True)
