"""Slow and idle clients against the server as ``lexicoord serve`` builds it, over real loopback sockets:
half-sent requests (slowloris), heads that never end, WebSockets that never say hello, and one address
holding many connections. Other loopback addresses (127.0.0.2, ...) play the ordinary clients.

Every client here is bounded: a few dozen sockets, each read with a timeout.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from tests.web.conftest import serving

BOT = [{"name": "bot", "model": "local/smollm2-135m"}]


def half_sent(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A connection that sends the start of a request head and then nothing."""
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET /api/offer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Wait: ".encode())
    return s


def until_closed(s: socket.socket, within: float) -> bytes:
    """What the server sends before it closes ``s``; fails if it is still open after ``within`` seconds."""
    data = b""
    deadline = time.monotonic() + within
    try:
        while True:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = s.recv(4096)
            if not chunk:
                return data
            data += chunk
    except ConnectionResetError:
        return data
    except TimeoutError:
        raise AssertionError(f"the server kept the connection open for {within} s (sent {data[:60]!r})") from None
    finally:
        s.close()


def get(port: int, path: str = "/api/offer", source: str = "127.0.0.1") -> httpx.Response:
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=10) as c:
        return c.get(f"http://127.0.0.1:{port}{path}")


def ws(port: int, path: str, source: str = "127.0.0.1") -> Any:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return ws_connect(f"ws://127.0.0.1:{port}{path}", sock=sock, open_timeout=5, close_timeout=2)


