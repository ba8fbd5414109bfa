"""What uvicorn leaves unbounded: how long a client may take to send a request, how large a request head
may grow, and how many connections one client may hold.

uvicorn's own timeout (``timeout_keep_alive``) covers only the idle time between two requests, and any
byte received stops it; nothing bounds a request that is sent slowly, so a client that opens hundreds of
connections and sends each a few bytes at a time (slowloris) holds them for as long as it likes, until the
server runs out of file handles and ordinary clients are reset. An ASGI middleware cannot help: it runs
only once a request's head has arrived. So the guard sits in the HTTP protocol itself (a subclass of
uvicorn's httptools protocol, given to uvicorn as ``http=``):

- a request must arrive whole (head and body) within :data:`REQUEST_TIMEOUT` seconds of its first byte,
  or 408 and the connection closes; a new connection that sends nothing for :data:`FIRST_BYTE_TIMEOUT`
  seconds is closed without a word. That one is longer: browsers open spare connections and drop those
  they have not used after 10 s (Chromium), and a server that closes one first races the request the
  browser may just be sending on it, which the browser does not retry on a connection never used;
- a head larger than :data:`MAX_HEAD` bytes is refused with 431 (the parser would keep it all);
- a client (an IPv4 address, an IPv6 /64: :func:`~lexicoord.web.ratelimit.address_key`) holds at most
  ``per_address`` connections, HTTP and WebSocket alike, and the server at most ``total``; a connection
  beyond either is answered 503 and closed at once. A proxy the operator trusts carries many clients, so
  it is held to the total only (it must guard itself against slow clients).

A WebSocket keeps its place until it closes; one that never says hello is closed by the room's socket
(:data:`lexicoord.web.socket.HELLO_TIMEOUT`).
"""

from __future__ import annotations

import asyncio
import http
import ipaddress
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from lexicoord.web.ratelimit import address_key

log = logging.getLogger(__name__)

#: Seconds a client has to send a whole request, from its first byte.
REQUEST_TIMEOUT = 10.0
#: Seconds a new connection may wait before sending its first byte.
FIRST_BYTE_TIMEOUT = 30.0
#: Bytes a request head may have (a browser's are a few hundred; nginx's default limit is 8 KiB a line).
MAX_HEAD = 16 * 1024
#: Connections (HTTP and WebSocket) one client may hold open at once.
CONNECTIONS_PER_ADDRESS = 64
#: File handles kept back from connections, for the store, model files and logs.
FILES_KEPT = 256


class ConnectionGuard:
    """Counts open connections per client and in all, and hands uvicorn the protocols that enforce them."""

    def __init__(self, per_address: int = CONNECTIONS_PER_ADDRESS, total: int = 1000,
                 trusted: Sequence[str] = ()) -> None:
        self.per_address, self.total = per_address, total
        self._trust_all = "*" in trusted
        self._trusted = [ipaddress.ip_network(t.strip(), strict=False) for t in trusted if t.strip() not in ("", "*")]
        self.by_client: Counter[str] = Counter()
        self.open = 0

    def _trusted_proxy(self, host: str) -> bool:
        if self._trust_all:
            return True
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in net for net in self._trusted)

    def admit(self, host: str) -> str | None:
        """Count a new connection from ``host``: the client it is counted under, or None if it must be refused."""
        if self.open >= self.total:
            return None
        key = address_key(host)
        if self.by_client[key] >= self.per_address and not self._trusted_proxy(host):
            return None
        self.by_client[key] += 1
        self.open += 1
        return key

    def release(self, key: str) -> None:
        """A connection counted under ``key`` has closed."""
        if self.by_client[key] <= 1:
            del self.by_client[key]
        else:
            self.by_client[key] -= 1
        self.open -= 1

    def protocols(self) -> tuple[type[asyncio.Protocol], type[asyncio.Protocol]]:
        """The HTTP and WebSocket protocol classes to give uvicorn (``http=``, ``ws=``) for this guard."""
        from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

        if AutoWebSocketsProtocol is None:  # pragma: no cover - uvicorn[standard] brings websockets
            raise RuntimeError("uvicorn has no WebSocket library to serve rooms with.")
        ws_base = cast(type[asyncio.Protocol], AutoWebSocketsProtocol)
        http_cls = type("GuardedHttp", (GuardedHttp,), {"guard": self})
        ws_cls = type("GuardedWebSocket", (ReleasesPlace, ws_base), {"guard": self})
        return cast(type[asyncio.Protocol], http_cls), cast(type[asyncio.Protocol], ws_cls)


