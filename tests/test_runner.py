"""`make run`'s runner (tools.runner): the Procfile, as written, under supervisord."""

import configparser
import hashlib
import os
import stat
import tempfile
from pathlib import Path

from django.conf import settings

from tools import runner

ROOT = Path(settings.BASE_DIR)


def _parsed(text: str) -> configparser.ConfigParser:
    # supervisord's own reading of %: %(name)s expands, %% is a percent sign.
    parser = configparser.ConfigParser(interpolation=configparser.BasicInterpolation())
    parser.read_string(text)
    return parser


def test_every_procfile_line_is_a_program_restarted_when_it_dies(tmp_path):
    processes = runner.read_procfile(ROOT / "Procfile")

    config = _parsed(runner.supervisord_config(processes, tmp_path))

    programs = {
        section.removeprefix("program:"): config[section] for section in config if section.startswith("program:")
    }
    assert list(programs) == ["web", "worker", "beat"]
    for name, program in programs.items():
        assert program["command"] == f"/bin/sh -c 'exec {processes[name]}'"
        assert program["directory"] == str(ROOT)
        assert (program["autostart"], program["autorestart"]) == ("true", "true")
        # TERM to the process itself (gunicorn and Celery stop gracefully), the whole group killed only
        # when it does not stop in time.
        assert (program["stopsignal"], program["killasgroup"]) == ("TERM", "true")
        assert "stopasgroup" not in program
        assert program["stdout_logfile"] == "/dev/stdout"
    assert config["eventlistener:alarm"]["events"] == "PROCESS_STATE_FATAL"
    assert config["supervisord"]["nodaemon"] == "true"


def test_make_run_runs_the_procfile_with_this_runner():
    makefile = (ROOT / "Makefile").read_text()

    assert "$(PY) -m tools.runner" in makefile
    assert "honcho start" not in makefile


def test_a_command_reaches_the_shell_exactly_as_the_procfile_writes_it(tmp_path):
    command = """printf '%s 100%% "quoted" it'"'"'s\\n' ok"""

    config = _parsed(runner.supervisord_config({"odd": command}, tmp_path))

    assert config["program:odd"]["command"] == "/bin/sh -c " + runner.shlex.quote("exec " + command)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_control_socket_is_in_the_run_directory_readable_by_this_user_only(tmp_path):
    run_dir = tmp_path / "var" / "run"

    config = _parsed(runner.supervisord_config({"web": "true"}, run_dir))

    assert config["unix_http_server"]["file"] == str(run_dir / "supervisor.sock")
    assert config["supervisorctl"]["serverurl"] == f"unix://{run_dir / 'supervisor.sock'}"
    assert mode(run_dir) == 0o700


def test_the_control_socket_stays_within_the_length_a_unix_address_allows(tmp_path):
    deep = tmp_path / ("d" * 120)

    config = _parsed(runner.supervisord_config({"web": "true"}, deep))

    socket = config["unix_http_server"]["file"]
    assert len(socket) < 100
    assert config["supervisorctl"]["serverurl"] == f"unix://{socket}"
    assert config["unix_http_server"]["password"] == config["supervisorctl"]["password"]


def test_a_deep_data_dir_gets_a_private_socket_directory_no_other_user_could_have_made(tmp_path):
    deep = tmp_path / ("d" * 120)
    # The name an earlier version derived from the path, made first by another local user.
    predictable = (
        Path(tempfile.gettempdir()) / f"helpdesk-supervisor-{hashlib.sha256(str(deep).encode()).hexdigest()[:16]}.sock"
    )

    first = Path(_parsed(runner.supervisord_config({"web": "true"}, deep))["unix_http_server"]["file"])
    again = Path(_parsed(runner.supervisord_config({"web": "true"}, deep))["unix_http_server"]["file"])

    assert first != predictable
    assert first.name == "supervisor.sock"
    info = os.lstat(first.parent)
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700
    assert again == first  # the same directory while it stays private
    first.parent.chmod(0o755)
    replaced = Path(_parsed(runner.supervisord_config({"web": "true"}, deep))["unix_http_server"]["file"])
    assert replaced.parent != first.parent
    assert mode(replaced.parent) == 0o700
    for directory in (first.parent, replaced.parent):
        directory.rmdir()
