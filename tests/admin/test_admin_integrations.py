"""Credentials, webhooks, deliveries and agents in the admin, written through the same services as the API."""

import hashlib
import io
import re

import pytest
from django.contrib.auth.models import Permission
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from PIL import Image

from helpdesk.models import Agent, AuditRecord, User
from helpdesk.permissions import MANAGE_PUBLIC_API_CODENAME
from integrations import delivery as delivery_module
from integrations import events
from integrations.delivery import AttemptOutcome, delivery_attempt
from integrations.models import ApiCredential, DeliveryStatus, Webhook, WebhookDelivery, WebhookDeliveryAttempt
from integrations.services import credential_create
from tests.assertions import bearer_client, run_admin_action
from tests.contract import ALL_EVENTS, KEY_RE, NOT_AUTHENTICATED
from tests.factories import PASSWORD, make_agent, make_webhook, png_bytes, png_file

SECRET_RE = re.compile(r"whsec_[A-Za-z0-9+/]{43}=")


def admin_url(model_name: str, view: str, *args) -> str:
    app_label = "helpdesk" if model_name == "agent" else "integrations"
    return reverse(f"admin:{app_label}_{model_name}_{view}", args=args)


def shown_messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def partner_get(key: str, path: str = "/api/v1/tickets"):
    return bearer_client(key).get(path)


# --- API credentials -----------------------------------------------------------------------------


def test_credential_add_shows_the_key_once_and_it_works(staff, organization, admin):
    response = staff.post(admin_url("apicredential", "add"), {"name": "ERP", "_save": "Salvar"}, follow=True)

    assert response.status_code == 200
    assert response.redirect_chain == [(admin_url("apicredential", "changelist"), 302)]
    messages = shown_messages(response)
    keys = [key for message in messages for key in KEY_RE.findall(message)]
    assert len(keys) == 1
    key = keys[0]
    assert f"Credencial criada. Guarde a chave: ela não será exibida novamente: {key}" in messages
    assert response.content.decode().count(key) == 1
    credential = ApiCredential.objects.get()
    assert (credential.organization, credential.name, credential.created_by, credential.is_active) == (
        organization,
        "ERP",
        admin,
        True,
    )
    assert credential.key_prefix == key[:12]
    assert credential.key_digest == hashlib.sha256(key.encode()).hexdigest()
    assert partner_get(key).status_code == 200

    pages = [
        staff.get(admin_url("apicredential", "changelist")),
        staff.get(admin_url("apicredential", "change", credential.pk)),
        staff.get(admin_url("apicredential", "history", credential.pk)),
        staff.get(admin_url("apicredential", "add")),
        staff.get("/admin/"),
    ]
    for page in pages:
        assert page.status_code == 200
        html = page.content.decode()
        assert key not in html
        assert credential.key_digest not in html
    assert credential.key_prefix in pages[1].content.decode()


def test_credential_add_with_scopes_expiry_and_networks_makes_a_restricted_key(staff, organization):
    response = staff.post(
        admin_url("apicredential", "add"),
        {
            "name": "BI",
            "scope_choices": ["tickets:ler"],
            "expires_at": "2099-12-31 23:59:00",
            "networks": "127.0.0.0/8\n2001:db8::/48",
            "_save": "Salvar",
        },
        follow=True,
    )

    assert response.status_code == 200, response.content
    [key] = [key for message in shown_messages(response) for key in KEY_RE.findall(message)]
    credential = ApiCredential.objects.get()
    assert credential.scopes == ["tickets:ler"]
    assert credential.allowed_networks == ["127.0.0.0/8", "2001:db8::/48"]
    assert credential.expires_at.year == 2099
    assert partner_get(key).status_code == 200
    refused = bearer_client(key).post("/api/v1/tickets", {}, format="json")
    assert (refused.status_code, refused.json()["errors"]["field"]) == (403, "escopo")
    page = staff.get(admin_url("apicredential", "change", credential.pk)).content.decode()
    assert "tickets:ler" in page and "2001:db8::/48" in page


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"scope_choices": ["tickets:apagar"]}, "scope_choices"),
        ({"expires_at": "2001-01-01 00:00:00"}, "expires_at"),
        ({"networks": "intranet"}, "networks"),
    ],
)
def test_credential_add_with_bad_restrictions_shows_the_error_and_creates_nothing(staff, fields, field):
    response = staff.post(admin_url("apicredential", "add"), {"name": "BI", **fields, "_save": "Salvar"})

    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field]
    assert not ApiCredential.objects.exists()


