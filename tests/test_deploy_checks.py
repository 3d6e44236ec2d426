"""Deploy checks: the documented production settings pass `check --deploy`, and a misconfigured
web server, worker or beat refuses to start, in the checks' own words (issue 11, item 3)."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
OPERATIONS = ROOT / "docs" / "operations.md"


def production_settings() -> dict[str, str]:
    """The `env production` block of docs/operations.md, angle-bracket placeholders filled in."""
    block = re.search(r"```env production\n(.*?)```", OPERATIONS.read_text(), re.S).group(1)
    values = {}
    for line in block.strip().splitlines():
        name, _, value = line.strip().partition("=")
        values[name] = re.sub(r"<[^>]*>", lambda _: secrets.token_urlsafe(40), value)
    return values


def run(command: list[str], tmp_path, **environment) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "REDIS_URL", "WEBHOOK_", "DEBUG"))
    }
    clean.update(DATA_DIR=str(tmp_path / "data"), DJANGO_SETTINGS_MODULE="config.settings", **environment)
    return subprocess.run(command, cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120)


def test_the_documented_production_settings_pass_check_deploy(tmp_path):
    settings = production_settings()
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "JWT_SIGNING_KEY", "ALLOWED_HOSTS"} <= settings.keys()

    result = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path, **settings)

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_without_the_hsts_promises_check_deploy_warns_about_exactly_them(tmp_path):
    settings = production_settings()
    del settings["SECURE_HSTS_INCLUDE_SUBDOMAINS"], settings["SECURE_HSTS_PRELOAD"]

    result = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path, **settings)

    assert result.returncode != 0
    assert sorted(set(re.findall(r"security\.W\d+", result.stderr))) == ["security.W005", "security.W021"]


MISCONFIGURATIONS = {
    "keys-generated-with-a-shared-database": (
        {"DATABASE_URL": "postgres://helpdesk:x@db.internal:5432/helpdesk", "REDIS_URL": "redis://cache:6379/0"},
        "helpdesk.E001",
    ),
    "insecure-webhook-urls-in-production": ({"WEBHOOK_ALLOW_INSECURE_URLS": "true"}, "integrations.E002"),
    "private-networks-in-production": ({"WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE": "true"}, "integrations.E001"),
    "several-web-processes-without-a-shared-cache": ({"WEB_CONCURRENCY": "3"}, "without a shared cache"),
    "a-short-metrics-token": ({"METRICS_TOKEN": "metrics-secret"}, "helpdesk.E002"),
}


@pytest.mark.parametrize(("environment", "reason"), MISCONFIGURATIONS.values(), ids=MISCONFIGURATIONS.keys())
def test_the_web_server_refuses_to_start_misconfigured(tmp_path, environment, reason):
    result = run(
        [str(BIN / "gunicorn"), "config.wsgi", "--config", "gunicorn.conf.py", "--check-config"],
        tmp_path,
        **environment,
    )

    assert result.returncode != 0
    assert reason in result.stderr + result.stdout


@pytest.mark.parametrize("process", ["worker", "beat"])
def test_a_worker_and_beat_refuse_to_start_misconfigured(tmp_path, process):
    result = run(
        [str(BIN / "celery"), "-A", "config", process, "--loglevel", "INFO"],
        tmp_path,
        WEBHOOK_ALLOW_INSECURE_URLS="true",
        CELERY_BROKER_URL="memory://",
    )

    assert result.returncode != 0
    assert "refusing to start" in result.stderr
    assert "integrations.E002" in result.stderr


def test_a_well_configured_web_server_starts(tmp_path):
    result = run([str(BIN / "gunicorn"), "config.wsgi", "--config", "gunicorn.conf.py", "--check-config"], tmp_path)

    assert result.returncode == 0, result.stderr


def test_debug_allows_the_development_settings(tmp_path):
    result = run(
        [str(BIN / "gunicorn"), "config.wsgi", "--config", "gunicorn.conf.py", "--check-config"],
        tmp_path,
        DEBUG="true",
        WEBHOOK_ALLOW_INSECURE_URLS="true",
    )

    assert result.returncode == 0, result.stderr
