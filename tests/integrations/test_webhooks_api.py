"""Management API /api/webhooks: create, list, read, update, delete, rules and access."""

import base64
import uuid

import pytest

from integrations.models import Webhook
from tests.assertions import assert_error, assert_validation_error
from tests.contract import ALL_EVENTS
from tests.factories import make_webhook

URL = "/api/webhooks"
CREATED = "Webhook criado. Guarde o segredo: ele não será exibido novamente."
WEBHOOK_FIELDS = {
    "id",
    "nome",
    "url",
    "eventos",
    "ativo",
    "criado_em",
    "atualizado_em",
    "desativado_em",
    "motivo_desativacao",
    "incluir",
}

pytestmark = pytest.mark.usefixtures("example_dns")


@pytest.fixture
def webhook(organization) -> Webhook:
    return make_webhook(
        organization,
        name="Integração",
        url="https://hooks.example.com/helpdesk",
        events=["ticket.resposta_publica", "ticket.resolvido"],
    )


def webhook_snapshot(webhook: Webhook) -> dict:
    """Every stored field of the webhook, to prove a refused request changed nothing."""
    webhook.refresh_from_db()
    return {
        "organization_id": webhook.organization_id,
        "name": webhook.name,
        "url": webhook.url,
        "events": webhook.events,
        "is_active": webhook.is_active,
        "secret": webhook.secret,
        "previous_secret": webhook.previous_secret,
        "previous_secret_expires_at": webhook.previous_secret_expires_at,
        "updated_at": webhook.updated_at,
    }


def valid_body(**overrides) -> dict:
    return {"nome": "CRM", "url": "https://hooks.example.com/helpdesk", "eventos": ["ticket.resolvido"], **overrides}


def assert_secret_format(secret: str) -> None:
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32


def assert_webhook_not_found(response) -> None:
    assert_error(response, 404, "Webhook não encontrado.", "id")


# --- Create ---------------------------------------------------------------------


def test_create_returns_200_with_the_webhook_and_its_secret(manager, organization):
    response = manager.post(URL, valid_body(eventos=["ticket.resposta_publica", "ticket.resolvido"]), format="json")

    assert response.status_code == 200
    body = response.json()
    assert body == {"success": True, "message": CREATED, "data": body["data"], "errors": []}
    data = body["data"]
    assert set(data) == WEBHOOK_FIELDS | {"segredo"}
    stored = Webhook.objects.get()
    assert data == {
        "id": str(stored.pk),
        "nome": "CRM",
        "url": "https://hooks.example.com/helpdesk",
        "eventos": ["ticket.resposta_publica", "ticket.resolvido"],
        "incluir": [],
        "ativo": True,
        "criado_em": data["criado_em"],
        "atualizado_em": data["atualizado_em"],
        "desativado_em": None,
        "motivo_desativacao": None,
        "segredo": stored.secret,
    }
    assert data["criado_em"].endswith("Z")
    assert data["atualizado_em"].endswith("Z")
    assert stored.organization_id == organization.pk
    assert stored.events == ["ticket.resposta_publica", "ticket.resolvido"]


def test_create_secret_is_whsec_followed_by_base64_of_32_bytes(manager):
    first = manager.post(URL, valid_body(), format="json").json()["data"]["segredo"]
    second = manager.post(URL, valid_body(nome="Outro"), format="json").json()["data"]["segredo"]

    assert_secret_format(first)
    assert_secret_format(second)
    assert first != second


def test_create_accepts_every_subscribable_event(manager):
    response = manager.post(URL, valid_body(eventos=ALL_EVENTS), format="json")

    assert response.status_code == 200
    assert response.json()["data"]["eventos"] == ALL_EVENTS


def test_create_stores_repeated_events_once(manager):
    response = manager.post(
        URL, valid_body(eventos=["ticket.resolvido", "ticket.resolvido", "ticket.resposta_publica"]), format="json"
    )

    assert response.status_code == 200
    assert response.json()["data"]["eventos"] == ["ticket.resolvido", "ticket.resposta_publica"]
    assert Webhook.objects.get().events == ["ticket.resolvido", "ticket.resposta_publica"]


