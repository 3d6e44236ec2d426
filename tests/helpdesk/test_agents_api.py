"""GET /api/v1/atendentes and the signed avatar URLs it hands out."""

import io
import time
import uuid
from unittest import mock
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.core import signing
from django.core.files import File

from helpdesk.models import Agent
from helpdesk.services import agent_set_active, organization_set_active
from tests.assertions import assert_error
from tests.factories import make_agent, png_bytes

URL = "/api/v1/atendentes"


def photo(content: bytes, name: str = "foto.png") -> File:
    return File(io.BytesIO(content), name=name)


def items(response) -> list[dict]:
    return response.json()["data"]["data"]


def item_of(response, agent: Agent) -> dict:
    [item] = [item for item in items(response) if item["id"] == str(agent.pk)]
    return item


def content_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def assert_signature_refused(response) -> None:
    assert_error(response, 403, "Acesso negado.", "assinatura")


def avatar_url_signed_at(partner, agent: Agent, moment: float) -> str:
    """The avatar URL as the list hands it out when the clock reads `moment`."""
    with mock.patch.object(signing.time, "time", return_value=moment):
        response = partner.get(URL)
    return item_of(response, agent)["avatar_url"]


# --- The list -------------------------------------------------------------


def test_list_returns_active_agents_of_the_organization(partner, organization, agent):
    admin = Agent.objects.get(organization=organization, user__is_staff=True)

    response = partner.get(URL)

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "success": True,
        "message": "Atendentes listados.",
        "data": {
            "data": body["data"]["data"],
            "total": 2,
            "por_pagina": 10,
            "pagina_atual": 1,
            "ultima_pagina": 1,
        },
        "errors": [],
    }
    assert sorted(items(response), key=lambda item: item["nome"]) == [
        {"id": str(admin.pk), "nome": admin.name, "avatar_url": None},
        {"id": str(agent.pk), "nome": "Beatriz Atendente", "avatar_url": None},
    ]


def test_list_leaves_out_inactive_agents_and_other_organizations(partner, organization, other_organization, agent):
    inactive = make_agent(organization, name="Inativo", is_active=False)
    foreign = make_agent(other_organization, name="De Fora")

    response = partner.get(URL)

    ids = {item["id"] for item in items(response)}
    assert str(agent.pk) in ids
    assert str(inactive.pk) not in ids
    assert str(foreign.pk) not in ids
    assert ids == {
        str(pk) for pk in Agent.objects.filter(organization=organization, is_active=True).values_list("pk", flat=True)
    }
    assert response.json()["data"]["total"] == len(ids)


def test_each_item_carries_exactly_id_nome_and_avatar_url(partner, agent):
    response = partner.get(URL)

    for item in items(response):
        assert set(item) == {"id", "nome", "avatar_url"}
        assert str(uuid.UUID(item["id"])) == item["id"]
        assert isinstance(item["nome"], str)


def test_page_size_is_fixed_at_10(partner, organization):
    for n in range(11):
        make_agent(organization, name=f"Atendente {n:02d}")
    all_active = {
        str(pk) for pk in Agent.objects.filter(organization=organization, is_active=True).values_list("pk", flat=True)
    }

    first = partner.get(URL, {"por_pagina": 50})
    second = partner.get(URL, {"page": 2})

    assert len(all_active) == 12
    assert {key: value for key, value in first.json()["data"].items() if key != "data"} == {
        "total": 12,
        "por_pagina": 10,
        "pagina_atual": 1,
        "ultima_pagina": 2,
    }
    assert len(items(first)) == 10
    assert second.json()["data"]["pagina_atual"] == 2
    assert len(items(second)) == 2
    assert {item["id"] for item in items(first)} | {item["id"] for item in items(second)} == all_active


def test_page_past_the_end_is_empty(partner, agent):
    response = partner.get(URL, {"page": 3})

    assert response.status_code == 200
    assert response.json()["data"] == {"data": [], "total": 2, "por_pagina": 10, "pagina_atual": 3, "ultima_pagina": 1}


@pytest.mark.parametrize("page", ["0", "abc", "-1"])
def test_invalid_page_is_422(partner, agent, page):
    response = partner.get(URL, {"page": page})

    assert response.status_code == 422
    body = response.json()
    assert body == {"success": False, "message": "Erro de validação", "errors": body["errors"]}
    assert list(body["errors"]) == ["page"]


