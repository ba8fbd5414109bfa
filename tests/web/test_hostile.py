"""Hostile clients against the server as ``lexicoord serve`` builds it: foreign hosts and origins, forged
forwarded-for headers, room-code guessing over WebSockets; and every refusal as a client really receives it.

The first tests run the command's own app and uvicorn settings on a loopback port and talk to it with real
HTTP and WebSocket clients (what arrives on the wire, not what an in-process client makes of it).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as ws_connect

from lexicoord.runs.store import Store
from lexicoord.web.app import create_app
from lexicoord.web.persistence import RoomStore
from tests.docs_pages import page
from tests.web.conftest import Browser, create_room, join, make_services, serving

ROOT = Path(__file__).resolve().parents[2]
BOT = [{"name": "bot", "model": "local/smollm2-135m"}]


def ws(port: int, path: str, host: str | None = None, origin: str | None = None) -> Any:
    """A WebSocket to the server on ``port`` that names ``host`` in its Host header (a real client's handshake)."""
    sock = socket.create_connection(("127.0.0.1", port))
    return ws_connect(f"ws://{host or f'127.0.0.1:{port}'}{path}", sock=sock, origin=origin,  # type: ignore[arg-type]
                      open_timeout=10, close_timeout=5)


def closed_with(conn: Any, *sends: dict[str, Any]) -> tuple[list[dict[str, Any]], int, str]:
    """Send ``sends``, then read until the server closes: the frames received, the close code and reason."""
    frames = []
    with conn:
        for msg in sends:
            conn.send(json.dumps(msg))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                frames.append(json.loads(conn.recv(timeout=10)))
    assert closed.value.rcvd is not None, "the server closed without a close frame"
    return frames, closed.value.rcvd.code, closed.value.rcvd.reason


# ------------------------------------------------------------------------------------------------ hosts
def refused_hosts(port: int, hosts: tuple[str, ...]) -> None:
    base = f"http://127.0.0.1:{port}"
    for host in hosts:
        assert httpx.get(f"{base}/", headers={"host": host}).status_code == 400, host
        r = httpx.post(f"{base}/api/rooms", json={"agents": BOT}, headers={"host": host})
        assert r.status_code == 400, host
        with pytest.raises(InvalidStatus) as refused:
            ws(port, "/ws/AAAAA-BBBBB", host=host)
        assert refused.value.response.status_code == 400


def test_a_rebinding_host_is_refused_on_http_and_websocket_by_default(tmp_path: Path) -> None:
    """A DNS-rebinding page names its own host: it must not load pages, create rooms (which seat the
    operator's models) or open a WebSocket."""
    with serving(tmp_path / "a.db") as port:
        refused_hosts(port, (f"evil.example:{port}", "evil.example"))
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
            assert httpx.get(f"http://127.0.0.1:{port}/api/offer", headers={"host": host}).status_code == 200, host
    assert RoomStore(Store(str(tmp_path / "a.db"))).listing(include_closed=True) == [], "no room was created"


def test_the_hosts_the_operator_names_are_answered(tmp_path: Path) -> None:
    with serving(tmp_path / "a.db", "--allowed-host", "rooms.example.org") as port:
        base = f"http://127.0.0.1:{port}"
        refused_hosts(port, (f"evil.example:{port}", f"rooms.example.org.evil.example:{port}"))
        created = httpx.post(f"{base}/api/rooms", json={"agents": BOT}, headers={"host": "rooms.example.org"})
        assert created.status_code == 201
        with ws(port, f"/ws/{created.json()['code']}", host=f"rooms.example.org:{port}",
                origin=f"https://rooms.example.org:{port}") as conn:
            conn.send(json.dumps({"type": "ping"}))
            assert json.loads(conn.recv(timeout=10))["code"] == "not_authenticated"


def test_the_served_hosts_are_loopback_the_bind_address_and_the_named_ones() -> None:
    from lexicoord.web.hosts import served_hosts

    assert served_hosts("127.0.0.1") == ["localhost", "127.0.0.1", "[::1]"]
    assert served_hosts("192.168.1.5", ["Rooms.Example.org:8443", "fe80::1"]) == \
        ["localhost", "127.0.0.1", "[::1]", "192.168.1.5", "rooms.example.org", "[fe80::1]"]
    assert served_hosts("0.0.0.0") == served_hosts("::") == ["localhost", "127.0.0.1", "[::1]"], \
        "every interface names no host: the operator names them"


# ----------------------------------------------------------------------------------------- forwarded-for
def lookups(port: int, forwarded: list[str]) -> list[int]:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
        return [c.get("/api/rooms/AAAAA-BBBBB", headers={"x-forwarded-for": f}).status_code for f in forwarded]


def test_forwarded_for_from_loopback_does_not_dodge_the_limit(tmp_path: Path) -> None:
    with serving(tmp_path / "a.db") as port:  # the default: 2 a second, bursts of 30
        statuses = lookups(port, [f"10.0.0.{i}" for i in range(45)])
    assert statuses[:30] == [404] * 30 and statuses.count(429) >= 10, statuses


def test_forwarded_for_is_believed_from_the_proxies_the_operator_names(tmp_path: Path) -> None:
    with serving(tmp_path / "a.db", "--forwarded-allow-ips", "127.0.0.1") as port:
        assert 429 not in lookups(port, [f"10.0.0.{i}" for i in range(45)]), "each client has its own limit"
        same = lookups(port, ["10.9.9.9"] * 45)
    assert same.count(429) >= 10, "one client behind the proxy is limited"


def test_a_bad_proxy_address_is_one_clear_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from lexicoord.cli.app import app
    from lexicoord.errors import ConfigError

    result = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "a.db"), "--forwarded-allow-ips", "proxy1"])
    assert isinstance(result.exception, ConfigError) and "'proxy1' is not an address" in str(result.exception)
    result = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "a.db"), "--allowed-host", "a*.example"])
    assert isinstance(result.exception, ConfigError) and "wildcard" in str(result.exception)


