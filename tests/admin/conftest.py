"""Fixtures of the admin tests."""

import pytest


@pytest.fixture
def staff(client, admin):
    """A Django test client logged in to the admin as `organization`'s admin (staff, Suporte group)."""
    client.force_login(admin)
    return client


@pytest.fixture
def insecure_webhook_urls(settings):
    """Lets webhooks point at http://127.0.0.1 without DNS, as in development."""
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