def test_credential_change_page_is_read_only(staff, organization):
    credential, _key = credential_create(organization=organization, name="ERP")

    response = staff.post(admin_url("apicredential", "change", credential.pk), {"name": "Renomeada", "_save": "Salvar"})

    assert response.status_code == 302
    credential.refresh_from_db()
    assert credential.name == "ERP"
    assert ApiCredential.objects.count() == 1


def test_revoke_action_revokes_and_the_key_stops_working(staff, organization):
    credential, key = credential_create(organization=organization, name="ERP")
    other, other_key = credential_create(organization=organization, name="CRM")
    assert partner_get(key).status_code == 200

    response = run_admin_action(staff, admin_url("apicredential", "changelist"), "revoke", [credential])

    assert shown_messages(response) == ["Credenciais revogadas."]
    credential.refresh_from_db()
    assert credential.is_active is False
    assert credential.revoked_at is not None
    revoked = partner_get(key)
    assert revoked.status_code == 401
    assert revoked.json() == NOT_AUTHENTICATED
    other.refresh_from_db()
    assert (other.is_active, other.revoked_at) == (True, None)
    assert partner_get(other_key).status_code == 200
    assert ApiCredential.objects.count() == 2


# --- webhooks ---------------------------------------------------------------------------------------


def webhook_form(**overrides) -> dict:
    return {
        "name": "ERP",
        "url": "https://hooks.example.com/erp",
        "events": ALL_EVENTS,
        "is_active": "on",
        "_save": "Salvar",
    } | overrides


def secret_shown(response) -> str:
    secrets = [secret for message in shown_messages(response) for secret in SECRET_RE.findall(message)]
    assert len(secrets) == 1
    return secrets[0]


def test_webhook_add_shows_the_secret_once(staff, organization, insecure_webhook_urls):
    response = staff.post(
        admin_url("webhook", "add"),
        webhook_form(url="http://127.0.0.1:9/erp", events=["ticket.resolvido"]),
        follow=True,
    )

    assert response.redirect_chain == [(admin_url("webhook", "changelist"), 302)]
    secret = secret_shown(response)
    assert f"Segredo do webhook ERP. Guarde o segredo: ele não será exibido novamente: {secret}" in shown_messages(
        response
    )
    webhook = Webhook.objects.get()
    assert (webhook.organization, webhook.name, webhook.url, webhook.events, webhook.is_active, webhook.secret) == (
        organization,
        "ERP",
        "http://127.0.0.1:9/erp",
        ["ticket.resolvido"],
        True,
        secret,
    )
    for page in (
        staff.get(admin_url("webhook", "changelist")),
        staff.get(admin_url("webhook", "change", webhook.pk)),
        staff.get(admin_url("webhook", "history", webhook.pk)),
    ):
        assert page.status_code == 200
        assert secret not in page.content.decode()


def test_webhook_add_with_public_https_url(staff, example_dns):
    response = staff.post(admin_url("webhook", "add"), webhook_form(), follow=True)

    assert response.redirect_chain == [(admin_url("webhook", "changelist"), 302)]
    assert Webhook.objects.get().url == "https://hooks.example.com/erp"


