"""Celery tasks that raise are counted by task name.

The tasks run eagerly, through Celery's tracer and signals. Outside a test transaction
(transactional_db): around a task, config/celery.py closes a connection whose autocommit is
off, as Django does after a request, which inside the test's transaction would close it.
"""

from integrations import tasks
from tests.metrics import scrape

FAILURES = "helpdesk_celery_task_failures_total"
DISPATCH = "integrations.dispatch_due_deliveries"


def test_a_task_that_raises_is_counted_by_its_name(transactional_db, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("database gone")

    monkeypatch.setattr(tasks, "deliveries_claim_due", broken)
    before = scrape()

    result = tasks.dispatch_due_deliveries.apply()

    after = scrape()
    assert result.failed()
    assert after.since(before, FAILURES, task=DISPATCH) == 1
    assert sum(after.named(FAILURES).values()) - sum(before.named(FAILURES).values()) == 1


def test_a_task_that_succeeds_counts_no_failure(transactional_db):
    before = scrape()

    result = tasks.dispatch_due_deliveries.apply()

    assert result.successful()
    assert scrape().named(FAILURES) == before.named(FAILURES)