def connection_budget(kept: int = FILES_KEPT) -> int:
    """Connections the server may hold at once: the file handles the process may open (its soft limit raised
    to the hard one, at most 65,536) less ``kept``; so a flood of connections is refused before the server
    runs out of handles for its store and its clients."""
    try:
        import resource
    except ImportError:  # not a POSIX system: no limit to read
        return 1000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(65536, hard if hard != resource.RLIM_INFINITY else 65536)
    if want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return max(16, soft - kept)


def _response(status: int, message: str) -> bytes:
    body = message.encode()
    return (f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


class ReleasesPlace(asyncio.Protocol):
    """A WebSocket protocol that gives its client's place back when it closes (it inherits the place from the
    HTTP connection it was upgraded from)."""

    guard: ClassVar[ConnectionGuard]
    place: str | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            super().connection_lost(exc)
        finally:
            if self.place is not None:
                self.guard.release(self.place)
                self.place = None


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline per request, a bound on the head, and a place per client."""

    guard: ClassVar[ConnectionGuard]
    place: str | None = None
    _timer: asyncio.TimerHandle | None = None
    _in_head = False
    _head_bytes = 0
    _chunk = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.place = self.guard.admit(self.client[0] if self.client else "")
        if self.place is None:
            self._refuse(503, "Too many open connections from this address, or to this server; try again shortly.")
            return
        self._arm(FIRST_BYTE_TIMEOUT)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        try:
            super().connection_lost(exc)
        finally:
            if self.place is not None:
                self.guard.release(self.place)
                self.place = None

    # the deadline -------------------------------------------------------------------------------------
    def _arm(self, seconds: float | None = None) -> None:
        """A request begins: :data:`REQUEST_TIMEOUT` seconds (or ``seconds``) for it to arrive."""
        self._disarm()
        self._in_head, self._head_bytes = True, self._chunk
        self._timer = self.loop.call_later(REQUEST_TIMEOUT if seconds is None else seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self.flow is not None and self.flow.read_paused:  # the server is not reading: not the client's delay
            self._timer = self.loop.call_later(REQUEST_TIMEOUT, self._too_slow)
            return
        log.debug("request from %s not received within %g s", self.client, REQUEST_TIMEOUT)
        if self._in_head and self._head_bytes:
            self._refuse(408, f"A request must arrive within {REQUEST_TIMEOUT:g} s.")
        else:  # nothing sent at all, or the app is reading the body (and hears the disconnect)
            self.transport.close()

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` (unless a response is being written) and close."""
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(_response(status, message))
        self.transport.close()

    # the parser's steps -------------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        if self.place is None or self.transport.is_closing():
            return  # refused: nothing it sends is read
        self._chunk = len(data)
        if self._in_head and not self._head_bytes:
            self._arm()  # a new connection's first bytes: the request's own clock starts now
        elif self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        self._chunk = 0
        if self._in_head and self._head_bytes > MAX_HEAD and not self.transport.is_closing():
            self._refuse(431, f"Request heads are limited to {MAX_HEAD} bytes.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._timer is None:  # a kept-alive connection's next request: its clock starts with its first byte
            self._arm()

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        self._in_head = False
        super().handle_websocket_upgrade()
        ws: Any = self.transport.get_protocol()
        if isinstance(ws, ReleasesPlace):  # the WebSocket now holds the place, and gives it back
            ws.place, self.place = self.place, None
