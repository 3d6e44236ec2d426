"""validate_webhook_url: https only, and a host that resolves only to public addresses.

The resolver is stubbed (the `resolver` fixture of tests/conftest.py replaces
integrations.webhook_urls.resolve_host): the machine has no DNS, and each test
decides what a name resolves to.
"""

import pytest

from integrations import webhook_urls
from integrations.webhook_urls import UnsafeWebhookUrl, validate_webhook_url

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"

NOT_PUBLIC = "O host da URL deve resolver apenas para endereços públicos."
UNRESOLVABLE = "Não foi possível resolver o host da URL."
HTTPS_ONLY = "A URL deve usar https://."
NO_USERINFO = "A URL não pode conter usuário ou senha."


@pytest.fixture(autouse=True)
def secure_mode(settings):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = False


def refusal(url: str) -> str:
    with pytest.raises(UnsafeWebhookUrl) as raised:
        validate_webhook_url(url)
    return str(raised.value)


# --- Accepted ----------------------------------------------------------------


def test_host_resolving_to_a_public_ipv4_address_is_accepted(resolver):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4]

    assert validate_webhook_url("https://hooks.example.com/helpdesk?x=1") == "https://hooks.example.com/helpdesk?x=1"
    assert resolver.calls == [("hooks.example.com", 443)]


def test_host_resolving_to_a_public_ipv6_address_is_accepted(resolver):
    resolver.answers["hooks.example.com"] = [PUBLIC_V6]

    assert validate_webhook_url("https://hooks.example.com/h") == "https://hooks.example.com/h"


def test_host_resolving_to_several_public_addresses_is_accepted(resolver):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4, PUBLIC_V6, "8.8.8.8"]

    assert validate_webhook_url("https://hooks.example.com/h") == "https://hooks.example.com/h"


def test_explicit_port_is_the_one_resolved(resolver):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4]

    assert validate_webhook_url("https://hooks.example.com:8443/h") == "https://hooks.example.com:8443/h"
    assert resolver.calls == [("hooks.example.com", 8443)]


def test_public_ip_literal_hosts_are_accepted(resolver):
    assert validate_webhook_url(f"https://{PUBLIC_V4}/h") == f"https://{PUBLIC_V4}/h"
    assert validate_webhook_url(f"https://[{PUBLIC_V6}]/h") == f"https://[{PUBLIC_V6}]/h"


def test_address_just_outside_172_16_12_is_public(resolver):
    resolver.answers["hooks.example.com"] = ["172.32.0.1"]

    assert validate_webhook_url("https://hooks.example.com/h") == "https://hooks.example.com/h"


# --- Refused: what the host resolves to ----------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        pytest.param("10.0.0.1", id="private-10/8"),
        pytest.param("10.255.255.254", id="private-10/8-end"),
        pytest.param("172.16.0.1", id="private-172.16/12"),
        pytest.param("172.31.255.254", id="private-172.16/12-end"),
        pytest.param("192.168.1.10", id="private-192.168/16"),
        pytest.param("127.0.0.1", id="loopback-v4"),
        pytest.param("127.8.9.10", id="loopback-v4-range"),
        pytest.param("::1", id="loopback-v6"),
        pytest.param("169.254.169.254", id="cloud-metadata"),
        pytest.param("169.254.1.1", id="link-local-v4"),
        pytest.param("fe80::1", id="link-local-v6"),
        pytest.param("fe80::1%eth0", id="link-local-v6-with-zone"),
        pytest.param("fc00::1", id="unique-local-fc"),
        pytest.param("fd12:3456:789a::1", id="unique-local-fd"),
        pytest.param("::ffff:127.0.0.1", id="ipv4-mapped-loopback"),
        pytest.param("::ffff:10.0.0.1", id="ipv4-mapped-private"),
        pytest.param("::ffff:169.254.169.254", id="ipv4-mapped-metadata"),
        pytest.param("224.0.0.1", id="multicast-v4"),
        pytest.param("239.255.255.250", id="multicast-v4-ssdp"),
        pytest.param("ff02::1", id="multicast-v6"),
        pytest.param("ff0e::1", id="multicast-v6-global-scope"),
        pytest.param("0.0.0.0", id="unspecified-v4"),
        pytest.param("::", id="unspecified-v6"),
        pytest.param("100.64.0.1", id="carrier-grade-nat"),
        pytest.param("255.255.255.255", id="broadcast"),
    ],
)
def test_host_resolving_to_a_non_public_address_is_refused(resolver, address):
    resolver.answers["hooks.example.com"] = [address]

    assert refusal("https://hooks.example.com/h") == NOT_PUBLIC


@pytest.mark.parametrize("private", ["10.0.0.7", "127.0.0.1", "169.254.169.254", "fd00::1"])
def test_mixed_answer_with_one_public_and_one_private_address_is_refused(resolver, private):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4, private]

    assert refusal("https://hooks.example.com/h") == NOT_PUBLIC


def test_mixed_answer_is_refused_whatever_the_order(resolver):
    resolver.answers["hooks.example.com"] = ["192.168.0.1", PUBLIC_V4, PUBLIC_V6]

    assert refusal("https://hooks.example.com/h") == NOT_PUBLIC


def test_unresolvable_host_is_refused(resolver):
    assert refusal("https://nao-existe.example.com/h") == UNRESOLVABLE
    assert resolver.calls == [("nao-existe.example.com", 443)]


