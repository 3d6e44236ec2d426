import pytest

from tests.e2e.stack import Receiver, Stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    running = Stack(tmp_path_factory.mktemp("e2e")).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def receiver():
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _print_logs_on_failure(request, stack):
    yield
    # Each test brings its own webhooks; an organization may hold at most 10.
    for webhook in stack.panel("GET", "/api/webhooks")[1]["data"]:
        stack.panel("DELETE", f"/api/webhooks/{webhook['id']}")
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for log in sorted(stack.logs.glob("*.log")):
            print(f"----- {log.name} (last 60 lines) -----")
            print("\n".join(log.read_text(errors="replace").splitlines()[-60:]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