def test_webhook_added_inactive_stays_inactive(staff, example_dns):
    response = staff.post(admin_url("webhook", "add"), webhook_form(is_active=""), follow=True)

    assert response.status_code == 200
    webhook = Webhook.objects.get()
    assert (webhook.is_active, webhook.deactivation_reason) == (False, "Desativado manualmente.")
    assert webhook.deactivated_at is not None
    # Created off in one write: one record that says so, no update after it.
    [record] = AuditRecord.objects.filter(resource_id=str(webhook.pk))
    assert (record.action, record.changes["ativo"]) == ("webhook.criado", {"antes": None, "depois": False})


@pytest.mark.parametrize(
    "overrides, errors",
    [
        ({"url": "http://hooks.example.com/erp"}, {"url": ["A URL deve usar https://."]}),
        (
            {"url": "https://interno.example.com/erp"},
            {"url": ["O host da URL deve resolver apenas para endereços públicos."]},
        ),
        ({"url": "https://127.0.0.1/erp"}, {"url": ["O host da URL deve resolver apenas para endereços públicos."]}),
        ({"url": "https://naoexiste.example.com/erp"}, {"url": ["Não foi possível resolver o host da URL."]}),
        ({"events": []}, {"events": ["Este campo é obrigatório."]}),
        (
            {"events": ["webhook.teste"]},
            {"events": ["Faça uma escolha válida. webhook.teste não é uma das escolhas disponíveis."]},
        ),
        ({"name": "   "}, {"name": ["Este campo é obrigatório."]}),
    ],
    ids=["http", "private-host", "loopback", "unresolvable", "no-events", "unknown-event", "blank-name"],
)
def test_webhook_add_validation_errors_show_on_the_form_and_nothing_is_written(staff, example_dns, overrides, errors):
    data = webhook_form(**overrides)
    if overrides.get("events") == []:
        del data["events"]

    response = staff.post(admin_url("webhook", "add"), data)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == errors
    assert Webhook.objects.count() == 0
    assert not SECRET_RE.search(response.content.decode())


def test_webhook_add_beyond_the_limit_is_a_form_error(staff, organization, insecure_webhook_urls):
    for n in range(10):
        make_webhook(organization, name=f"Hook {n}", url=f"http://127.0.0.1:9/{n}")
    staff.raise_request_exception = False  # a crash must show as the status the user gets

    response = staff.post(admin_url("webhook", "add"), webhook_form(url="http://127.0.0.1:9/extra"))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"__all__": ["Limite de 10 webhooks por organização atingido."]}
    assert Webhook.objects.count() == 10


def test_webhook_change_validation_error_changes_nothing(staff, organization, example_dns):
    webhook = make_webhook(organization)
    before = Webhook.objects.filter(pk=webhook.pk).values().get()

    response = staff.post(
        admin_url("webhook", "change", webhook.pk),
        webhook_form(url="https://interno.example.com/erp", regenerate_secret="on"),
    )

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "url": ["O host da URL deve resolver apenas para endereços públicos."]
    }
    assert Webhook.objects.filter(pk=webhook.pk).values().get() == before


def test_regenerate_checkbox_shows_the_new_secret_once(staff, organization, example_dns):
    webhook = make_webhook(organization)
    old_secret = webhook.secret

    response = staff.post(
        admin_url("webhook", "change", webhook.pk), webhook_form(name="ERP novo", regenerate_secret="on"), follow=True
    )

    assert response.redirect_chain == [(admin_url("webhook", "changelist"), 302)]
    new_secret = secret_shown(response)
    webhook.refresh_from_db()
    assert (webhook.name, webhook.secret, webhook.previous_secret) == ("ERP novo", new_secret, old_secret)
    assert new_secret != old_secret
    assert webhook.previous_secret_expires_at is not None
    page = staff.get(admin_url("webhook", "change", webhook.pk)).content.decode()
    assert new_secret not in page
    assert old_secret not in page