def test_create_accepts_a_name_of_exactly_100_characters(manager):
    response = manager.post(URL, valid_body(nome="n" * 100), format="json")

    assert response.status_code == 200
    assert response.json()["data"]["nome"] == "n" * 100


def test_create_ignores_fields_the_client_may_not_set(manager, organization, other_organization):
    chosen_id = uuid.uuid4()
    response = manager.post(
        URL,
        valid_body(
            id=str(chosen_id),
            segredo="whsec_" + base64.b64encode(b"x" * 32).decode(),
            organization=str(other_organization.pk),
            organizacao=str(other_organization.pk),
        ),
        format="json",
    )

    assert response.status_code == 200
    stored = Webhook.objects.get()
    assert stored.pk != chosen_id
    assert stored.organization_id == organization.pk
    assert stored.secret != "whsec_" + base64.b64encode(b"x" * 32).decode()
    assert response.json()["data"]["segredo"] == stored.secret
    assert not Webhook.objects.filter(organization=other_organization).exists()


# --- List and read ------------------------------------------------------------------


def test_list_returns_the_organizations_webhooks_without_secrets(manager, organization):
    first = make_webhook(organization, name="Primeiro")
    second = make_webhook(organization, name="Segundo", url="https://outro.example.com/h", events=ALL_EVENTS)

    response = manager.get(URL)

    assert response.status_code == 200
    body = response.json()
    assert body == {"success": True, "message": "Webhooks listados.", "data": body["data"], "errors": []}
    assert isinstance(body["data"], list)
    assert [item["id"] for item in body["data"]] == [str(second.pk), str(first.pk)]
    assert all(set(item) == WEBHOOK_FIELDS for item in body["data"])
    assert body["data"][0] == {
        "id": str(second.pk),
        "nome": "Segundo",
        "url": "https://outro.example.com/h",
        "eventos": ALL_EVENTS,
        "incluir": [],
        "ativo": True,
        "criado_em": body["data"][0]["criado_em"],
        "atualizado_em": body["data"][0]["atualizado_em"],
        "desativado_em": None,
        "motivo_desativacao": None,
    }
    raw = response.content.decode()
    assert first.secret not in raw
    assert second.secret not in raw
    assert "segredo" not in raw


def test_list_is_empty_without_webhooks(manager):
    response = manager.get(URL)

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "Webhooks listados.", "data": [], "errors": []}


def test_list_never_shows_another_organizations_webhooks(manager, webhook, other_webhook):
    response = manager.get(URL)

    assert [item["id"] for item in response.json()["data"]] == [str(webhook.pk)]
    assert str(other_webhook.pk) not in response.content.decode()


def test_read_returns_the_webhook_without_its_secret(manager, webhook):
    response = manager.get(f"{URL}/{webhook.pk}")

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "success": True,
        "message": "Webhook encontrado.",
        "data": {
            "id": str(webhook.pk),
            "nome": "Integração",
            "url": "https://hooks.example.com/helpdesk",
            "eventos": ["ticket.resposta_publica", "ticket.resolvido"],
            "incluir": [],
            "ativo": True,
            "criado_em": body["data"]["criado_em"],
            "atualizado_em": body["data"]["atualizado_em"],
            "desativado_em": None,
            "motivo_desativacao": None,
        },
        "errors": [],
    }
    assert webhook.secret not in response.content.decode()
    assert "segredo" not in response.content.decode()


def test_secret_from_create_is_never_shown_again(manager):
    secret = manager.post(URL, valid_body(), format="json").json()["data"]["segredo"]
    webhook_id = Webhook.objects.get().pk

    listed = manager.get(URL)
    read = manager.get(f"{URL}/{webhook_id}")
    updated = manager.patch(f"{URL}/{webhook_id}", {"nome": "Renomeado"}, format="json")

    for response in (listed, read, updated):
        assert response.status_code == 200
        assert secret not in response.content.decode()
        assert "segredo" not in response.content.decode()


