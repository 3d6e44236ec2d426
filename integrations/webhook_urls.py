"""Webhook URL rules: https, and a host that resolves only to public addresses.

Checked when a webhook is saved and again before every delivery (the address
a name resolves to can change). WEBHOOK_ALLOW_INSECURE_URLS allows http:// and
loopback addresses (a receiver on this machine, for development and tests);
private, link-local and metadata addresses stay refused unless
WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE is on, which a system check forbids with
DEBUG off.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

MAX_URL_LENGTH = 2048


class UnsafeWebhookUrl(ValueError):
    """The message is the Portuguese sentence shown to the panel user."""


def resolve_host(host: str, port: int) -> list[str]:
    """Every address the host resolves to (a seam for tests)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({info[4][0] for info in infos})


# Deprecated site-local IPv6 (RFC 3879): Python counts it as global, but it can reach internal networks.
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        # IPv6 forms that carry an IPv4 address are as public as that address.
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            return is_public_address(str(embedded))
        if ip in _SITE_LOCAL:
            return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_link_local or ip.is_loopback)


def address_allowed(address: str) -> bool:
    """Public addresses; loopback too with WEBHOOK_ALLOW_INSECURE_URLS (a receiver on this machine, in
    development and tests); any address only with WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE."""
    if is_public_address(address) or settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE:
        return True
    return settings.WEBHOOK_ALLOW_INSECURE_URLS and ipaddress.ip_address(address.split("%", 1)[0]).is_loopback


def validate_webhook_url(url: str) -> str:
    """Returns the URL unchanged or raises UnsafeWebhookUrl."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeWebhookUrl(f"A URL deve ter no máximo {MAX_URL_LENGTH} caracteres.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeWebhookUrl("Informe uma URL válida.")
    allowed_schemes = {"https", "http"} if settings.WEBHOOK_ALLOW_INSECURE_URLS else {"https"}
    if parts.scheme not in allowed_schemes:
        raise UnsafeWebhookUrl("A URL deve usar https://.")
    if not parts.hostname:
        raise UnsafeWebhookUrl("Informe uma URL válida.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeWebhookUrl("A URL não pode conter usuário ou senha.")
    try:
        addresses = resolve_host(parts.hostname, port or (443 if parts.scheme == "https" else 80))
    except (OSError, UnicodeError):
        raise UnsafeWebhookUrl("Não foi possível resolver o host da URL.")
    if not addresses:
        raise UnsafeWebhookUrl("Não foi possível resolver o host da URL.")
    if not all(address_allowed(address) for address in addresses):
        raise UnsafeWebhookUrl("O host da URL deve resolver apenas para endereços públicos.")
    return url