# ----------------------------------------------------------------------------------- refusals on the wire
def test_refusals_arrive_as_the_documented_close_codes_with_a_reason(tmp_path: Path) -> None:
    with serving(tmp_path / "a.db") as port:
        base = f"http://127.0.0.1:{port}"
        code = httpx.post(f"{base}/api/rooms", json={"agents": BOT}).json()["code"]
        token = httpx.post(f"{base}/api/rooms/{code}/join", json={"name": "Ann"}).json()["token"]
        frames, close, reason = closed_with(ws(port, f"/ws/{code}", origin="http://evil.example"))
        assert (frames, close) == ([], 4403) and "another site" in reason
        frames, close, reason = closed_with(ws(port, f"/ws/{code}"), {"type": "hello", "token": "0" * 32})
        assert [f["code"] for f in frames] == ["bad_token"] and close == 4401 and "join again" in reason
        with ws(port, f"/ws/{code}", origin=f"http://127.0.0.1:{port}") as conn:  # the room's own page
            conn.send(json.dumps({"type": "hello", "token": token}))
            assert json.loads(conn.recv(timeout=10))["type"] == "welcome"


def close_codes_sent() -> set[int]:
    """The close codes the WebSocket module closes with: its ``(code, reason)`` constants."""
    from lexicoord.web import socket as ws_module

    return {v[0] for k, v in vars(ws_module).items() if k.isupper() and isinstance(v, tuple) and len(v) == 2
            and isinstance(v[0], int) and isinstance(v[1], str)}


def test_the_live_rooms_page_lists_exactly_the_close_codes_the_server_sends() -> None:
    listed = " ".join(page("live-rooms.md").split()).split("Close codes", 1)[1].split(". ", 1)[0]
    documented = {int(c) for c in re.findall(r"\b(4\d{3}|100[0-9])\b", listed)}
    sent = close_codes_sent()
    assert sent and documented == sent


def test_the_room_page_handles_the_close_codes_the_server_sends() -> None:
    script = (ROOT / "src/lexicoord/web/static/room.js").read_text()
    handled = {int(c) for c in re.findall(r"ev\.code === (\d+)", script)}
    ours = {c for c in close_codes_sent() if c >= 4000}
    assert handled == ours, f"room.js handles {sorted(handled)}; the server sends {sorted(ours)}"