def test_saving_without_the_checkbox_keeps_the_secret(staff, organization, example_dns):
    webhook = make_webhook(organization)

    response = staff.post(
        admin_url("webhook", "change", webhook.pk), webhook_form(events=["ticket.resolvido"]), follow=True
    )

    assert not any(SECRET_RE.search(message) for message in shown_messages(response))
    secret = webhook.secret
    webhook.refresh_from_db()
    assert (webhook.secret, webhook.previous_secret, webhook.events) == (secret, "", ["ticket.resolvido"])


def test_regenerate_action_shows_each_new_secret_once(staff, organization, insecure_webhook_urls):
    first = make_webhook(organization, url="http://127.0.0.1:9/erp")
    second = make_webhook(organization, name="CRM", url="http://127.0.0.1:9/crm")
    untouched = make_webhook(organization, name="BI", url="http://127.0.0.1:9/bi")
    old = {webhook.pk: webhook.secret for webhook in (first, second, untouched)}

    response = run_admin_action(staff, admin_url("webhook", "changelist"), "regenerate_secrets", [first, second])

    messages = shown_messages(response)
    for webhook in (first, second):
        webhook.refresh_from_db()
        assert webhook.secret != old[webhook.pk]
        assert webhook.previous_secret == old[webhook.pk]
        assert (
            f"Segredo do webhook {webhook.name}. Guarde o segredo: ele não será exibido novamente: {webhook.secret}"
            in messages
        )
    untouched.refresh_from_db()
    assert untouched.secret == old[untouched.pk]
    assert len(messages) == 2
    later = staff.get(admin_url("webhook", "changelist")).content.decode()
    assert not SECRET_RE.search(later)


# --- the permission ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model_name", ["apicredential", "webhook", "webhookdelivery"])
def test_staff_without_public_api_permission_is_refused(
    staff, organization, admin, insecure_webhook_urls, django_capture_on_commit_callbacks, model_name
):
    credential, _key = credential_create(organization=organization, name="ERP")
    webhook = make_webhook(organization, url="http://127.0.0.1:9/erp")
    with django_capture_on_commit_callbacks(execute=False):
        delivery = events.webhook_test_send(webhook=webhook)
    obj = {"apicredential": credential, "webhook": webhook, "webhookdelivery": delivery}[model_name]
    admin.user_permissions.remove(Permission.objects.get(codename=MANAGE_PUBLIC_API_CODENAME))

    observed = {
        "changelist": staff.get(admin_url(model_name, "changelist")).status_code,
        "add": staff.get(admin_url(model_name, "add")).status_code,
        "change": staff.get(admin_url(model_name, "change", obj.pk)).status_code,
        "change POST": staff.post(admin_url(model_name, "change", obj.pk), {"name": "X"}).status_code,
        "history": staff.get(admin_url(model_name, "history", obj.pk)).status_code,
    }

    assert observed == dict.fromkeys(observed, 403)
    index = staff.get("/admin/")
    assert [app["app_label"] for app in index.context["app_list"]] == ["helpdesk", "macros", "tickets"]
    assert "/admin/integrations/" not in index.content.decode()
    assert ApiCredential.objects.get().name == "ERP"
    assert Webhook.objects.get().name == "ERP"


def test_staff_with_public_api_permission_sees_integrations(staff):
    index = staff.get("/admin/")

    integrations_app = [app for app in index.context["app_list"] if app["app_label"] == "integrations"]
    assert [model["object_name"] for model in integrations_app[0]["models"]] == [
        "ApiCredential",
        "WebhookDelivery",
        "Webhook",
    ]


# --- deliveries -------------------------------------------------------------------------------------


