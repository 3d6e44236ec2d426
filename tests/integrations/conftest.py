"""Fixtures of the webhook and credential tests."""

import pytest

from integrations import tasks
from integrations.models import Webhook
from tests.factories import make_webhook


@pytest.fixture
def queued(monkeypatch) -> list[list]:
    """Every message handed to the broker (none reaches one): [delivery_id, expected_attempts]."""
    sent: list[list] = []
    monkeypatch.setattr(tasks.deliver_webhook, "apply_async", lambda *, args, **options: sent.append(list(args)))
    # No broker holds them either: its queue is empty, whatever an earlier test left in the real one.
    monkeypatch.setattr(tasks, "_queue_is_empty", lambda: True)
    return sent


@pytest.fixture
def other_webhook(other_organization, example_dns) -> Webhook:
    """A webhook of `other_organization` (B), which organization A must never see nor touch."""
    return make_webhook(other_organization, name="Globex")
