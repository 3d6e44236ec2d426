"""Deployment checks: settings that work on one machine and break, or open a hole, in production.

Django runs them in every management command; foundation/startup.py runs them when the web server,
a worker or beat starts, so a misconfigured process refuses to start instead of serving.
"""

import ipaddress
import stat

from django.conf import settings
from django.core.checks import Error, Warning, register


@register(deploy=False)
def keys_from_the_environment_with_a_shared_database(app_configs, **kwargs):
    shared_database = settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3"
    if shared_database and not settings.DEBUG and not settings.KEYS_FROM_ENVIRONMENT:
        return [
            Error(
                "SECRET_KEY and JWT_SIGNING_KEY must come from the environment with a shared database.",
                hint="A key generated into DATA_DIR belongs to one machine: sessions, signed links and panel "
                "tokens made on one would fail on another. Set both, the same on every machine "
                "(docs/operations.md, 'Keys and secrets').",
                id="helpdesk.E001",
            )
        ]
    return []


@register(deploy=True)
def client_address_header_without_a_trusted_proxy(app_configs, **kwargs):
    """Upgrading with CLIENT_IP_META_KEY set and the proxy on another machine would count every client as the
    proxy's address (the header is believed from TRUSTED_PROXIES only): one login budget for everyone."""
    if settings.RATELIMIT_IP_META_KEY == "REMOTE_ADDR":
        return []
    networks = [ipaddress.ip_network(entry.strip(), strict=False) for entry in settings.TRUSTED_PROXIES]
    if any(not network.is_loopback for network in networks):
        return []
    return [
        Warning(
            "CLIENT_IP_META_KEY is set, but TRUSTED_PROXIES names no proxy beyond this machine.",
            hint="The header is believed only from TRUSTED_PROXIES; from a proxy on another machine every "
            "client would count as the proxy's address. Name the proxy's address in TRUSTED_PROXIES, or "
            "silence helpdesk.W001 when it runs on this machine (docs/operations.md, 'The client address').",
            id="helpdesk.W001",
        )
    ]


METRICS_TOKEN_MIN_LENGTH = 32


@register(deploy=False)
def metrics_token_long_enough(app_configs, **kwargs):
    """The token is the only guard of /metrics (and of each worker's port): a short one can be guessed."""
    token = settings.METRICS_TOKEN
    if token and len(token) < METRICS_TOKEN_MIN_LENGTH and not settings.DEBUG:
        return [
            Error(
                f"METRICS_TOKEN has {len(token)} characters; at least {METRICS_TOKEN_MIN_LENGTH} are needed.",
                hint="Generate one with `openssl rand -hex 32`, the same on every machine, and give Prometheus "
                "the same (docs/operations.md, 'Metrics').",
                id="helpdesk.E002",
            )
        ]
    return []


@register(deploy=False)
def data_directory_is_private(app_configs, **kwargs):
    """The settings tighten DATA_DIR at start (config/settings.py); this is what is left when they could not."""
    mode = stat.S_IMODE(settings.DATA_DIR.stat().st_mode)
    if mode & 0o077:
        return [
            Error(
                f"DATA_DIR ({settings.DATA_DIR}) has mode {mode:o}: other users can read the keys, the database "
                "and the uploaded files in it.",
                hint="Give it to the user the service runs as, mode 700 (`chown` it, then `chmod 700`); the service "
                "tightens it at start when it can (docs/operations.md, 'Environment variables').",
                id="helpdesk.E003",
            )
        ]
    return []
