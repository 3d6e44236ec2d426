import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.factories import make_agent, make_key, make_organization


@pytest.fixture(autouse=True)
def _isolated_cache_and_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    # Real hashing costs ~0.3 s per user; the hasher is not what these tests test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def organization(db):
    return make_organization("Acme")


@pytest.fixture
def other_organization(db):
    return make_organization("Globex")


@pytest.fixture
def agent(organization):
    return make_agent(organization, name="Beatriz Atendente")


@pytest.fixture
def api_key(organization):
    return make_key(organization)


@pytest.fixture
def anon_client():
    return APIClient()


@pytest.fixture
def partner(api_key):
    """An HTTP client authenticated as a partner of `organization`."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    return client


@pytest.fixture
def other_partner(other_organization):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(other_organization)}")
    return client
