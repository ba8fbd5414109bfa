"""Rooms close: when no one has had them open for the stated time, or when the operator closes them with
``lexicoord rooms close``; their games stay in the store, and the cap on rooms counts open rooms only."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from typer.testing import CliRunner

from lexicoord.cli.app import app as cli
from lexicoord.errors import LexicoordError
from lexicoord.runs.store import Store
from lexicoord.web import registry
from lexicoord.web.app import create_app
from lexicoord.web.persistence import RoomStore
from tests.web.conftest import Browser, create_room, join, make_services

IDLE = 0.6  # seconds, in these tests; the served default is an hour


def app_for(db: Path, idle: float | None = IDLE) -> TestClient:
    return TestClient(create_app(make_services(db), http_rate=1000, http_burst=1000, idle_close=idle,
                                 sweep_every=0.05))


def eventually(check: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


def status_of(db: Path, code: str) -> str:
    rooms = RoomStore(Store(str(db)))
    try:
        return {r.code: r.status for r in rooms.listing(include_closed=True)}[code]
    finally:
        rooms.close()


def rooms_cmd(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["rooms", *args, "--db", str(db)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.output


def test_an_empty_room_closes_after_the_idle_time_and_its_games_stay(db: Path) -> None:
    with app_for(db) as c:
        code = create_room(c)
        token = join(c, code, "Ann")
        with c.websocket_connect(f"/ws/{code}") as ws:
            ann = Browser(ws).hello(token)
            ann.send(type="start")
            ann.vote()
            ann.vote()
            ann.phase("over")
            time.sleep(IDLE * 2)  # a page is open: the room stays however long it lasts
            assert c.get(f"/api/rooms/{code}").status_code == 200
        started = time.monotonic()
        eventually(lambda: c.get(f"/api/rooms/{code}").status_code == 404)
        assert time.monotonic() - started >= IDLE * 0.9, "closed before the idle time was up"
        assert c.post(f"/api/rooms/{code}/join", json={"name": "Bob"}).status_code == 404
    assert status_of(db, code) == "closed"
    store = Store(str(db))
    run = store.run("room-")
    assert run.status == "closed" and len(store.episodes(run.id)) == 1, "the game played in it is kept"
    with app_for(db, idle=None) as again:  # a restart does not reopen it
        assert again.get(f"/api/rooms/{code}").status_code == 404


def test_a_room_never_opened_closes_too_and_no_idle_time_means_never(db: Path, tmp_path: Path) -> None:
    with app_for(db) as c:
        code = create_room(c)
        eventually(lambda: c.get(f"/api/rooms/{code}").status_code == 404)
    with app_for(tmp_path / "never.db", idle=None) as c:
        code = create_room(c)
        time.sleep(IDLE * 2)
        assert c.get(f"/api/rooms/{code}").status_code == 200


def test_the_cap_counts_open_rooms_only(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "MAX_ROOMS", 2)
    with app_for(db, idle=None) as c:
        first, _ = create_room(c), create_room(c)
        full = c.post("/api/rooms", json={"agents": [{"name": "bot", "model": "scripted/first"}]})
        assert full.status_code == 503 and full.json()["code"] == "server_full"
        rooms_cmd(db, "close", first)
        eventually(lambda: c.post("/api/rooms", json={"agents": [{"name": "bot", "model": "scripted/first"}]})
                   .status_code == 201)
    with app_for(db, idle=None) as again:  # after a restart the closed room still does not count
        assert again.post("/api/rooms", json={}).status_code == 503


def test_the_rooms_command_lists_and_closes_and_a_running_server_lets_the_room_go(db: Path) -> None:
    with app_for(db, idle=None) as c:
        code, empty = create_room(c), create_room(c)
        token = join(c, code, "Ann")
        listing = rooms_cmd(db, "list")
        assert code in listing and empty in listing and "Ann" in listing
        with c.websocket_connect(f"/ws/{code}") as ws:
            Browser(ws).hello(token)
            out = rooms_cmd(db, "close", code.lower().replace("-", ""))  # as typed: case and dashes do not matter
            assert "Closed 1 room" in out and status_of(db, code) == "closed"
            with pytest.raises(WebSocketDisconnect) as closed:
                while True:
                    ws.receive_text()
            assert closed.value.code == 4410 and "closed" in closed.value.reason
        assert c.get(f"/api/rooms/{code}").status_code == 404
        with c.websocket_connect(f"/ws/{code}") as ws:  # the token of a closed room is no one's
            ws.send_json({"type": "hello", "token": token})
            assert ws.receive_json()["code"] == "bad_token"
        assert code not in rooms_cmd(db, "list") and code in rooms_cmd(db, "list", "--all")
        rooms_cmd(db, "close", "--empty")  # the room no one joined
        assert status_of(db, empty) == "closed"
        eventually(lambda: c.get(f"/api/rooms/{empty}").status_code == 404)
    with pytest.raises(LexicoordError, match="No open room has the code"):
        rooms_cmd(db, "close", code)
    with pytest.raises(LexicoordError, match="Name the rooms"):
        rooms_cmd(db, "close")
    assert "No open rooms" in rooms_cmd(db, "list")


def test_closing_a_room_mid_game_stores_the_game(db: Path) -> None:
    with app_for(db, idle=None) as c:
        code = create_room(c)
        token = join(c, code, "Ann")
        with c.websocket_connect(f"/ws/{code}") as ws:
            ann = Browser(ws).hello(token)
            ann.send(type="start")
            ann.vote()
            ann.request()  # round 1 is waiting for Ann
            rooms_cmd(db, "close", code)
            with pytest.raises(WebSocketDisconnect) as closed:
                while True:
                    ws.receive_text()
            assert closed.value.code == 4410
    store = Store(str(db))
    run = store.run("room-")
    [episode] = store.episodes(run.id)
    assert episode.outcome is not None and episode.outcome["reason"] == "leader_ended"
    assert run.status == "closed", "the game stored on the way out did not reopen the run"
