"""Least-privilege keys: `escopos`, `expira_em` and `redes_permitidas` on POST /api/api-keys, shown in
the list, and enforced on the partner API (403 on `escopo` or `origem`, 401 on `api_key` once expired)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.models import ApiCredential
from integrations.scopes import Scope
from integrations.services import credential_create
from tests.assertions import api_timestamp, assert_error, assert_validation_error, bearer_client
from tests.factories import credential_of, make_ticket

URL = "/api/api-keys"
TICKETS = "/api/v1/tickets"
NEW_TICKET = {
    "assunto": "Pedido atrasado",
    "descricao": "Não chegou",
    "solicitante": {"nome": "Cliente", "email": "cliente@example.test"},
}


def create(manager, **body):
    return manager.post(URL, {"nome": "ERP", **body}, format="json")


# --- Created and shown ---------------------------------------------------------------------------------


def test_a_key_with_scopes_expiry_and_networks_shows_them_at_creation_and_in_the_list(manager):
    expires = (timezone.now() + timedelta(days=30)).replace(microsecond=0)

    response = create(
        manager,
        escopos=["tickets:escrever", "tickets:ler"],
        expira_em=expires.isoformat(),
        redes_permitidas=["203.0.113.7/24", "2001:db8::/48", "198.51.100.10"],
    )

    assert response.status_code == 201, response.content
    created = response.json()["data"]
    restrictions = {
        "escopos": ["tickets:ler", "tickets:escrever"],  # the catalogue's order
        "expira_em": api_timestamp(expires),
        "redes_permitidas": ["203.0.113.0/24", "2001:db8::/48", "198.51.100.10/32"],  # normalised
    }
    assert {name: created[name] for name in restrictions} == restrictions
    [listed] = manager.get(URL).json()["data"]
    assert {name: listed[name] for name in restrictions} == restrictions


def test_a_key_without_restrictions_shows_nulls_and_may_do_everything(manager):
    response = create(manager)

    assert response.status_code == 201
    created = response.json()["data"]
    assert (created["escopos"], created["expira_em"], created["redes_permitidas"]) == (None, None, None)
    key = bearer_client(created["chave"])
    assert key.post(TICKETS, NEW_TICKET, format="json").status_code == 201
    assert key.get("/api/v1/eventos").status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"escopos": ["tickets:ler", "tickets:apagar"]}, "escopos"),
        ({"escopos": []}, "escopos"),
        ({"escopos": "tickets:ler"}, "escopos"),
        ({"escopos": ["tickets:ler"] * 8}, "escopos"),  # more names than the catalogue has
        ({"expira_em": "2001-01-01T00:00:00Z"}, "expira_em"),
        ({"expira_em": "2999-01-01T00:00:00"}, "expira_em"),  # no offset: ambiguous
        ({"expira_em": "amanhã"}, "expira_em"),
        ({"expira_em": "9999-12-31T23:00:00-05:00"}, "expira_em"),  # past what a database stores
        ({"redes_permitidas": ["10.0.0.0/33"]}, "redes_permitidas"),
        ({"redes_permitidas": ["intranet"]}, "redes_permitidas"),
        ({"redes_permitidas": []}, "redes_permitidas"),
        ({"redes_permitidas": [f"10.0.{n}.0/24" for n in range(21)]}, "redes_permitidas"),
    ],
)
def test_bad_restrictions_are_a_422_on_their_field_and_create_nothing(manager, organization, body, field):
    response = create(manager, **body)

    assert_validation_error(response, field)
    assert not ApiCredential.objects.filter(organization=organization).exists()


def test_an_unknown_scope_is_named_in_the_message(manager):
    response = create(manager, escopos=["tickets:apagar"])

    assert "tickets:apagar" in response.json()["errors"]["escopos"][0]


# --- Enforced on the partner API ------------------------------------------------------------------------


def test_a_read_only_key_reads_but_cannot_create_a_ticket(organization):
    key = bearer_client(credential_create(organization=organization, name="BI", scopes=[Scope.TICKETS_READ])[1])
    make_ticket(organization)

    assert key.get(TICKETS).status_code == 200
    response = key.post(TICKETS, NEW_TICKET, format="json")

    assert_error(response, 403, "Acesso negado.", "escopo")
    assert "tickets:escrever" in response.json()["errors"]["message"]
    assert organization.tickets.count() == 1


def test_a_scoped_key_gets_the_405_of_a_method_the_route_does_not_serve(organization):
    key = bearer_client(credential_create(organization=organization, name="BI", scopes=[Scope.TICKETS_READ])[1])

    response = key.delete(TICKETS)

    assert_error(response, 405, "Método não permitido.", "method")


def test_an_expired_key_is_refused_like_a_revoked_one(organization):
    credential, key = credential_create(
        organization=organization, name="Temporária", expires_at=timezone.now() + timedelta(hours=1)
    )
    client = bearer_client(key)
    assert client.get(TICKETS).status_code == 200

    ApiCredential.objects.filter(pk=credential.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get(TICKETS)

    assert_error(response, 401, "Não autenticado.", "api_key")


def test_a_key_is_refused_outside_its_networks_and_accepted_inside(organization):
    key = credential_create(
        organization=organization, name="Filial", allowed_networks=["203.0.113.0/24", "2001:db8:1::/48"]
    )[1]
    client = bearer_client(key)

    outside = client.get(TICKETS, REMOTE_ADDR="198.51.100.9")
    outside_v6 = client.get(TICKETS, REMOTE_ADDR="2001:db8:2::1")

    assert_error(outside, 403, "Acesso negado.", "origem")
    assert_error(outside_v6, 403, "Acesso negado.", "origem")
    assert client.get(TICKETS, REMOTE_ADDR="203.0.113.200").status_code == 200
    assert client.get(TICKETS, REMOTE_ADDR="2001:db8:1:5::9").status_code == 200


def test_a_refused_origin_creates_nothing(organization):
    key = credential_create(organization=organization, name="Filial", allowed_networks=["203.0.113.0/24"])[1]

    response = bearer_client(key).post(TICKETS, NEW_TICKET, format="json", REMOTE_ADDR="198.51.100.9")

    assert_error(response, 403, "Acesso negado.", "origem")
    assert not organization.tickets.exists()


def test_a_forged_client_address_does_not_open_a_key_bound_to_networks(organization, settings):
    """The proxy's header names the client only when a trusted proxy sent it; anyone else may forge it."""
    settings.RATELIMIT_IP_META_KEY = "HTTP_X_REAL_IP"
    settings.TRUSTED_PROXIES = ["10.0.0.10"]
    client = bearer_client(
        credential_create(organization=organization, name="Filial", allowed_networks=["203.0.113.0/24"])[1]
    )

    forged = client.get(TICKETS, REMOTE_ADDR="198.51.100.9", HTTP_X_REAL_IP="203.0.113.5")
    through_the_proxy = client.get(TICKETS, REMOTE_ADDR="10.0.0.10", HTTP_X_REAL_IP="203.0.113.5")

    assert_error(forged, 403, "Acesso negado.", "origem")
    assert through_the_proxy.status_code == 200


def test_restrictions_are_the_keys_own(organization):
    """A scoped key of the organization does not narrow its other keys."""
    credential_create(organization=organization, name="BI", scopes=[Scope.TICKETS_READ])
    full = credential_create(organization=organization, name="ERP")[1]

    assert bearer_client(full).post(TICKETS, NEW_TICKET, format="json").status_code == 201
    assert credential_of(full).scopes is None
