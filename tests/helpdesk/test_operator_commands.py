import io
import json

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from helpdesk.models import Agent, Organization, User
from helpdesk.permissions import MANAGE_PUBLIC_API_PERM
from integrations.keys import is_well_formed
from integrations.models import ApiCredential
from integrations.selectors import credential_for_key
from tests.factories import png_bytes
from tickets.models import TicketStatus


def run(*args) -> dict:
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def create_agent_x(organization, *options: str) -> dict:
    """create_agent of the agent "X" <x@acme.test> in `organization`, with `options`."""
    agent = ("--name", "X", "--email", "x@acme.test")
    return run("create_agent", "--organization", str(organization.pk), *agent, *options)


def test_create_organization_prints_ids_and_sets_up_admin(db):
    result = run(
        "create_organization", "--name", "Acme", "--admin-email", "Ana@Acme.test", "--admin-password", "x9-Forte-senha"
    )

    assert set(result) == {"organization_id", "admin_user_id"}
    organization = Organization.objects.get(pk=result["organization_id"])
    admin = User.objects.get(pk=result["admin_user_id"])
    assert admin.organization == organization
    assert admin.email == "ana@acme.test"
    assert admin.is_staff and not admin.is_superuser
    assert admin.has_perm(MANAGE_PUBLIC_API_PERM)
    assert Agent.objects.filter(user=admin, organization=organization, is_active=True).exists()
    assert TicketStatus.objects.filter(organization=organization).count() == 5


def test_create_organization_refuses_weak_password(db):
    with pytest.raises(CommandError):
        run("create_organization", "--name", "Acme", "--admin-email", "a@acme.test", "--admin-password", "123")
    assert not Organization.objects.exists()


def test_create_agent_with_avatar_and_inactive_flag(organization, tmp_path):
    avatar = tmp_path / "foto.png"
    Image.new("RGB", (4, 4), "red").save(avatar)

    result = run(
        "create_agent",
        "--organization",
        str(organization.pk),
        "--name",
        "Caio",
        "--email",
        "caio@acme.test",
        "--password",
        "x9-Forte-senha",
        "--inactive",
        "--avatar",
        str(avatar),
    )

    agent = Agent.objects.get(pk=result["agent_id"])
    assert str(agent.user_id) == result["user_id"]
    assert (agent.name, agent.is_active, agent.organization) == ("Caio", False, organization)
    assert agent.avatar.name.endswith(".png")
    assert agent.user.check_password("x9-Forte-senha")


def test_create_agent_for_unknown_organization_fails(db):
    with pytest.raises(CommandError):
        run(
            "create_agent",
            "--organization",
            "00000000-0000-0000-0000-000000000000",
            "--name",
            "X",
            "--email",
            "x@x.test",
        )
    assert not Agent.objects.exists()


def test_create_agent_refuses_a_taken_email_in_the_same_words_whoever_holds_it(organization, other_organization):
    own = organization.users.get(is_staff=True).email
    foreign = other_organization.users.get(is_staff=True).email
    agents_before = Agent.objects.count()
    refusals = []

    for email in (own, foreign.upper()):
        with pytest.raises(CommandError) as refused:
            run("create_agent", "--organization", str(organization.pk), "--name", "X", "--email", email)
        refusals.append(str(refused.value))

    assert refusals == ["email: Este e-mail não pode ser usado. Informe outro."] * 2
    assert Agent.objects.count() == agents_before


def test_create_agent_refuses_an_email_too_long_once_lower_cased(organization):
    """A login is stored lower-cased, in 254 characters: 130 İ are 143 characters as typed, 273 lower-cased."""
    agents_before = Agent.objects.count()

    email = "\u0130" * 130 + "@a.test"

    with pytest.raises(CommandError) as refused:
        run("create_agent", "--organization", str(organization.pk), "--name", "X", "--email", email)

    assert str(refused.value) == "email: Certifique-se de que este campo não tenha mais de 254 caracteres."
    assert Agent.objects.count() == agents_before


