"""The host names a server answers to, and the origin a page must come from.

A DNS-rebinding page is same-origin in the browser's eyes (its name now points
at this machine), so the Origin check alone lets it in; only its Host header
gives it away. A server therefore answers only to the names its operator
serves under (Starlette's ``TrustedHostMiddleware`` checks HTTP and WebSocket
requests alike, before any route runs), and a WebSocket must also come from a
page of the very host it connects to.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from lexicoord.errors import ConfigError

#: Always served: the names of this machine's loopback interface.
LOOPBACK = ("localhost", "127.0.0.1", "::1")
#: Bind addresses that mean "every interface": they name no host a browser would use.
EVERY_INTERFACE = ("0.0.0.0", "::", "")


def host_pattern(name: str) -> str:
    """``name`` as ``TrustedHostMiddleware`` compares hosts: lower case, no port, IPv6 literals in brackets."""
    name = name.strip().lower()
    if name.startswith("["):
        return name.split("]", 1)[0] + "]"
    if name.count(":") > 1:  # a bare IPv6 literal
        return f"[{name}]"
    return name.split(":", 1)[0]


def served_hosts(bind: str, named: Iterable[str] = ()) -> list[str]:
    """The loopback names, the address the server binds to (unless it is every interface), and ``named``."""
    hosts = [*LOOPBACK, *([] if bind.strip() in EVERY_INTERFACE else [bind]), *named]
    out: list[str] = []
    for h in hosts:
        pattern = host_pattern(h)
        if "*" in pattern[1:] or (pattern.startswith("*") and pattern != "*" and not pattern.startswith("*.")):
            raise ConfigError(f"--allowed-host '{h}': a wildcard is allowed only as '*.example.org' (or '*' for any).")
        if pattern and pattern not in out:
            out.append(pattern)
    return out


def proxy_addresses(text: str | None) -> list[str]:
    """The proxies named with ``--forwarded-allow-ips`` (addresses or networks, comma-separated, or '*')."""
    out = [p.strip() for p in (text or "").split(",") if p.strip()]
    for p in out:
        if p == "*":
            continue
        try:
            ipaddress.ip_network(p, strict=False)
        except ValueError:
            raise ConfigError(f"--forwarded-allow-ips: '{p}' is not an address or network "
                              "(such as 10.0.0.2 or 10.0.0.0/8).") from None
    return out


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a WebSocket's ``Origin`` is a page of the host it connects to (no Origin: not a browser)."""
    if not origin:
        return True
    if not host:
        return False
    netloc = urlsplit(origin).netloc if "://" in origin else origin
    return netloc.lower() == host.strip().lower()