# --- Update ------------------------------------------------------------------------


def test_update_changes_name_url_events_and_active_without_showing_the_secret(manager, webhook):
    before = webhook_snapshot(webhook)

    response = manager.patch(
        f"{URL}/{webhook.pk}",
        {"nome": "CRM novo", "url": "https://outro.example.com/novo", "eventos": ["ticket.resolvido"], "ativo": False},
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "success": True,
        "message": "Webhook atualizado.",
        "data": {
            "id": str(webhook.pk),
            "nome": "CRM novo",
            "url": "https://outro.example.com/novo",
            "eventos": ["ticket.resolvido"],
            "incluir": [],
            "ativo": False,
            "criado_em": body["data"]["criado_em"],
            "atualizado_em": body["data"]["atualizado_em"],
            "desativado_em": body["data"]["desativado_em"],
            "motivo_desativacao": "Desativado manualmente.",
        },
        "errors": [],
    }
    assert webhook.secret not in response.content.decode()
    after = webhook_snapshot(webhook)
    assert (after["name"], after["url"], after["events"], after["is_active"]) == (
        "CRM novo",
        "https://outro.example.com/novo",
        ["ticket.resolvido"],
        False,
    )
    assert after["secret"] == before["secret"]
    assert after["previous_secret"] == ""
    assert after["updated_at"] > before["updated_at"]


def test_update_changes_only_the_given_fields(manager, webhook):
    before = webhook_snapshot(webhook)

    response = manager.patch(f"{URL}/{webhook.pk}", {"nome": "Só o nome"}, format="json")

    assert response.status_code == 200
    after = webhook_snapshot(webhook)
    assert after == {**before, "name": "Só o nome", "updated_at": after["updated_at"]}


def test_update_with_an_empty_body_changes_nothing(manager, webhook):
    before = webhook_snapshot(webhook)

    response = manager.patch(f"{URL}/{webhook.pk}", {}, format="json")

    assert response.status_code == 200
    assert response.json()["message"] == "Webhook atualizado."
    assert "segredo" not in response.json()["data"]
    assert webhook_snapshot(webhook) == before


def test_update_reactivates_a_webhook(manager, webhook):
    manager.patch(f"{URL}/{webhook.pk}", {"ativo": False}, format="json")

    response = manager.patch(f"{URL}/{webhook.pk}", {"ativo": True}, format="json")

    assert response.status_code == 200
    assert response.json()["data"]["ativo"] is True
    assert webhook_snapshot(webhook)["is_active"] is True


def test_regenerating_the_secret_returns_a_new_one_only_in_that_response(manager, webhook):
    old_secret = webhook.secret

    response = manager.patch(f"{URL}/{webhook.pk}", {"regenerar_segredo": True}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True
    assert body["message"] == "Webhook atualizado."
    assert set(body["data"]) == WEBHOOK_FIELDS | {"segredo"}
    new_secret = body["data"]["segredo"]
    assert_secret_format(new_secret)
    assert new_secret != old_secret
    assert old_secret not in response.content.decode()
    after = webhook_snapshot(webhook)
    assert after["secret"] == new_secret
    assert after["previous_secret"] == old_secret
    assert after["previous_secret_expires_at"] is not None

    for follow_up in (manager.get(f"{URL}/{webhook.pk}"), manager.get(URL)):
        assert follow_up.status_code == 200
        assert new_secret not in follow_up.content.decode()
        assert "segredo" not in follow_up.content.decode()


def test_regenerating_together_with_other_fields_applies_both(manager, webhook):
    old_secret = webhook.secret

    response = manager.patch(f"{URL}/{webhook.pk}", {"nome": "Rotação", "regenerar_segredo": True}, format="json")

    data = response.json()["data"]
    assert data["nome"] == "Rotação"
    assert data["segredo"] != old_secret
    assert webhook_snapshot(webhook)["secret"] == data["segredo"]


def test_regenerar_segredo_false_keeps_the_secret_hidden_and_unchanged(manager, webhook):
    before = webhook_snapshot(webhook)

    response = manager.patch(f"{URL}/{webhook.pk}", {"regenerar_segredo": False}, format="json")

    assert response.status_code == 200
    assert "segredo" not in response.json()["data"]
    assert webhook.secret not in response.content.decode()
    assert webhook_snapshot(webhook) == before


# --- Delete ------------------------------------------------------------------------


def test_delete_removes_the_webhook(manager, webhook, other_webhook):
    response = manager.delete(f"{URL}/{webhook.pk}")

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "Webhook removido.", "data": None, "errors": []}
    assert not Webhook.objects.filter(pk=webhook.pk).exists()
    assert Webhook.objects.filter(pk=other_webhook.pk).exists()
    assert_webhook_not_found(manager.get(f"{URL}/{webhook.pk}"))