def test_an_email_taken_between_the_check_and_the_write_is_the_same_refusal(
    organization, other_organization, monkeypatch
):
    """Two adds of one new address at once: both pass the check, the database's unique e-mail stops the second."""
    from helpdesk import services

    monkeypatch.setattr(services, "agent_email_check", lambda *, email: email.strip().lower())
    taken = other_organization.users.get(is_staff=True).email
    agents_before = Agent.objects.count()

    with pytest.raises(CommandError) as refused:
        run("create_agent", "--organization", str(organization.pk), "--name", "X", "--email", taken)

    assert str(refused.value) == "email: Este e-mail não pode ser usado. Informe outro."
    assert Agent.objects.count() == agents_before


def test_create_api_key_prints_a_working_key_once(organization):
    result = run("create_api_key", "--organization", str(organization.pk), "--name", "ERP")

    assert set(result) == {"id", "key", "key_prefix"}
    assert is_well_formed(result["key"])
    assert result["key_prefix"] == result["key"][:12]
    credential = ApiCredential.objects.get(pk=result["id"])
    assert credential_for_key(result["key"]) == credential
    assert result["key"] not in {credential.key_digest, credential.key_prefix}


def test_seed_demo_is_idempotent_and_prints_a_fresh_key_on_request(db):
    first = run("seed_demo", "--with-key")
    second = run("seed_demo")
    third = run("seed_demo", "--with-key")

    assert first["created"] is True and second["created"] is False
    assert first["organization_id"] == second["organization_id"] == third["organization_id"]
    assert Organization.objects.count() == 1
    assert first["admin_password"] == second["admin_password"]
    assert User.objects.get(email=first["admin_email"]).check_password(first["admin_password"])
    assert "api_key" not in second
    assert first["api_key"] != third["api_key"]
    assert credential_for_key(third["api_key"]).organization_id == Organization.objects.get().pk


def test_create_agent_refuses_an_avatar_that_is_not_an_image(organization, tmp_path):
    fake = tmp_path / "foto.png"
    fake.write_text("<script>alert(1)</script>")

    with pytest.raises(CommandError, match="avatar"):
        create_agent_x(organization, "--avatar", str(fake))
    assert not Agent.objects.filter(name="X").exists()


def test_create_agent_refuses_an_avatar_over_the_size_cap(organization, tmp_path, settings):
    settings.AVATAR_MAX_BYTES = 64
    photo = tmp_path / "foto.png"
    photo.write_bytes(png_bytes() + b"\0" * 64)

    with pytest.raises(CommandError, match="no máximo 64 bytes"):
        create_agent_x(organization, "--avatar", str(photo))
    assert not Agent.objects.filter(name="X").exists()


def test_a_failing_command_with_json_prints_a_json_error_and_exits_non_zero(db):
    out = io.StringIO()

    with pytest.raises(CommandError):
        call_command("create_api_key", "--organization", "nao-existe", "--name", "x", "--json", stdout=out)

    assert json.loads(out.getvalue()) == {"error": "organization nao-existe does not exist"}


def test_create_agent_refuses_a_weak_password(organization):
    with pytest.raises(CommandError):
        create_agent_x(organization, "--password", "123")
    assert not Agent.objects.filter(name="X").exists()


def test_createsuperuser_refuses_an_email_too_long_once_lower_cased(db):
    """createsuperuser checks the address as typed (143 characters here); stored lower-cased it is 273."""
    email = "\u0130" * 130 + "@a.test"

    with pytest.raises(CommandError) as refused:
        call_command("createsuperuser", "--noinput", "--email", email, stdout=io.StringIO())

    assert str(refused.value) == "Certifique-se de que este campo não tenha mais de 254 caracteres."
    assert not User.objects.filter(is_superuser=True, email__startswith="i").exists()
