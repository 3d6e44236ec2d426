"""The service's WSGI application for the contract fuzzing, resolving host names offline.

The fuzzer makes up thousands of webhook URLs, and the service resolves each one's host
(integrations.webhook_urls.resolve_host, the seam for tests): with the system resolver that is a
DNS query per made-up name. Here only numeric hosts resolve (getaddrinfo with AI_NUMERICHOST:
nothing leaves the machine), as on a machine without DNS; any other name is unresolvable, which
the service answers as it answers a name that does not resolve.
"""

import socket

from integrations import webhook_urls


def resolve_numeric_host(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    return sorted({info[4][0] for info in infos})


webhook_urls.resolve_host = resolve_numeric_host

from config.wsgi import application  # noqa: E402 (after the seam is set)

__all__ = ["application"]
