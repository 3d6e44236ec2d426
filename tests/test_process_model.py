"""The shipped defaults are the fast ones: every core serves with a shared cache, one process without."""

import json
import os
import runpy
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

from django.conf import settings

from tools.runner import read_procfile

GUNICORN_CONF = Path(settings.BASE_DIR) / "gunicorn.conf.py"


def gunicorn_settings(monkeypatch, **environment) -> dict:
    for name in ("REDIS_URL", "WEB_CONCURRENCY", "WEB_THREADS", "PORT", "WEB_ACCESS_LOG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(GUNICORN_CONF))


def test_with_a_shared_cache_the_web_server_runs_processes_from_the_cores(monkeypatch):
    conf = gunicorn_settings(monkeypatch, REDIS_URL="redis://cache:6379/0")

    assert conf["workers"] == os.cpu_count() * 2 + 1
    assert (conf["threads"], conf["worker_class"]) == (1, "sync")


def test_without_a_shared_cache_one_process_shares_its_local_cache_between_threads(monkeypatch):
    conf = gunicorn_settings(monkeypatch)

    assert (conf["workers"], conf["threads"], conf["worker_class"]) == (1, 8, "gthread")


def test_the_environment_overrides_the_process_counts(monkeypatch):
    conf = gunicorn_settings(monkeypatch, REDIS_URL="redis://cache:6379/0", WEB_CONCURRENCY="7", WEB_THREADS="2")

    assert (conf["workers"], conf["threads"], conf["worker_class"]) == (7, 2, "gthread")


def test_the_access_log_never_names_the_http_basic_user(monkeypatch):
    conf = gunicorn_settings(monkeypatch, PORT="9123")

    assert conf["bind"] == "0.0.0.0:9123"
    assert "%(u)s" not in conf["access_log_format"]


def test_the_access_log_writes_a_signed_urls_token_as_a_placeholder(monkeypatch):
    from gunicorn.config import Config

    conf = gunicorn_settings(monkeypatch)
    config = Config()
    config.set("errorlog", os.devnull)
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": "/api/v1/anexos/um.token.assinado?download=1",
        "PATH_INFO": "/api/v1/anexos/um.token.assinado",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "192.0.2.1",
    }
    response = SimpleNamespace(status="200 OK", headers=[], sent=10)

    # What access() writes is the format filled from atoms() (the hook the shipped class overrides); filled
    # here, without the process-wide logging state other tests change.
    atoms = conf["logger_class"](config).atoms(
        response, SimpleNamespace(headers=[]), environ, timedelta(milliseconds=5)
    )

    assert conf["access_log_format"] % atoms == '192.0.2.1 "GET /api/v1/anexos/{token} HTTP/1.1" 200 10 5ms'


def test_no_control_socket_is_shared_between_servers_of_one_user(monkeypatch):
    """gunicorn 27 opens $HOME/.gunicorn/gunicorn.ctl by default: one path for every server of a user."""
    from gunicorn.config import Config

    conf = gunicorn_settings(monkeypatch)
    config = Config()
    config.set("control_socket_disable", conf["control_socket_disable"])

    assert config.control_socket_disable is True


def test_the_procfile_runs_gunicorn_with_this_configuration():
    web = read_procfile(Path(settings.BASE_DIR) / "Procfile")["web"]

    assert "--config gunicorn.conf.py" in web


def test_workers_default_to_one_process_more_than_the_cores_each_sending_on_8_threads():
    """Webhook attempts wait on receivers: each process sends on threads (docs/decisions.md, "Fair,
    isolated delivery"), so a slow receiver holds a thread, not a process."""
    assert (os.cpu_count() or 1) + 1 == settings.CELERY_WORKER_CONCURRENCY
    assert settings.WEBHOOK_SEND_THREADS == 8


def settings_under(tmp_path, **environment) -> dict:
    """The settings module as a process started with `environment` would load it (nothing is connected)."""
    script = (
        "import json, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; "
        "from config import settings as s; "
        "print(json.dumps({'db': s.DATABASES['default'], 'concurrency': s.CELERY_WORKER_CONCURRENCY}, default=str))"
    )
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(DATA_DIR=str(tmp_path), **environment)
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_postgresql_connections_persist_health_checked_with_bounded_connects(tmp_path):
    database = settings_under(tmp_path, DATABASE_URL="postgres://app:secret@db.internal:5432/helpdesk")["db"]

    assert database["ENGINE"] == "foundation.db.postgresql"
    assert database["CONN_MAX_AGE"] == 600
    assert database["CONN_HEALTH_CHECKS"] is True
    assert database["OPTIONS"] == {
        "connect_timeout": 2,  # the least psycopg accepts: a live server answers in milliseconds
        "tcp_user_timeout": 30_000,
        "keepalives_idle": 30,
        "keepalives_interval": 10,
        "keepalives_count": 3,
    }
    assert "ANSWER_TIMEOUT" not in database  # workers and migrations may run long statements
    assert "PROBE_AFTER" not in database


def test_the_web_process_bounds_every_statement(tmp_path):
    environment = {"DATABASE_URL": "postgres://app:secret@db.internal:5432/helpdesk", "DB_STATEMENT_TIMEOUT_MS": "5000"}

    database = settings_under(tmp_path, **environment)["db"]

    assert database["OPTIONS"]["options"] == "-c statement_timeout=5000"
    assert database["ANSWER_TIMEOUT"] == 6.0  # a frozen server cannot enforce statement_timeout
    # A statement unanswered for 1 s: does the server still answer a new connection (1 s more)?
    assert database["PROBE_AFTER"] == 1.0
    wsgi = (Path(settings.BASE_DIR) / "config" / "wsgi.py").read_text()
    assert 'os.environ.setdefault("DB_STATEMENT_TIMEOUT_MS", "5000")' in wsgi


def test_the_answer_timeout_can_be_set_or_turned_off(tmp_path):
    environment = {"DATABASE_URL": "postgres://app:secret@db.internal:5432/helpdesk", "DB_STATEMENT_TIMEOUT_MS": "5000"}

    set_to_two = settings_under(tmp_path / "a", DB_ANSWER_TIMEOUT="2", **environment)["db"]
    turned_off = settings_under(tmp_path / "b", DB_ANSWER_TIMEOUT="0", **environment)["db"]

    assert set_to_two["ANSWER_TIMEOUT"] == 2.0
    assert "ANSWER_TIMEOUT" not in turned_off


def test_the_probe_can_be_set_or_turned_off(tmp_path):
    environment = {"DATABASE_URL": "postgres://app:secret@db.internal:5432/helpdesk", "DB_STATEMENT_TIMEOUT_MS": "5000"}

    set_to_half = settings_under(tmp_path / "a", DB_PROBE_AFTER="0.5", **environment)["db"]
    turned_off = settings_under(tmp_path / "b", DB_PROBE_AFTER="0", **environment)["db"]

    assert set_to_half["PROBE_AFTER"] == 0.5
    assert "PROBE_AFTER" not in turned_off
