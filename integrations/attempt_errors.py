"""What a failed delivery attempt records and shows (`erro` of the delivery log): a class, never a text.

An exception's text (a resolver's answer, a certificate's names, which address refused or reset the
connection) would turn webhooks into a probe: an organization's admin points one at any public host and
reads what the service's network saw. The class is all a receiver's operator needs to act on.
"""

import socket
import ssl

import requests
from urllib3.exceptions import NameResolutionError

TIMEOUT = "timeout"  # no answer within WEBHOOK_TIMEOUT
REFUSED = "conexao_recusada"  # nothing listens on the port
DNS = "dns"  # the host name does not resolve
TLS = "tls"  # the TLS handshake or the certificate failed
CONNECTION = "conexao"  # any other network failure (reset, closed mid-answer...)
BLOCKED = "endereco_bloqueado"  # the URL resolves to an address webhooks may not reach
INTERNAL = "erro_interno"  # the service's own fault (logged with its traceback)

CLASSES = (TIMEOUT, REFUSED, DNS, TLS, CONNECTION, BLOCKED, INTERNAL)


def http_status(status_code: int) -> str:
    """A receiver's answer outside 2xx (a redirect included: it is never followed)."""
    return f"http_{status_code}"


def network_failure(error: requests.RequestException) -> str:
    """The class of a failure requests raised, read from the exceptions it wraps."""
    if isinstance(error, requests.exceptions.SSLError):
        return TLS
    for cause in _causes(error):
        if isinstance(cause, NameResolutionError | socket.gaierror):
            return DNS
        if isinstance(cause, ConnectionRefusedError):
            return REFUSED
        if isinstance(cause, ssl.SSLError):
            return TLS
    return CONNECTION


def _causes(error: BaseException, depth: int = 8):
    """requests wraps urllib3's MaxRetryError (in args, its `reason`), which wraps the socket's error."""
    seen: set[int] = set()
    pending = [error]
    while pending and len(seen) < depth * 4:
        current = pending.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending += [current.__cause__, current.__context__, getattr(current, "reason", None)]
        pending += [arg for arg in getattr(current, "args", ()) if isinstance(arg, BaseException)]
