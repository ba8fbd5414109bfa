"""Whether ``lexicoord serve`` can listen where it was asked to, checked before the server starts.

uvicorn reports a port in use as an errno line and exits 3, after the server's start-up lines; a person needs
one sentence naming the port and how to choose another, and the exit code every other mistake has (1).
"""

from __future__ import annotations

import errno
import socket

from lexicoord.errors import ConfigError


def check_port(host: str, port: int) -> None:
    """Bind ``host:port`` as uvicorn will (same family, ``SO_REUSEADDR``) and let go at once; a refusal is a
    :class:`ConfigError` saying why and what to do."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        raise ConfigError(_reason(exc, host, port)) from None


def _reason(exc: OSError, host: str, port: int) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (f"Port {port} on {host} is already in use (another lexicoord serve, or another program): stop "
                f"that program, or pick another port with --port, such as --port {_other(port)}.")
    if exc.errno == errno.EACCES:
        return (f"Port {port} on {host} may not be used by this user (ports below 1024 need administrator rights "
                f"here): pick another with --port, such as --port 8000.")
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return (f"Cannot listen on {host}: it is not an address of this machine ({exc.strerror or exc}); use "
                "--host 127.0.0.1 for this machine alone or --host 0.0.0.0 for every network it is on.")
    return f"Cannot listen on {host} port {port}: {exc.strerror or exc}; pick another with --port or --host."


def _other(port: int) -> int:
    return port + 1 if port < 65535 else 8000
