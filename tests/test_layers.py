"""The dependency rule of STYLE.md, checked by import-linter (contracts in pyproject.toml)."""

from django.conf import settings
from importlinter.cli import lint_imports


def test_apps_import_only_downwards_and_the_webhook_modules_have_no_cycle(monkeypatch):
    monkeypatch.chdir(settings.BASE_DIR)

    assert lint_imports() == 0