@pytest.fixture
def delivery(organization, insecure_webhook_urls, django_capture_on_commit_callbacks, monkeypatch):
    """A test delivery with one failed attempt, recorded through the delivery service (no HTTP)."""
    webhook = make_webhook(organization, url="http://127.0.0.1:9/erp")
    with django_capture_on_commit_callbacks(execute=False):
        delivery = events.webhook_test_send(webhook=webhook)
    outcome = AttemptOutcome(status_code=500, duration_ms=37, error="http_500", response_excerpt="erro interno X")
    monkeypatch.setattr(delivery_module, "delivery_send", lambda _delivery: outcome)
    delivery_attempt(delivery_id=delivery.pk, expected_attempts=0)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count) == (DeliveryStatus.PENDING, 1)
    return delivery


def assert_read_only_delivery_page_with_attempts(response, delivery) -> None:
    assert response.status_code == 200
    assert response.context["has_change_permission"] is False
    attempts = [
        [form.original for form in formset]
        for formset in response.context["inline_admin_formsets"]
        if formset.opts.model is WebhookDeliveryAttempt
    ]
    assert attempts == [list(WebhookDeliveryAttempt.objects.filter(delivery=delivery))]
    html = response.content.decode()
    assert 'name="_save"' not in html
    assert 'name="_continue"' not in html
    assert "<textarea" not in html
    assert "<select" not in html
    assert "webhook.teste" in html
    assert "erro interno X" in html
    assert "http_500" in html


def test_delivery_change_page_is_read_only_with_attempts(staff, delivery):
    response = staff.get(admin_url("webhookdelivery", "change", delivery.pk))

    assert_read_only_delivery_page_with_attempts(response, delivery)


def test_superuser_delivery_change_page_is_read_only_with_attempts(client, delivery):
    client.force_login(User.objects.create_superuser(email="root@helpdesk.test", password=PASSWORD))

    response = client.get(admin_url("webhookdelivery", "change", delivery.pk))

    assert_read_only_delivery_page_with_attempts(response, delivery)


def test_delivery_cannot_be_changed_by_post(staff, delivery):
    refused = staff.post(admin_url("webhookdelivery", "change", delivery.pk), {"status": "sucesso"})

    assert refused.status_code == 403
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count) == (DeliveryStatus.PENDING, 1)


def test_send_again_action_creates_a_new_delivery_of_the_same_event(
    staff, delivery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = run_admin_action(staff, admin_url("webhookdelivery", "changelist"), "send_again", [delivery])

    assert shown_messages(response) == ["1 entrega(s) enviada(s) novamente."]
    copy = WebhookDelivery.objects.exclude(pk=delivery.pk).get()
    assert (copy.event, copy.webhook, copy.status, copy.attempt_count) == (
        delivery.event,
        delivery.webhook,
        DeliveryStatus.PENDING,
        0,
    )
    assert copy.attempts.count() == 0
    assert len(queued) == 1  # the new delivery is queued once the action commits (never run here)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count) == (DeliveryStatus.PENDING, 1)


# --- agents -----------------------------------------------------------------------------------------


def change_agent(staff, agent, fields: dict):
    """Saves the agent's change form in the admin with `fields` (an avatar, or avatar-clear) over its name and state."""
    return staff.post(
        admin_url("agent", "change", agent.pk), {"name": agent.name, "is_active": "on", "_save": "Salvar"} | fields
    )


def agent_form(**overrides) -> dict:
    return {
        "name": "Nova Atendente",
        "email": "Nova@Acme.test",
        "password": "",
        "is_active": "on",
        "_save": "Salvar",
    } | overrides


def test_agent_add_creates_a_user_and_agent_of_the_organization(staff, organization):
    response = staff.post(admin_url("agent", "add"), agent_form(password="Outra-senha-123"))

    assert response.status_code == 302
    agent = Agent.objects.get(name="Nova Atendente")
    assert (agent.organization, agent.is_active, agent.avatar.name) == (organization, True, "")
    user = agent.user
    assert (user.email, user.name, user.organization, user.is_staff) == (
        "nova@acme.test",
        "Nova Atendente",
        organization,
        False,
    )
    assert user.check_password("Outra-senha-123")


def test_agent_add_without_password_makes_a_user_who_cannot_log_in(staff):
    assert staff.post(admin_url("agent", "add"), agent_form()).status_code == 302

    assert User.objects.get(email="nova@acme.test").has_usable_password() is False


def test_agent_add_with_a_taken_email_answers_neutrally_whoever_holds_it(staff, admin, other_organization):
    """Another organization's address is refused in the very words of one's own: nothing says it exists."""
    foreign_email = other_organization.users.get(is_staff=True).email
    users_before = User.objects.count()

    pages = [
        staff.post(admin_url("agent", "add"), agent_form(email=email)) for email in (admin.email.upper(), foreign_email)
    ]

    for response in pages:
        assert response.status_code == 200
        assert response.context["adminform"].form.errors == {
            "email": ["Este e-mail não pode ser usado. Informe outro."]
        }
        assert "existe" not in response.content.decode()
    assert User.objects.count() == users_before
    assert not Agent.objects.filter(name="Nova Atendente").exists()


@pytest.mark.parametrize("password", ["123", "password123", "nova@acme.test"])
def test_agent_add_applies_the_password_validators_of_every_door(staff, password):
    users_before = User.objects.count()

    response = staff.post(admin_url("agent", "add"), agent_form(password=password))

    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors) == ["password"]
    assert User.objects.count() == users_before


