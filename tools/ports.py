"""TCP ports on 127.0.0.1 for the processes the bench and the end-to-end tests start."""

import socket


def free_port() -> int:
    """A port nothing listens on now (the kernel's pick), for a server about to start."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int) -> bool:
    """Whether something accepts connections on the port."""
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
