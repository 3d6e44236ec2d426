import pytest

from tests.e2e.browser import ARTIFACTS, CHROMIUM
from tests.e2e.stack import Receiver, RunnerStack, Stack

STACKS = ("stack", "runner_stack", "sla_stack")


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    running = Stack(tmp_path_factory.mktemp("e2e")).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def runner_stack(tmp_path_factory):
    """The service under `make run`'s runner (tools.runner), on the embedded default."""
    running = RunnerStack(tmp_path_factory.mktemp("e2e-runner")).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def receiver():
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _print_logs_on_failure(request):
    yield
    stacks = [request.getfixturevalue(name) for name in STACKS if name in request.fixturenames]
    for running in stacks:
        # Each test brings its own webhooks; an organization may hold at most 10.
        for webhook in running.panel("GET", "/api/webhooks")[1]["data"]:
            running.panel("DELETE", f"/api/webhooks/{webhook['id']}")
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for running in stacks:
            for log in sorted(running.logs.glob("*.log")):
                print(f"----- {log.name} (last 60 lines) -----")
                print("\n".join(log.read_text(errors="replace").splitlines()[-60:]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


# The admin in Chromium (tests/e2e/browser.py): one browser per module, a fresh context per test.
@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        running = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield running
        running.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
