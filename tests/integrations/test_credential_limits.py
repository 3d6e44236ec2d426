"""API keys per organization are capped, and requests without a valid key are limited per address."""

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from rest_framework.test import APIClient

from integrations.models import ApiCredential
from integrations.services import credential_create, credential_revoke
from tests.assertions import assert_error, assert_validation_error


@pytest.fixture
def two_keys_at_most(settings):
    settings.API_KEYS_PER_ORGANIZATION = 2


def test_the_api_refuses_a_key_past_the_organizations_cap(manager, organization, two_keys_at_most):
    assert manager.post("/api/api-keys", {"nome": "Um"}, format="json").status_code == 201
    assert manager.post("/api/api-keys", {"nome": "Dois"}, format="json").status_code == 201

    refused = manager.post("/api/api-keys", {"nome": "Três"}, format="json")

    assert_validation_error(refused, "credencial")
    assert ApiCredential.objects.filter(organization=organization).count() == 2


def test_revoked_keys_do_not_count_against_the_cap(manager, organization, two_keys_at_most):
    first, _ = credential_create(organization=organization, name="Um")
    credential_create(organization=organization, name="Dois")
    credential_revoke(credential=first)

    assert manager.post("/api/api-keys", {"nome": "Três"}, format="json").status_code == 201


def test_expired_keys_do_not_count_against_the_cap(manager, organization, two_keys_at_most):
    first, _ = credential_create(organization=organization, name="Um", expires_at=timezone.now() + timedelta(hours=1))
    credential_create(organization=organization, name="Dois")
    ApiCredential.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert manager.post("/api/api-keys", {"nome": "Três"}, format="json").status_code == 201


def test_the_cap_is_per_organization(manager, organization, other_organization, two_keys_at_most):
    for name in ("Um", "Dois"):
        credential_create(organization=other_organization, name=name)

    assert manager.post("/api/api-keys", {"nome": "Nossa"}, format="json").status_code == 201


def test_the_admin_and_the_command_apply_the_same_cap(client, admin, organization, two_keys_at_most):
    client.force_login(admin)
    staff = client
    for name in ("Um", "Dois"):
        credential_create(organization=organization, name=name)

    page = staff.post("/admin/integrations/apicredential/add/", {"name": "Três"})
    with pytest.raises(CommandError):
        call_command("create_api_key", "--organization", str(organization.pk), "--name", "Quatro", "--json")

    assert page.status_code == 200
    assert "Limite de 2 credenciais ativas" in page.content.decode()
    assert ApiCredential.objects.filter(organization=organization).count() == 2


def test_requests_without_a_valid_key_are_limited_per_address(partner, db, settings, frozen_rate_limit_clock):
    settings.PARTNER_UNAUTHENTICATED_RATE_LIMIT = "3/m"
    guesser = APIClient(REMOTE_ADDR="10.5.5.5")
    guesses = ["", "Bearer hdk_live_invalida", "Basic bm9wZTo=", ""]

    answers = [guesser.get("/api/v1/tickets", HTTP_AUTHORIZATION=header) for header in guesses]

    assert [answer.status_code for answer in answers[:3]] == [401, 401, 401]
    assert_error(answers[3], 429, "Limite de requisições excedido.", "rate_limit")
    assert int(answers[3]["Retry-After"]) >= 1
    assert APIClient(REMOTE_ADDR="10.5.5.6").get("/api/v1/tickets").status_code == 401
    assert partner.get("/api/v1/tickets", REMOTE_ADDR="10.5.5.5").status_code == 200


def test_the_command_prints_the_cap_as_json(organization, two_keys_at_most, capsys):
    for name in ("Um", "Dois"):
        credential_create(organization=organization, name=name)

    with pytest.raises(CommandError):
        call_command("create_api_key", "--organization", str(organization.pk), "--name", "Três", "--json")

    assert "credencial" in json.loads(capsys.readouterr().out)["error"]