def test_host_resolving_to_no_address_is_refused(resolver):
    resolver.answers["hooks.example.com"] = []

    assert refusal("https://hooks.example.com/h") == UNRESOLVABLE


def test_resolver_unicode_error_is_refused(monkeypatch):
    def broken(host, port):
        raise UnicodeError("label too long")

    monkeypatch.setattr(webhook_urls, "resolve_host", broken)

    assert refusal("https://hooks.example.com/h") == UNRESOLVABLE


# --- Refused: IP literals ------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/h",
        "https://10.1.2.3/h",
        "https://192.168.0.1:8443/h",
        "https://169.254.169.254/latest/meta-data/",
        "https://0.0.0.0/h",
        "https://[::1]/h",
        "https://[fe80::1]/h",
        "https://[fc00::1]/h",
        "https://[::ffff:127.0.0.1]/h",
        "https://[ff02::1]/h",
    ],
)
def test_non_public_ip_literal_host_is_refused(resolver, url):
    assert refusal(url) == NOT_PUBLIC


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/h",
        "https://10.1.2.3/h",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/h",
        "https://[::ffff:127.0.0.1]/h",
    ],
)
def test_non_public_ip_literal_host_is_refused_with_the_real_resolver(url):
    # IP literals need no DNS: the real resolve_host answers them offline.
    assert refusal(url) == NOT_PUBLIC


# --- Refused: scheme, credentials, shape -----------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/h",
        "ftp://hooks.example.com/h",
        "hooks.example.com/h",
        "//hooks.example.com/h",
        "javascript:alert(1)",
        "",
    ],
)
def test_url_without_https_is_refused(resolver, url):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4]

    assert refusal(url) == HTTPS_ONLY
    assert resolver.calls == []


@pytest.mark.parametrize(
    "url",
    [
        "https://user:pass@hooks.example.com/h",
        "https://user@hooks.example.com/h",
        "https://:pass@hooks.example.com/h",
    ],
)
def test_url_with_user_or_password_is_refused(resolver, url):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4]

    assert refusal(url) == NO_USERINFO


@pytest.mark.parametrize("url", ["https:///h", "https://:443/h", "https://hooks.example.com:99999/h"])
def test_url_without_a_valid_host_or_port_is_refused(resolver, url):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4]

    assert refusal(url) == "Informe uma URL válida."
    assert resolver.calls == []


def test_url_over_2048_characters_is_refused(resolver):
    resolver.answers["hooks.example.com"] = [PUBLIC_V4]
    url = "https://hooks.example.com/" + "a" * 2023

    assert len(url) == 2049
    assert refusal(url) == "A URL deve ter no máximo 2048 caracteres."


# --- Development mode ------------------------------------------------------------


def test_insecure_setting_accepts_http_and_loopback_receivers(settings, resolver):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    resolver.answers["localhost"] = ["127.0.0.1", "::1"]

    assert validate_webhook_url("http://localhost:8000/hook") == "http://localhost:8000/hook"
    assert validate_webhook_url("http://127.0.0.1:9000/hook") == "http://127.0.0.1:9000/hook"
    assert validate_webhook_url("http://[::1]:9000/hook") == "http://[::1]:9000/hook"
    assert validate_webhook_url("https://localhost/hook") == "https://localhost/hook"


@pytest.mark.parametrize(
    "host",
    ["10.0.0.5", "192.168.1.10", "172.16.0.1", "169.254.169.254", "[fd00:ec2::254]", "[fe80::1]", "[fec0::1]", "rede"],
)
def test_insecure_setting_still_refuses_private_link_local_and_metadata_addresses(settings, resolver, host):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    resolver.answers["rede"] = ["127.0.0.1", "10.1.2.3"]  # one private address is enough to refuse

    assert refusal(f"http://{host}/hook") == NOT_PUBLIC


def test_only_the_loudly_named_setting_opens_private_networks(settings, resolver):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE = True

    assert validate_webhook_url("https://10.0.0.5/hook") == "https://10.0.0.5/hook"
    assert validate_webhook_url("https://169.254.169.254/latest") == "https://169.254.169.254/latest"


@pytest.mark.parametrize("address", ["fec0::1", "fec0:1::abcd", "feff::1"])
def test_deprecated_site_local_ipv6_is_not_public(address):
    from integrations.webhook_urls import is_public_address

    assert is_public_address(address) is False


def test_insecure_setting_still_refuses_other_schemes_and_credentials(settings, resolver):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True

    assert refusal("ftp://localhost/hook") == HTTPS_ONLY
    assert refusal("http://user:pass@localhost/hook") == NO_USERINFO


def test_without_the_insecure_setting_localhost_is_refused(resolver):
    resolver.answers["localhost"] = ["127.0.0.1", "::1"]

    assert refusal("https://localhost/hook") == NOT_PUBLIC
    assert refusal("http://localhost/hook") == HTTPS_ONLY


@pytest.mark.parametrize("address", ["2002:7f00:1::1", "2002:c0a8:101::1", "2001:0:4136:e378:8000:63bf:f5ff:fffe"])
def test_ipv6_forms_wrapping_a_private_ipv4_are_refused(address):
    from integrations.webhook_urls import is_public_address

    assert is_public_address(address) is False


def test_6to4_wrapping_a_public_ipv4_is_accepted():
    from integrations.webhook_urls import is_public_address

    assert is_public_address("2002:5db8:d822::1") is True