# --------------------------------------------------------------------------------------------- slowloris
def test_half_sent_requests_are_cut_at_the_deadline_and_one_address_holds_few(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lexicoord.web.guard.REQUEST_TIMEOUT", 1.5)
    monkeypatch.setattr("lexicoord.web.guard.FIRST_BYTE_TIMEOUT", 2.5)
    with serving(tmp_path / "a.db", "--connections-per-address", "10") as port:
        started = time.monotonic()
        silent = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.4", 0))
        held = [half_sent(port) for _ in range(10)]
        time.sleep(0.2)
        for _ in range(20):  # beyond this address's share: refused at once, not kept waiting
            s, t = half_sent(port), time.monotonic()
            reply = until_closed(s, within=1.0)
            assert reply == b"" or reply.startswith(b"HTTP/1.1 503"), reply[:80]
            assert time.monotonic() - t < 1.0
        assert get(port, source="127.0.0.2").status_code == 200, "another address is served meanwhile"

        trickler = half_sent(port, source="127.0.0.3")  # one byte at a time: each byte must not buy more time
        trickled = time.monotonic()
        trickler.settimeout(0.1)
        with pytest.raises(OSError):
            for _ in range(60):
                trickler.sendall(b"a")
                try:
                    if trickler.recv(4096).startswith(b"HTTP/1.1 408"):
                        raise ConnectionResetError("answered 408")
                except TimeoutError:
                    pass
        assert time.monotonic() - trickled < 3.0, "a trickle of bytes kept the request open"
        trickler.close()

        for s in held:
            assert until_closed(s, within=5.0).startswith(b"HTTP/1.1 408 Request Timeout")
        assert until_closed(silent, within=3.0) == b"", "a connection that sent nothing is closed without a word"
        assert time.monotonic() - started >= 2.5 * 0.9, "a new connection waits longer for its first byte"
        assert time.monotonic() - started >= 1.5 * 0.9, "cut before the deadline"
        assert get(port).status_code == 200, "the address's share is free again once its connections are gone"


def test_a_head_that_never_ends_gets_431_before_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lexicoord.web.guard.REQUEST_TIMEOUT", 60.0)
    with serving(tmp_path / "a.db") as port:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"GET /api/offer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode() + b"X-Pad: " + b"a" * 40_000)
        assert until_closed(s, within=5.0).startswith(b"HTTP/1.1 431")


# ------------------------------------------------------------------------------------------- websockets
def test_a_websocket_that_never_says_hello_is_closed_and_one_that_did_stays(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lexicoord.web.socket.HELLO_TIMEOUT", 1.0, raising=False)
    with serving(tmp_path / "a.db") as port:
        base = f"http://127.0.0.1:{port}"
        code = httpx.post(f"{base}/api/rooms", json={"agents": BOT}).json()["code"]
        token = httpx.post(f"{base}/api/rooms/{code}/join", json={"name": "Ann"}).json()["token"]
        with ws(port, f"/ws/{code}") as ann:
            ann.send(json.dumps({"type": "hello", "token": token}))
            assert json.loads(ann.recv(timeout=5))["type"] == "welcome"
            opened = time.monotonic()
            with ws(port, f"/ws/{code}") as silent:
                silent.send(json.dumps({"type": "ping"}))  # talking without a hello buys no time
                assert json.loads(silent.recv(timeout=5))["code"] == "not_authenticated"
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        silent.recv(timeout=5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
            assert "hello" in closed.value.rcvd.reason
            assert time.monotonic() - opened < 4.0
            time.sleep(0.5)
            ann.send(json.dumps({"type": "ping"}))
            frames = [json.loads(ann.recv(timeout=5)) for _ in range(3)]
            assert {"type": "pong"} in frames, "a page that said hello stays open past the hello time"


def opens(port: int) -> bool:
    """Whether a WebSocket from 127.0.0.1 opens and is answered (any failure to open: False)."""
    try:
        with ws(port, "/ws/AAAAA-BBBBB") as conn:
            conn.send(json.dumps({"type": "ping"}))
            return bool(json.loads(conn.recv(timeout=5))["code"] == "not_authenticated")
    except Exception:  # noqa: BLE001 - refused at the handshake, reset, or closed: it did not open
        return False


def test_open_websockets_count_toward_the_address_share_and_free_it_when_they_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lexicoord.web.socket.HELLO_TIMEOUT", 30.0, raising=False)
    with serving(tmp_path / "a.db", "--connections-per-address", "3") as port, contextlib.ExitStack() as held:
        first = held.enter_context(ws(port, "/ws/AAAAA-BBBBB"))
        for _ in range(2):
            held.enter_context(ws(port, "/ws/AAAAA-BBBBB"))
        assert not opens(port), "a fourth connection from the address is refused"
        assert get(port).status_code == 503, "an HTTP request from the same address is refused too"
        assert get(port, source="127.0.0.2").status_code == 200
        first.close()
        deadline = time.monotonic() + 5
        while get(port).status_code == 503:  # the closed WebSocket's place is given back
            assert time.monotonic() < deadline, "a closed WebSocket kept its place"
            time.sleep(0.1)
        assert opens(port)


# ----------------------------------------------------------------------------------------- the counting
def test_each_network_has_its_share_and_the_server_a_total() -> None:
    from lexicoord.web.guard import ConnectionGuard

    guard = ConnectionGuard(per_address=2, total=4, trusted=["10.0.0.9"])
    first = [guard.admit(a) for a in ("2001:db8:aa:1::1", "2001:db8:aa:1::2", "2001:db8:aa:1::3")]
    assert first[:2] == ["2001:db8:aa:1::/64"] * 2 and first[2] is None, "one /64 holds its share at most"
    assert guard.admit("::ffff:198.51.100.4") == "198.51.100.4"
    assert guard.admit("10.0.0.9") == "10.0.0.9", "a proxy the operator named carries many clients"
    assert guard.admit("10.0.0.9") is None and guard.admit("203.0.113.1") is None, "the server's total is reached"
    guard.release("2001:db8:aa:1::/64")
    assert guard.admit("10.0.0.9") == "10.0.0.9" and guard.open == 4
    for key in ("10.0.0.9", "10.0.0.9", "198.51.100.4"):
        guard.release(key)
    assert [guard.admit("10.0.0.9") for _ in range(3)] == ["10.0.0.9"] * 3, \
        "a proxy the operator named is held to the total only"
    assert guard.open == 4


def test_proxies_are_named_by_address_or_network_in_either_family() -> None:
    from lexicoord.web.guard import ConnectionGuard

    guard = ConnectionGuard(per_address=1, total=100, trusted=["2001:db8:ff::/48", "10.0.0.0/8"])
    assert [guard.admit("2001:db8:ff:1::7") for _ in range(3)] == ["2001:db8:ff:1::/64"] * 3
    assert [guard.admit("::ffff:10.1.2.3") for _ in range(3)] == ["10.1.2.3"] * 3
    assert [guard.admit("2001:db8:fe::7") for _ in range(2)] == ["2001:db8:fe::/64", None], "not a proxy"
    everyone = ConnectionGuard(per_address=1, total=3, trusted=["*"])
    assert [everyone.admit("203.0.113.1") for _ in range(4)] == ["203.0.113.1"] * 3 + [None], \
        "behind '*' only the total counts"
