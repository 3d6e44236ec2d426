"""docs/operations.md explains every environment variable the service reads (issue 11, item 4): each
one listed in .env.example, read by config/settings.py (`env.*("NAME")`, `os.environ`) or by the
web server's gunicorn.conf.py has a row of its own in the manual's "Environment variables" tables."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = ROOT / "docs" / "operations.md"

NAME = r"([A-Z][A-Z0-9_]*)"
# env.str("NAME", ...), env.int('NAME'), env.db_url("NAME"), env("NAME")
ENV_CALL = re.compile(r"\benv(?:\.\w+)?\(\s*[\"']" + NAME + r"[\"']")
# os.environ.get("NAME"), os.environ.setdefault("NAME", ...), os.environ["NAME"], os.getenv("NAME")
OS_ENVIRON = re.compile(r"\bos\.(?:environ(?:\.get|\.setdefault|\.pop)?|getenv)\s*[\(\[]\s*[\"']" + NAME + r"[\"']")
# `# NAME=value` or `NAME=value` lines of .env.example
EXAMPLE_LINE = re.compile(r"^\s*#?\s*" + NAME + r"=", re.M)


def read_in_code(path: Path) -> set[str]:
    text = path.read_text()
    return set(ENV_CALL.findall(text)) | set(OS_ENVIRON.findall(text))


def in_env_example() -> set[str]:
    return set(EXAMPLE_LINE.findall((ROOT / ".env.example").read_text()))


def explained() -> set[str]:
    """Variables with a row in the manual's "Environment variables" section: `| `NAME` | ...`."""
    text = OPERATIONS.read_text()
    section = re.search(r"^## Environment variables\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "docs/operations.md has no '## Environment variables' section"
    return set(re.findall(r"^\|\s*`" + NAME + r"`\s*\|", section.group(1), re.M))


def test_the_extraction_finds_the_variables_it_is_meant_to_find():
    """A broken pattern must not make the tests below pass on an empty set."""
    settings = read_in_code(ROOT / "config" / "settings.py")
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "METRICS_TOKEN", "DB_STATEMENT_TIMEOUT_MS"} <= settings
    assert len(settings) >= 45
    assert {"WEB_CONCURRENCY", "PORT", "WEB_ACCESS_LOG"} <= read_in_code(ROOT / "gunicorn.conf.py")
    assert {"DATA_DIR", "PROMETHEUS_MULTIPROC_DIR", "WORKER_METRICS_PORT"} <= in_env_example()
    assert {"DATABASE_URL", "PORT", "JWT_SIGNING_KEY"} <= explained()


def test_every_variable_of_env_example_is_explained():
    missing = sorted(in_env_example() - explained())
    assert not missing, f"in .env.example but not explained in docs/operations.md: {missing}"


def test_every_variable_the_settings_read_is_explained():
    missing = sorted(read_in_code(ROOT / "config" / "settings.py") - explained())
    assert not missing, f"read by config/settings.py but not explained in docs/operations.md: {missing}"


def test_every_variable_the_web_server_reads_is_explained():
    read = read_in_code(ROOT / "gunicorn.conf.py") | read_in_code(ROOT / "config" / "wsgi.py")
    missing = sorted(read - explained())
    assert not missing, f"read by gunicorn.conf.py or config/wsgi.py but not explained in docs/operations.md: {missing}"


def test_every_variable_the_settings_read_is_in_env_example():
    missing = sorted(read_in_code(ROOT / "config" / "settings.py") - in_env_example())
    assert not missing, f"read by config/settings.py but not listed in .env.example: {missing}"