# ------------------------------------------------------------------------------------------ code guessing
def test_websocket_hellos_share_the_per_address_limit_of_http_lookups(db: Path) -> None:
    with TestClient(create_app(make_services(db), http_rate=0.01, http_burst=6)) as c:
        assert [c.get("/api/rooms/AAAAA-BBBBB").status_code for _ in range(2)] == [404, 404]
        outcomes = []
        for i in range(6):
            with c.websocket_connect(f"/ws/ZZZZZ-{i:05d}") as conn:
                conn.send_json({"type": "hello", "token": "0" * 32})
                reply = conn.receive_json()
                with pytest.raises(WebSocketDisconnect) as closed:
                    conn.receive_text()
                outcomes.append((reply["code"], closed.value.code))
        assert outcomes == [("bad_token", 4401)] * 4 + [("rate_limited", 4429)] * 2
        assert c.get("/api/rooms/AAAAA-BBBBB").status_code == 429, "the WebSocket guesses counted on HTTP too"


def test_hellos_with_a_seats_token_cost_nothing_so_a_labs_pages_all_reconnect(db: Path) -> None:
    """Forty people behind one address (a lab's router) reconnect at once after a restart: none is refused,
    while a guess from that address still is once the budget is spent."""
    with TestClient(create_app(make_services(db), http_rate=0.01, http_burst=5)) as c:
        code = c.post("/api/rooms", json={"agents": [{"name": "bot", "model": "scripted/first"}]}).json()["code"]
        tokens = [c.post(f"/api/rooms/{code}/join", json={"name": f"P{i}"}).json()["token"] for i in range(3)]
        welcomed = 0
        for i in range(40):
            with c.websocket_connect(f"/ws/{code}") as conn:
                conn.send_json({"type": "hello", "token": tokens[i % 3]})
                welcomed += conn.receive_json()["type"] == "welcome"
        assert welcomed == 40
        guesses = []
        for _ in range(2):  # the creation and joins spent 4 of the 5; the 40 hellos spent none
            with c.websocket_connect(f"/ws/{code}") as conn:
                conn.send_json({"type": "hello", "token": "0" * 32})
                guesses.append(conn.receive_json()["code"])
        assert guesses == ["bad_token", "rate_limited"]


def transcript(c: TestClient, path: str) -> list[Any]:
    """Everything a client learns before authenticating: the replies to a few messages, then to a bad hello."""
    out: list[Any] = []
    with c.websocket_connect(path) as conn:
        for msg in ({"type": "start"}, {"type": "ping"}, {"type": "choose", "round": 1, "choice": "a",
                                                          "justification": "x"}, "{{{"):
            conn.send_text(msg if isinstance(msg, str) else json.dumps(msg))
            out.append(conn.receive_json())
        conn.send_json({"type": "hello", "token": "0" * 32})
        out.append(conn.receive_json())
        with pytest.raises(WebSocketDisconnect) as closed:
            conn.receive_text()
        out.append((closed.value.code, closed.value.reason))
    return out


def test_a_code_that_names_no_room_is_answered_exactly_as_one_that_does(client: TestClient) -> None:
    code = create_room(client)
    join(client, code, "Ann")
    hit, miss = transcript(client, f"/ws/{code}"), transcript(client, "/ws/ZZZZZ-ZZZZZ")
    assert hit == miss
    assert [m["code"] for m in hit[:4]] == ["not_authenticated"] * 2 + ["bad_message"] * 2
    assert hit[5][0] == 4401


def test_a_person_still_plays_after_the_checks(client: TestClient) -> None:
    """The checks refuse what they should and nothing else: a joined person is welcomed and answered."""
    code = create_room(client)
    token = join(client, code, "Ann")
    with client.websocket_connect(f"/ws/{code}", headers={"origin": "http://testserver"}) as conn:
        b = Browser(conn).hello(token)
        assert b.state is not None and b.state["you"]["name"] == "Ann"
        b.send(type="ping")
        assert b.receive() == {"type": "pong"}
