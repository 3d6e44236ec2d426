"""`make run`: the Procfile's processes under supervisord, each restarted when it dies.

honcho stops every process as soon as one exits, so a crashed Celery worker
used to take the web server and beat down with it. supervisord keeps the
others serving and starts the dead one again; one that keeps dying as soon as
it starts is given up after a few tries (FATAL), and the `alarm` listener
below reports that on stderr in words an operator cannot miss.

The Procfile stays the one description of the processes (read with honcho's
own parser); this module only writes DATA_DIR/run/supervisord.conf from it and
hands over to supervisord. Every process's output goes to this terminal.

    python -m tools.runner [--procfile Procfile]    what `make run` runs
    .venv/bin/supervisorctl -c var/run/supervisord.conf status|restart worker|...
"""

import argparse
import fcntl
import os
import secrets
import shlex
import signal
import stat
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# A process must stay up this long to count as started; one that dies sooner is tried again
# after 1, 2, 3 s and then given up (FATAL). One that dies later is restarted at once, every time.
START_SECONDS = 3
START_RETRIES = 3
# web lets requests in flight finish for 30 s (WEB_GRACEFUL_TIMEOUT); a webhook attempt is killed
# after 35 s (integrations.tasks); then the process group is killed.
STOP_WAIT_SECONDS = 40

_SUPERVISORD = """\
[supervisord]
nodaemon=true
user={uid}
logfile={run_dir}/supervisord.log
logfile_maxbytes=1MB
logfile_backups=1
pidfile={run_dir}/supervisord.pid
childlogdir={run_dir}

[unix_http_server]
file={socket}
chmod=0700
username=helpdesk
password={password}

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://{socket}
username=helpdesk
password={password}

[eventlistener:alarm]
command={python} -m tools.runner alarm --config {config}
events=PROCESS_STATE_FATAL
autorestart=true
stderr_logfile=/dev/stderr
stderr_logfile_maxbytes=0
"""

_PROGRAM = """
[program:{name}]
command={command}
directory={root}
autostart=true
autorestart=true
startsecs={start_seconds}
startretries={start_retries}
stopsignal=TERM
stopwaitsecs={stop_wait_seconds}
killasgroup=true
redirect_stderr=true
stdout_logfile=/dev/stdout
stdout_logfile_maxbytes=0
"""


def data_dir() -> Path:
    """DATA_DIR exactly as the settings resolve it (they also load .env into the environment,
    which every process then inherits, as honcho did)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    return Path(settings.DATA_DIR)


def read_procfile(path: Path) -> dict[str, str]:
    from honcho.environ import parse_procfile

    processes = parse_procfile(path.read_text()).processes
    if not processes:
        raise SystemExit(f"{path}: no process to run")
    return processes


SOCKET_NAME = "supervisor.sock"
# A unix socket's address holds at most 107 bytes.
_SOCKET_PATH_MAX = 100


def _socket_path(run_dir: Path) -> Path:
    """The control socket, in DATA_DIR/run (mode 700). When DATA_DIR is too deep for a socket's address, in a
    directory of its own that mkdtemp makes (a random name, mode 700, this user's), remembered in run/ and used
    again while it is still this user's and private: never a name another local user could make first (a socket
    there would be given supervisorctl's password)."""
    path = run_dir / SOCKET_NAME
    if len(str(path)) < _SOCKET_PATH_MAX:
        return path
    remembered = run_dir / "socket_dir"
    try:
        directory = Path(remembered.read_text().strip())
        info = os.lstat(directory)
        if _private_directory(info) and len(str(directory / SOCKET_NAME)) < _SOCKET_PATH_MAX:
            return directory / SOCKET_NAME
    except (OSError, ValueError):
        pass  # none yet, or gone (a /tmp cleaner)
    directory = Path(tempfile.mkdtemp(prefix="helpdesk-"))
    remembered.write_text(str(directory))
    return directory / SOCKET_NAME


def _private_directory(info: os.stat_result) -> bool:
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700


def _private_run_directory(run_dir: Path) -> None:
    """supervisord's configuration (with supervisorctl's password), its socket, pid file and log."""
    run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    run_dir.chmod(0o700)


def _escape(value: str) -> str:
    """supervisord expands %(name)s in its values."""
    return value.replace("%", "%%")


def supervisord_config(processes: dict[str, str], run_dir: Path) -> str:
    """The configuration: one program per Procfile line, each run through a shell as honcho runs it."""
    _private_run_directory(run_dir)
    config = run_dir / "supervisord.conf"
    text = _SUPERVISORD.format(
        uid=os.getuid(),
        run_dir=_escape(str(run_dir)),
        socket=_escape(str(_socket_path(run_dir))),
        # supervisorctl reads it from this file (mode 600); the socket is the owner's only too.
        password=secrets.token_hex(16),
        python=_escape(shlex.quote(sys.executable)),
        config=_escape(shlex.quote(str(config))),
    )
    for name, command in processes.items():
        text += _PROGRAM.format(
            name=name,
            root=_escape(str(ROOT)),
            command=_escape(f"/bin/sh -c {shlex.quote('exec ' + command)}"),
            start_seconds=START_SECONDS,
            start_retries=START_RETRIES,
            stop_wait_seconds=STOP_WAIT_SECONDS,
        )
    return text


def _append_only(fd: int) -> None:
    """supervisord writes each process's output by opening /dev/stdout (/dev/stderr) again: into a
    regular file (`make run > run.log`) that is a second writer with an offset of its own, which
    overwrites what the first wrote. Appending, every writer writes at the end."""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)


