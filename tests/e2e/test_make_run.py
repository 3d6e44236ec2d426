"""`make run` survives its own processes: tools.runner (what the Makefile runs) keeps the
web server serving while a dead process is restarted, and reports one it has to give up."""

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request

from tests.e2e.stack import ROOT, VENV_BIN, wait_for
from tools.ports import free_port


class HealthWatch:
    """Asks /api/health every 50 ms from another thread and keeps every answer (None: no answer)."""

    def __init__(self, base_url: str):
        self.url = f"{base_url}/api/health"
        self.answers: list[int | None] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _ask(self) -> int | None:
        try:
            with urllib.request.urlopen(self.url, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code
        except OSError:
            return None

    def _run(self) -> None:
        while not self._stop.is_set():
            self.answers.append(self._ask())
            self._stop.wait(0.05)

    def __enter__(self) -> "HealthWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_a_worker_killed_with_sigkill_is_restarted_while_the_web_server_keeps_answering(runner_stack, receiver):
    path = receiver.new_path(200)
    runner_stack.create_webhook(receiver.base_url + path)
    ticket = runner_stack.create_ticket()
    web, old_worker = runner_stack.running_pid("web"), runner_stack.running_pid("worker")

    with HealthWatch(runner_stack.base_url) as health:
        wait_for(lambda: health.answers, message="a first answer before the kill")
        os.kill(old_worker, signal.SIGKILL)
        new_worker = wait_for(
            lambda: (pid := runner_stack.running_pid("worker")) not in (None, old_worker) and pid,
            timeout=30,
            message="a new worker",
        )
        reply = runner_stack.agent_reply(ticket["id"], "Depois da queda do worker")
        request = wait_for(lambda: receiver.at(path), timeout=20, message="the delivery by the new worker")[0]
        answered = len(health.answers)
        wait_for(lambda: len(health.answers) > answered, message="an answer after the delivery")

    assert json.loads(request.body)["data"]["resposta"]["id"] == reply["id"]
    assert new_worker != old_worker
    assert set(health.answers) == {200}  # every answer, from before the kill to after the delivery
    assert runner_stack.running_pid("web") == web  # the web server was never restarted
    assert runner_stack.running_pid("beat") is not None
    assert "exited: worker (terminated by SIGKILL; not expected)" in runner_stack.output()
    # The dead worker's pool processes do not linger.
    wait_for(lambda: not _alive_in_group(old_worker), timeout=15, message="the old worker's pool to exit")


def _alive_in_group(process_group: int) -> bool:
    try:
        os.killpg(process_group, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_process_that_keeps_dying_at_start_is_reported_and_the_others_keep_serving(tmp_path):
    port = free_port()
    procfile = tmp_path / "Procfile"
    procfile.write_text(
        f"web: {sys.executable} -m http.server {port} --bind 127.0.0.1\n"
        "broken: sh -c \"echo 'cannot start: no such thing'; exit 3\"\n"
    )
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1"}
    config = tmp_path / "data" / "run" / "supervisord.conf"
    log = tmp_path / "runner.log"
    with open(log, "wb") as output:
        runner = subprocess.Popen(
            [sys.executable, "-m", "tools.runner", "--procfile", str(procfile)],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: "no longer restarted" in log.read_text(), timeout=40, message="the report")
        status = subprocess.run(
            [str(VENV_BIN / "supervisorctl"), "-c", str(config), "status"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            served = response.status
    finally:
        runner.terminate()
        runner.wait(timeout=60)

    output = log.read_text()
    assert "ERROR: process 'broken' died 4 times within 3 s of starting and is no longer restarted." in output
    assert f"supervisorctl -c {config} start broken" in output
    assert output.count("cannot start: no such thing") == 4
    assert [line.split()[:2] for line in status.splitlines()] == [
        ["alarm", "RUNNING"],
        ["broken", "FATAL"],
        ["web", "RUNNING"],
    ]
    assert served == 200
    assert runner.returncode == 0


def test_a_second_runner_on_the_same_data_dir_refuses_to_start(runner_stack):
    second = subprocess.run(
        [sys.executable, "-m", "tools.runner"],
        cwd=ROOT,
        env=runner_stack.env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert second.returncode == 1
    assert f"Already running on {runner_stack.data_dir} (supervisord, pid " in second.stderr
    # The first one's configuration (and so its supervisorctl password) is untouched.
    assert runner_stack.running_pid("web") is not None