def test_deleting_twice_answers_404_the_second_time(manager, webhook):
    assert manager.delete(f"{URL}/{webhook.pk}").status_code == 200

    assert_webhook_not_found(manager.delete(f"{URL}/{webhook.pk}"))


# --- Validation on create ------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "field"),
    [
        pytest.param({"nome": ""}, "nome", id="nome-blank"),
        pytest.param({"nome": "   "}, "nome", id="nome-whitespace"),
        pytest.param({"nome": "n" * 101}, "nome", id="nome-over-100"),
        pytest.param({"nome": None}, "nome", id="nome-null"),
        pytest.param({"nome": 123}, "nome", id="nome-not-text"),
        pytest.param({"url": "http://hooks.example.com/helpdesk"}, "url", id="url-http"),
        pytest.param({"url": "ftp://hooks.example.com/helpdesk"}, "url", id="url-ftp"),
        pytest.param({"url": "hooks.example.com/helpdesk"}, "url", id="url-no-scheme"),
        pytest.param({"url": "https://interno.example.com/h"}, "url", id="url-private-host"),
        pytest.param({"url": "https://metadados.example.com/h"}, "url", id="url-metadata-host"),
        pytest.param({"url": "https://misto.example.com/h"}, "url", id="url-mixed-answer"),
        pytest.param({"url": "https://127.0.0.1/h"}, "url", id="url-loopback-literal"),
        pytest.param({"url": "https://nao-resolve.example.com/h"}, "url", id="url-unresolvable"),
        pytest.param({"url": "https://user:pass@hooks.example.com/h"}, "url", id="url-userinfo"),
        pytest.param({"url": ""}, "url", id="url-blank"),
        pytest.param({"url": 42}, "url", id="url-not-text"),
        pytest.param({"eventos": []}, "eventos", id="eventos-empty"),
        pytest.param({"eventos": ["ticket.inexistente"]}, "eventos", id="eventos-unknown"),
        pytest.param({"eventos": ["ticket.resolvido", "ticket.outro"]}, "eventos", id="eventos-one-unknown"),
        pytest.param({"eventos": "ticket.resolvido"}, "eventos", id="eventos-string"),
        pytest.param({"eventos": {"ticket.resolvido": True}}, "eventos", id="eventos-object"),
        pytest.param({"eventos": None}, "eventos", id="eventos-null"),
    ],
)
def test_create_with_an_invalid_field_is_refused_and_writes_nothing(manager, override, field):
    response = manager.post(URL, valid_body(**override), format="json")

    assert_validation_error(response, field)
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("field", ["nome", "url", "eventos"])
def test_create_without_a_required_field_is_refused(manager, field):
    body = valid_body()
    del body[field]

    response = manager.post(URL, body, format="json")

    assert_validation_error(response, field)
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("eventos", [[1], [None], [["ticket.resolvido"]]], ids=["number", "null", "list"])
def test_create_with_an_event_that_is_not_text_names_its_position(manager, eventos):
    response = manager.post(URL, valid_body(eventos=eventos), format="json")

    assert_validation_error(response, "eventos.0")
    assert not Webhook.objects.exists()


