"""A throw-away PostgreSQL cluster of a test's own (initdb in a temporary directory), which the test
may freeze with SIGSTOP: never the shared server of DATABASE_URL, which other tests and other runs use.

The server binaries are the newest of /usr/lib/postgresql/*/bin (Debian's layout, where `.ci/run`
finds them), else those on PATH. initdb refuses to run as root: as root (CI's container) the cluster
belongs to the `postgres` user, as in `.ci/run`.
"""

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from tools.ports import free_port


def server_binaries() -> Path | None:
    """The directory of initdb, pg_ctl and postgres, or None when this machine has no server."""
    installed = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: int(path.parts[-3]) if path.parts[-3].isdigit() else 0,
    )
    if installed:
        return installed[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


class PostgresCluster:
    """initdb, start, freeze (SIGSTOP to every process of the server), thaw, stop."""

    def __init__(self, binaries: Path):
        # Not under pytest's basetemp: as root that is closed to the `postgres` user.
        self.workdir = Path(tempfile.mkdtemp(prefix="helpdesk-pg-"))
        self.data = self.workdir / "pgdata"
        self.binaries = binaries
        self.port = free_port()
        self._frozen: list[int] = []
        self._owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None

    def _run(self, *command: str) -> None:
        kwargs = {"user": self._owner.pw_uid, "group": self._owner.pw_gid, "extra_groups": []} if self._owner else {}
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, **kwargs)
        if result.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}")

    def start(self) -> "PostgresCluster":
        try:
            if self._owner:
                os.chown(self.workdir, self._owner.pw_uid, self._owner.pw_gid)
            initdb = ("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync")
            self._run(str(self.binaries / initdb[0]), *initdb[1:])
            server_options = f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
            log = str(self.workdir / "server.log")
            self._run(
                str(self.binaries / "pg_ctl"), "-D", str(self.data), "-l", log, "-w", "-o", server_options, "start"
            )
        except BaseException:
            self.stop()
            raise
        return self

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _processes(self) -> list[int]:
        """The postmaster and its children (backends, checkpointer, walwriter...)."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                # The command may hold spaces and parentheses: the parent's pid follows the last ')'.
                if int(stat.read_text().rpartition(")")[2].split()[1]) == postmaster:
                    children.append(int(stat.parent.name))
        return [postmaster, *children]

    def freeze(self) -> None:
        """The server stops running, as a hung host, a stuck disk or a debugger would stop it: the
        kernel still completes TCP handshakes and acknowledges data, no process ever answers."""
        # The postmaster first, so it forks no child after the list of its children is read.
        postmaster, *_ = self._processes()
        os.kill(postmaster, signal.SIGSTOP)
        self._frozen = self._processes()
        for pid in self._frozen[1:]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self._frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self._frozen = []

    def stop(self) -> None:
        self.thaw()
        with contextlib.suppress(AssertionError):
            self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.workdir, ignore_errors=True)
