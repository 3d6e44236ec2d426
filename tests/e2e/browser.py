"""The admin in real headless Chromium for the end-to-end tests: Debian's package driven by Playwright
(`executable_path`: no browser is ever downloaded). The fixtures `browser` and `page` are in conftest.py."""

import shutil
from pathlib import Path

import pytest

from tests.e2e.stack import ADMIN_PASSWORD

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

needs_chromium = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None,
    reason="Chromium is not installed (apt-get install chromium chromium-driver); .ci/run installs it",
)


def log_in(page, stack, email="admin@e2e.test", password=ADMIN_PASSWORD):
    page.goto(f"{stack.base_url}/admin/login/")
    page.fill("#id_username", email)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_selector("#site-name")