def test_create_with_an_unknown_event_names_it_in_the_message(manager):
    response = manager.post(URL, valid_body(eventos=["ticket.mesclado_por_engano"]), format="json")

    assert_validation_error(response, "eventos")
    assert "ticket.mesclado_por_engano" in response.json()["errors"]["eventos"][0]


def test_the_eleventh_webhook_of_an_organization_is_refused(manager, organization):
    for n in range(10):
        make_webhook(organization, name=f"Webhook {n}")

    response = manager.post(URL, valid_body(nome="Décimo primeiro"), format="json")

    assert response.status_code == 422
    assert response.json() == {
        "success": False,
        "message": "Erro de validação",
        "errors": {"webhook": ["Limite de 10 webhooks por organização atingido."]},
    }
    assert Webhook.objects.filter(organization=organization).count() == 10
    assert not Webhook.objects.filter(name="Décimo primeiro").exists()


def test_the_tenth_webhook_is_accepted_through_the_api(manager, organization):
    for n in range(9):
        make_webhook(organization, name=f"Webhook {n}")

    response = manager.post(URL, valid_body(nome="Décimo"), format="json")

    assert response.status_code == 200
    assert Webhook.objects.filter(organization=organization).count() == 10


def test_the_limit_counts_only_the_callers_organization(manager, organization, other_organization):
    for n in range(10):
        make_webhook(other_organization, name=f"Globex {n}")

    response = manager.post(URL, valid_body(), format="json")

    assert response.status_code == 200
    assert Webhook.objects.filter(organization=organization).count() == 1


def test_deleting_a_webhook_frees_a_place_under_the_limit(manager, organization):
    webhooks = [make_webhook(organization, name=f"Webhook {n}") for n in range(10)]
    manager.delete(f"{URL}/{webhooks[0].pk}")

    response = manager.post(URL, valid_body(), format="json")

    assert response.status_code == 200
    assert Webhook.objects.filter(organization=organization).count() == 10


# --- Validation on update ------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"nome": ""}, "nome", id="nome-blank"),
        pytest.param({"nome": "n" * 101}, "nome", id="nome-over-100"),
        pytest.param({"nome": None}, "nome", id="nome-null"),
        pytest.param({"url": "http://hooks.example.com/h"}, "url", id="url-http"),
        pytest.param({"url": "https://interno.example.com/h"}, "url", id="url-private-host"),
        pytest.param({"url": "https://misto.example.com/h"}, "url", id="url-mixed-answer"),
        pytest.param({"url": "https://[::1]/h"}, "url", id="url-loopback-literal"),
        pytest.param({"eventos": []}, "eventos", id="eventos-empty"),
        pytest.param({"eventos": ["ticket.inexistente"]}, "eventos", id="eventos-unknown"),
        pytest.param({"eventos": "ticket.resolvido"}, "eventos", id="eventos-string"),
        pytest.param({"ativo": "false"}, "ativo", id="ativo-string"),
        pytest.param({"ativo": 0}, "ativo", id="ativo-number"),
        pytest.param({"regenerar_segredo": "true"}, "regenerar_segredo", id="regenerar-string"),
        pytest.param({"regenerar_segredo": 1}, "regenerar_segredo", id="regenerar-number"),
        pytest.param({"regenerar_segredo": None}, "regenerar_segredo", id="regenerar-null"),
    ],
)
def test_update_with_an_invalid_field_is_refused_and_changes_nothing(manager, webhook, body, field):
    before = webhook_snapshot(webhook)

    response = manager.patch(f"{URL}/{webhook.pk}", body, format="json")

    assert_validation_error(response, field)
    assert "segredo" not in response.content.decode().replace("regenerar_segredo", "")
    assert webhook_snapshot(webhook) == before