def test_agent_add_with_png_avatar(staff, organization):
    avatar = SimpleUploadedFile("foto.png", png_bytes(), content_type="image/png")

    response = staff.post(admin_url("agent", "add"), agent_form(avatar=avatar))

    assert response.status_code == 302
    agent = Agent.objects.get(name="Nova Atendente")
    assert agent.avatar.name.startswith(f"avatars/{organization.pk}/")
    assert agent.avatar.name.endswith(".png")
    assert default_storage.exists(agent.avatar.name)
    with default_storage.open(agent.avatar.name) as stored:
        assert stored.read() == png_bytes()


@pytest.mark.parametrize("filename, content_type", [("notas.txt", "text/plain"), ("foto.png", "image/png")])
def test_text_file_as_avatar_is_a_form_error(staff, organization, filename, content_type):
    agent = make_agent(organization, name="Carla")
    users_before = User.objects.count()

    def text_file():
        return SimpleUploadedFile(filename, b"isto nao e uma imagem\n" * 10, content_type=content_type)

    added = staff.post(admin_url("agent", "add"), agent_form(avatar=text_file()))
    changed = change_agent(staff, agent, {"avatar": text_file()})

    invalid_image = "Envie uma imagem PNG, JPEG, GIF ou WebP."
    for response in (added, changed):
        assert response.status_code == 200
        assert response.context["adminform"].form.errors == {"avatar": [invalid_image]}
    assert User.objects.count() == users_before
    agent.refresh_from_db()
    assert agent.avatar.name == ""


def test_deactivate_and_activate_actions(staff, organization):
    first = make_agent(organization, name="Carla")
    second = make_agent(organization, name="Davi")
    untouched = make_agent(organization, name="Eva")

    run_admin_action(staff, admin_url("agent", "changelist"), "deactivate", [first, second])

    assert dict(Agent.objects.filter(organization=organization).values_list("name", "is_active")) == {
        "Administrador Acme": True,
        "Carla": False,
        "Davi": False,
        "Eva": True,
    }

    run_admin_action(staff, admin_url("agent", "changelist"), "activate", [first])

    first.refresh_from_db()
    second.refresh_from_db()
    untouched.refresh_from_db()
    assert (first.is_active, second.is_active, untouched.is_active) == (True, False, True)


