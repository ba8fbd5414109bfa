"""What one client may take of the server: its share of the join limit (an IPv6 network is one client), its
share of the rooms, and how long rooms nobody uses are kept.

Addresses here are what a peer really connects from: IPv6 in every spelling, IPv4, IPv4 mapped into IPv6.
An in-process client can claim any address (:class:`From`), so a whole /64 is played from one test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.runs.schema import RoomRow
from lexicoord.runs.store import Store
from lexicoord.web.app import create_app
from lexicoord.web.persistence import RoomStore
from lexicoord.web.ratelimit import AddressLimiter, address_key
from tests.web.conftest import Browser, join, make_services

BOT = {"agents": [{"name": "bot", "model": "scripted/first"}]}


class From:
    """The app as if every request came from ``address`` (set it between requests)."""

    def __init__(self, app: Any, address: str = "127.0.0.1") -> None:
        self.app, self.address = app, address

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "client": (self.address, 50000)}
        await self.app(scope, receive, send)


def eventually(check: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


# ----------------------------------------------------------------------------------------- address keys
SAME_CLIENT = [
    # one IPv6 /64, however a peer's address is written
    ("2001:db8:aa:1::1", "2001:db8:aa:1::/64"),
    ("2001:DB8:AA:1:ffff:ffff:ffff:fffe", "2001:db8:aa:1::/64"),
    ("2001:0db8:00aa:0001:0000:0000:0000:0099", "2001:db8:aa:1::/64"),
    ("fe80::1%eth0", "fe80::/64"),
    # IPv4 is the address itself, also when it arrives mapped into IPv6 (a dual-stack socket)
    ("203.0.113.7", "203.0.113.7"),
    ("::ffff:203.0.113.7", "203.0.113.7"),
    ("::FFFF:cb00:7107", "203.0.113.7"),
    # what is not an address (a test client's name, a unix socket) is kept as it is
    ("testclient", "testclient"),
    ("", ""),
]


@pytest.mark.parametrize(("address", "key"), SAME_CLIENT)
def test_an_address_is_counted_under_its_network(address: str, key: str) -> None:
    assert address_key(address) == key


def test_every_address_of_one_v6_network_draws_on_one_budget() -> None:
    limiter = AddressLimiter(rate=0.001, burst=5)
    network = [f"2001:db8:aa:1::{i:x}" for i in range(1, 40)]
    allowed = [limiter.allow(a) for a in network]
    assert allowed == [True] * 5 + [False] * 34, "a /64 guesses at one address's pace"
    assert limiter.allow("2001:db8:aa:2::1"), "the next network has its own budget"
    assert [limiter.allow(a) for a in ("198.51.100.4", "::ffff:198.51.100.4", "::ffff:198.51.100.4")] == [True] * 3
    assert [limiter.allow("::ffff:198.51.100.4") for _ in range(3)] == [True, True, False], \
        "a mapped address shares its IPv4 budget"


def test_many_networks_never_reset_another_clients_budget() -> None:
    limiter = AddressLimiter(rate=0.001, burst=3, max_addresses=50)
    guesser = "2001:db8:aa:1::1"
    assert [limiter.allow(guesser) for _ in range(4)] == [True, True, True, False]
    for i in range(500):  # a client rotating through networks, while the guesser keeps trying
        assert limiter.allow(f"2001:db8:{i // 256:x}:{i % 256:x}::1")
        if i % 10 == 0:
            assert not limiter.allow(guesser), f"the guesser's budget came back after {i} other networks"
        assert len(limiter.buckets) <= 50, "memory stays bounded"


def test_the_least_recently_seen_client_is_forgotten_first() -> None:
    limiter = AddressLimiter(rate=0.001, burst=1, max_addresses=3)
    for a in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        assert limiter.allow(a)
    assert not limiter.allow("10.0.0.1")  # seen again: now the newest
    assert limiter.allow("10.0.0.4")  # the table is full: 10.0.0.2, the oldest, goes
    assert list(limiter.buckets) == ["10.0.0.3", "10.0.0.1", "10.0.0.4"]
    assert not limiter.allow("10.0.0.1") and not limiter.allow("10.0.0.3"), "the others keep what they spent"


def test_a_v6_network_shares_the_join_limit_of_the_server(db: Path) -> None:
    app = From(create_app(make_services(db), http_rate=0.001, http_burst=5, allowed_hosts=["testserver"]))
    with TestClient(app) as c:
        statuses = []
        for i in range(1, 13):
            app.address = f"2001:db8:aa:1:{i:x}::{i:x}"
            statuses.append(c.get("/api/rooms/AAAAA-BBBBB").status_code)
        assert statuses == [404] * 5 + [429] * 7, statuses
        app.address = "2001:db8:aa:2::1"
        assert c.get("/api/rooms/AAAAA-BBBBB").status_code == 404


# ------------------------------------------------------------------------------------ rooms per address
def creates(c: TestClient, app: From, address: str, n: int) -> list[Any]:
    app.address = address
    out = []
    for _ in range(n):
        r = c.post("/api/rooms", json=BOT)
        out.append(r.status_code if r.status_code == 201 else (r.status_code, r.json()["code"]))
    return out


def test_one_network_opens_at_most_its_share_of_rooms_even_across_a_restart(db: Path) -> None:
    def served() -> From:
        return From(create_app(make_services(db), http_rate=1000, http_burst=1000, rooms_per_address=3,
                               idle_close=None, unused_close=None))

    app = served()
    with TestClient(app) as c:
        assert creates(c, app, "2001:db8:aa:1::1", 4) == [201] * 3 + [(429, "too_many_rooms")]
        assert creates(c, app, "2001:db8:aa:1::beef", 1) == [(429, "too_many_rooms")], "the same /64"
        assert creates(c, app, "::ffff:203.0.113.7", 3) == [201] * 3
        assert creates(c, app, "203.0.113.7", 1) == [(429, "too_many_rooms")], "mapped or not, one client"
        assert creates(c, app, "2001:db8:aa:2::1", 1) == [201], "another network is not held up"
    app = served()
    with TestClient(app) as c:  # the rooms reopen with whoever opened them
        assert creates(c, app, "2001:db8:aa:1::2", 1) == [(429, "too_many_rooms")]
        assert creates(c, app, "203.0.113.7", 1) == [(429, "too_many_rooms")]
        assert creates(c, app, "2001:db8:aa:2::9", 2) == [201, 201]


def test_a_closed_room_frees_its_creators_share_and_forgets_the_address(db: Path) -> None:
    app = From(create_app(make_services(db), http_rate=1000, http_burst=1000, rooms_per_address=1,
                          idle_close=None, unused_close=0.5, sweep_every=0.05))
    with TestClient(app) as c:
        assert creates(c, app, "198.51.100.4", 2) == [201, (429, "too_many_rooms")]
        rooms = RoomStore(Store(str(db)))
        try:
            eventually(lambda: rooms.listing() == [])
            [closed] = rooms.listing(include_closed=True)
            with rooms.store.session() as s:
                row = s.get(RoomRow, closed.id)
                assert row is not None and "198.51.100" not in str(row.state), "the store keeps no closed room's address"
        finally:
            rooms.close()
        assert creates(c, app, "198.51.100.4", 1) == [201]


# --------------------------------------------------------------------------------- unused rooms close soon
def test_a_room_no_game_was_played_in_closes_long_before_one_that_was(db: Path) -> None:
    app = From(create_app(make_services(db), http_rate=1000, http_burst=1000, idle_close=3600,
                          unused_close=0.6, sweep_every=0.05))
    with TestClient(app) as c:
        never_joined = c.post("/api/rooms", json=BOT).json()["code"]
        joined = c.post("/api/rooms", json=BOT).json()["code"]
        join(c, joined, "Eve")  # joined, never played, no page open
        played = c.post("/api/rooms", json=BOT).json()["code"]
        token = join(c, played, "Ann")
        with c.websocket_connect(f"/ws/{played}") as ws:
            ann = Browser(ws).hello(token)
            ann.send(type="start")
            ann.vote()
            ann.vote()
            ann.phase("over")
        started = time.monotonic()
        eventually(lambda: c.get(f"/api/rooms/{never_joined}").status_code == 404)
        eventually(lambda: c.get(f"/api/rooms/{joined}").status_code == 404)
        assert time.monotonic() - started >= 0.4, "closed before its time was up"
        time.sleep(0.6)
        assert c.get(f"/api/rooms/{played}").status_code == 200, "a room with games keeps the long idle time"


def test_an_unused_room_with_a_page_open_stays(db: Path) -> None:
    # Time enough to open the page after joining on a busy machine; the page then stays open well past it.
    app = From(create_app(make_services(db), http_rate=1000, http_burst=1000, idle_close=None,
                          unused_close=1.5, sweep_every=0.05))
    with TestClient(app) as c:
        code = c.post("/api/rooms", json=BOT).json()["code"]
        token = join(c, code, "Ann")
        with c.websocket_connect(f"/ws/{code}") as ws:
            Browser(ws).hello(token)
            time.sleep(2.5)
            assert c.get(f"/api/rooms/{code}").status_code == 200
        eventually(lambda: c.get(f"/api/rooms/{code}").status_code == 404)