def test_update_with_one_invalid_field_applies_none_of_the_others(manager, webhook):
    before = webhook_snapshot(webhook)

    response = manager.patch(
        f"{URL}/{webhook.pk}",
        {"nome": "Novo", "ativo": False, "regenerar_segredo": True, "url": "https://interno.example.com/h"},
        format="json",
    )

    assert_validation_error(response, "url")
    assert webhook_snapshot(webhook) == before


# --- Tenancy: another organization's webhook answers as a missing one ---------------


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_another_organizations_webhook_is_not_found_and_unchanged(manager, other_webhook, method):
    before = webhook_snapshot(other_webhook)
    body = {"nome": "Tomado", "ativo": False, "regenerar_segredo": True} if method == "patch" else None

    response = getattr(manager, method)(f"{URL}/{other_webhook.pk}", body, format="json")

    assert_webhook_not_found(response)
    assert other_webhook.secret not in response.content.decode()
    assert webhook_snapshot(other_webhook) == before


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
@pytest.mark.parametrize(
    "webhook_id",
    [
        pytest.param(str(uuid.uuid4()), id="unknown-uuid"),
        pytest.param("abc", id="not-a-uuid"),
        pytest.param("123", id="number"),
        pytest.param("00000000-0000-0000-0000-00000000000g", id="almost-uuid"),
    ],
)
def test_unknown_webhook_id_is_not_found(manager, webhook, method, webhook_id):
    before = webhook_snapshot(webhook)
    body = {"nome": "Tomado"} if method == "patch" else None

    response = getattr(manager, method)(f"{URL}/{webhook_id}", body, format="json")

    assert_webhook_not_found(response)
    assert webhook_snapshot(webhook) == before


def test_patch_of_another_organizations_webhook_with_an_invalid_body_is_still_404(manager, other_webhook):
    before = webhook_snapshot(other_webhook)

    response = manager.patch(f"{URL}/{other_webhook.pk}", {"nome": ""}, format="json")

    assert_webhook_not_found(response)
    assert webhook_snapshot(other_webhook) == before


def test_not_found_answers_the_same_for_another_organizations_id_and_a_random_one(manager, other_webhook):
    foreign = manager.get(f"{URL}/{other_webhook.pk}").json()
    missing = manager.get(f"{URL}/{uuid.uuid4()}").json()

    assert foreign == missing


# --- Access ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "", None),
        ("post", "", "valid"),
        ("get", "/{id}", None),
        ("patch", "/{id}", {"nome": "Tomado", "regenerar_segredo": True}),
        ("delete", "/{id}", None),
    ],
)
def test_user_without_the_permission_gets_403(agent_client, webhook, method, path, body):
    before = webhook_snapshot(webhook)
    payload = valid_body() if body == "valid" else body

    response = getattr(agent_client, method)(URL + path.format(id=webhook.pk), payload, format="json")

    assert_error(response, 403, "Acesso negado.", "permissao")
    assert Webhook.objects.count() == 1
    assert webhook_snapshot(webhook) == before
    assert webhook.secret not in response.content.decode()


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", ""), ("post", ""), ("get", "/{id}"), ("patch", "/{id}"), ("delete", "/{id}")],
)
@pytest.mark.parametrize("authorization", [None, "Bearer abc.def.ghi", "Token qualquer"])
def test_request_without_a_valid_token_gets_401(anon_client, webhook, method, path, authorization):
    before = webhook_snapshot(webhook)
    if authorization:
        anon_client.credentials(HTTP_AUTHORIZATION=authorization)

    response = getattr(anon_client, method)(URL + path.format(id=webhook.pk), valid_body(), format="json")

    assert_error(response, 401, "Não autenticado.", "token")
    assert Webhook.objects.count() == 1
    assert webhook_snapshot(webhook) == before


def test_partner_api_key_is_not_a_panel_token(partner, webhook):
    response = partner.get(URL)

    assert_error(response, 401, "Não autenticado.", "token")