def image_bytes(image_format: str, size=(4, 4)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (30, 120, 200)).save(buffer, format=image_format)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("filename", "image_format", "extension"),
    [
        ("foto.png", "PNG", ".png"),
        ("foto.pdf", "PNG", ".png"),
        ("foto.png", "JPEG", ".jpg"),
        ("semextensao", "GIF", ".gif"),
        ("a.html", "WEBP", ".webp"),
    ],
)
def test_a_changed_avatar_is_stored_under_its_real_formats_extension(
    staff, organization, filename, image_format, extension
):
    agent = make_agent(organization, name="Carla")
    avatar = SimpleUploadedFile(filename, image_bytes(image_format), content_type="image/png")

    response = change_agent(staff, agent, {"avatar": avatar})

    assert response.status_code == 302
    agent.refresh_from_db()
    assert agent.avatar.name.startswith(f"avatars/{organization.pk}/")
    assert agent.avatar.name.endswith(extension)
    assert default_storage.exists(agent.avatar.name)


def test_replacing_an_avatar_removes_the_old_file(staff, organization, django_capture_on_commit_callbacks):
    agent = make_agent(organization, name="Carla", avatar=png_file())
    old_name = agent.avatar.name

    with django_capture_on_commit_callbacks(execute=True):
        response = change_agent(staff, agent, {"avatar": SimpleUploadedFile("nova.png", png_bytes())})

    assert response.status_code == 302
    agent.refresh_from_db()
    assert agent.avatar.name != old_name
    assert not default_storage.exists(old_name)
    assert default_storage.exists(agent.avatar.name)


def test_clearing_the_avatar_removes_it(staff, organization, django_capture_on_commit_callbacks):
    agent = make_agent(organization, name="Carla", avatar=png_file())
    old_name = agent.avatar.name

    with django_capture_on_commit_callbacks(execute=True):
        response = change_agent(staff, agent, {"avatar-clear": "on"})

    assert response.status_code == 302
    agent.refresh_from_db()
    assert agent.avatar.name == ""
    assert not default_storage.exists(old_name)


def test_an_avatar_over_the_size_cap_is_a_form_error_on_add_and_change(staff, organization, settings):
    agent = make_agent(organization, name="Carla")
    settings.AVATAR_MAX_BYTES = 1000
    big = image_bytes("PNG", size=(400, 400))
    assert len(big) > 1000
    users_before = User.objects.count()

    added = staff.post(admin_url("agent", "add"), agent_form(avatar=SimpleUploadedFile("g.png", big)))
    changed = change_agent(staff, agent, {"avatar": SimpleUploadedFile("g.png", big)})

    for response in (added, changed):
        assert response.status_code == 200
        assert response.context["adminform"].form.errors == {"avatar": ["A imagem deve ter no máximo 1000 bytes."]}
    assert User.objects.count() == users_before
    agent.refresh_from_db()
    assert agent.avatar.name == ""


# --- a webhook's `incluir` (issue 21) ---------------------------------------------------------------


def test_webhook_blocks_are_set_shown_and_kept_in_the_admin(staff, organization, example_dns):
    added = staff.post(admin_url("webhook", "add"), webhook_form(blocks=["contato", "atendente"]), follow=True)
    webhook = Webhook.objects.get()
    page = staff.get(admin_url("webhook", "change", webhook.pk)).content.decode()
    renamed = staff.post(
        admin_url("webhook", "change", webhook.pk), webhook_form(name="ERP 2", blocks=["atendente"]), follow=True
    )

    assert added.redirect_chain == renamed.redirect_chain == [(admin_url("webhook", "changelist"), 302)]
    assert re.search(r'<input[^>]*value="contato"[^>]*checked', page)
    webhook.refresh_from_db()
    assert (webhook.name, webhook.blocks) == ("ERP 2", ["atendente"])


def test_an_unknown_webhook_block_is_a_form_error_in_the_admin(staff, organization, example_dns):
    response = staff.post(admin_url("webhook", "add"), webhook_form(blocks=["xyz"]))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "blocks": ["Faça uma escolha válida. xyz não é uma das escolhas disponíveis."]
    }
    assert not Webhook.objects.exists()