def _refuse_a_second_runner(run_dir: Path) -> None:
    """Two runners on one DATA_DIR would share its SQLite files and run two beats."""
    try:
        pid = int((run_dir / "supervisord.pid").read_text())
        running = "supervisord" in Path(f"/proc/{pid}/cmdline").read_text()
    except (OSError, ValueError):
        return
    if running:
        raise SystemExit(
            f"Already running on {run_dir.parent} (supervisord, pid {pid}). Stop it first, "
            "or give this one a DATA_DIR (and PORT) of its own."
        )


def run(procfile: Path) -> None:
    processes = read_procfile(procfile)
    run_dir = data_dir() / "run"
    _private_run_directory(run_dir)
    _refuse_a_second_runner(run_dir)
    config = run_dir / "supervisord.conf"
    config.touch(mode=0o600)
    config.chmod(0o600)
    config.write_text(supervisord_config(processes, run_dir))
    # The Procfile's commands (gunicorn, celery) are this virtualenv's.
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    os.chdir(ROOT)
    for fd in (sys.stdout.fileno(), sys.stderr.fileno()):
        _append_only(fd)
    print(f"Processes: {', '.join(processes)} (supervisord; {BIN / 'supervisorctl'} -c {config} status)", flush=True)
    supervisord = str(BIN / "supervisord")
    os.execv(supervisord, [supervisord, "--nodaemon", "--configuration", str(config)])  # noqa: S606 (this venv's)


def alarm(config: str) -> None:
    """supervisord event listener: a process given up (FATAL) is reported on stderr."""
    from supervisor import childutils

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stopped with the others: no noise
    while True:
        _headers, payload = childutils.listener.wait(sys.stdin, sys.stdout)
        state = childutils.get_headers(payload.split("\n", 1)[0])
        name = state.get("processname", "?")
        print(
            f"\n{'!' * 78}\n"
            f"ERROR: process '{name}' died {START_RETRIES + 1} times within {START_SECONDS} s of starting and is "
            "no longer restarted.\nThe other processes keep running. Its output above says why; once fixed, "
            f"start it again with:\n  {BIN / 'supervisorctl'} -c {config} start {name}\n{'!' * 78}\n",
            file=sys.stderr,
            flush=True,
        )
        childutils.listener.ok(sys.stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.runner", description=__doc__.split("\n")[0])
    parser.add_argument("--procfile", type=Path, default=ROOT / "Procfile")
    commands = parser.add_subparsers(dest="command")
    listener = commands.add_parser("alarm", help="(supervisord's event listener, not for people)")
    listener.add_argument("--config", required=True)
    args = parser.parse_args(argv)
    if args.command == "alarm":
        alarm(args.config)
    else:
        run(args.procfile.resolve())


if __name__ == "__main__":
    main()