# --- Avatars --------------------------------------------------------------


def test_avatar_url_is_null_without_a_photo(partner, agent):
    assert item_of(partner.get(URL), agent)["avatar_url"] is None


def test_avatar_url_is_absolute_and_serves_the_image_without_credentials(partner, anon_client, organization):
    content = png_bytes()
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(content))

    avatar_url = item_of(partner.get(URL), with_photo)["avatar_url"]
    response = anon_client.get(avatar_url)

    parsed = urlparse(avatar_url)
    assert parsed.scheme == "http"
    assert parsed.netloc == "testserver"
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert content_of(response) == content


def test_avatar_url_does_not_expose_the_stored_file_name(partner, organization):
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(png_bytes(), name="joao-da-silva.png"))

    avatar_url = item_of(partner.get(URL), with_photo)["avatar_url"]

    assert "joao-da-silva" not in avatar_url
    assert with_photo.avatar.name not in avatar_url


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda token: token[:-1] + ("A" if token[-1] != "A" else "B"), id="signature-changed"),
        pytest.param(lambda token: "x" + token[1:], id="payload-changed"),
        pytest.param(lambda token: token.rsplit(":", 1)[0], id="signature-removed"),
        pytest.param(lambda token: "lixo", id="garbage"),
    ],
)
def test_tampered_avatar_url_is_403(partner, anon_client, organization, tamper):
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(png_bytes()))
    avatar_url = item_of(partner.get(URL), with_photo)["avatar_url"]
    base, token = avatar_url.rsplit("/", 1)

    response = anon_client.get(f"{base}/{tamper(token)}")

    assert_signature_refused(response)


def test_avatar_url_is_still_valid_just_under_the_maximum_age(partner, anon_client, organization):
    content = png_bytes()
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(content))
    avatar_url = avatar_url_signed_at(partner, with_photo, time.time() - (settings.AVATAR_URL_MAX_AGE - 60))

    response = anon_client.get(avatar_url)

    assert response.status_code == 200
    assert content_of(response) == content


def test_expired_avatar_url_is_403(partner, anon_client, organization):
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(png_bytes()))
    avatar_url = avatar_url_signed_at(partner, with_photo, time.time() - (settings.AVATAR_URL_MAX_AGE + 60))

    response = anon_client.get(avatar_url)

    assert_signature_refused(response)


def test_avatar_urls_live_about_30_minutes(settings):
    assert 25 * 60 <= settings.AVATAR_URL_MAX_AGE <= 35 * 60


def test_avatar_url_follows_the_configured_maximum_age(settings, partner, anon_client, organization):
    settings.AVATAR_URL_MAX_AGE = 5
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(png_bytes()))
    avatar_url = avatar_url_signed_at(partner, with_photo, time.time() - 10)

    response = anon_client.get(avatar_url)

    assert_signature_refused(response)


def assert_avatar_missing(response) -> None:
    assert_error(response, 404, "Avatar não encontrado.", "avatar")


def test_avatar_url_stops_opening_when_the_agent_is_deactivated(partner, anon_client, organization):
    leaving = make_agent(organization, name="Saindo", avatar=photo(png_bytes()))
    url = item_of(partner.get(URL), leaving)["avatar_url"]

    agent_set_active(agent=leaving, is_active=False)

    assert_avatar_missing(anon_client.get(url))


def test_avatar_url_stops_opening_while_the_organization_is_suspended(partner, anon_client, organization):
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(png_bytes()))
    url = item_of(partner.get(URL), with_photo)["avatar_url"]

    organization_set_active(organization=organization, is_active=False)
    assert_avatar_missing(anon_client.get(url))

    organization_set_active(organization=organization, is_active=True)
    response = anon_client.get(url)
    assert response.status_code == 200
    assert content_of(response) == png_bytes()


def test_avatar_url_stops_working_when_the_photo_is_replaced(partner, anon_client, organization):
    with_photo = make_agent(organization, name="Com Foto", avatar=photo(png_bytes()))
    old_url = item_of(partner.get(URL), with_photo)["avatar_url"]

    with_photo.avatar.save("nova.png", photo(png_bytes()), save=True)
    response = anon_client.get(old_url)

    assert response.status_code == 404
    assert response.json()["success"] is False
    assert response.json()["data"] is None
