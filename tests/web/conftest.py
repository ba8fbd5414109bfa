"""Rooms served in-process (Starlette's TestClient) on a real SQLite file, with scripted agents.

Scripted agents test the room's rules and protocol; claims about models are
made only by the browser test, which seats the embedded model.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from lexicoord.cli.app import app as cli
from lexicoord.models.model import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items
from lexicoord.web.app import create_app
from lexicoord.web.services import Services


def first_option(messages: Any, config: Any) -> Any:
    """Always the first option, with a reason: a predictable agent."""
    options = config.json_schema["properties"]["choice"]["enum"] if config.json_schema and "choice" in config.json_schema.get("properties", {}) else None
    if options:
        return {"choice": options[0], "justification": "the first meaning"}
    if config.json_schema and "meaning" in config.json_schema.get("properties", {}):
        return {"meaning": "a place to keep money", "justification": "the usual sense"}
    return {"statement": "I mean the first one"}


def make_services(db: Path | str, *, slow: float = 5.0) -> Services:
    """``db``: a SQLite file or any store URL."""
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("first", first_option)), "scripted/first")
    pool.add(Model(ScriptedProvider("slow", first_option, latency=slow)), "scripted/slow")
    return Services(store=Store(str(db)), models=pool, items={"coordination": {"builtin": builtin_items()[:6]}},
                    model_names=["scripted/first", "scripted/slow"])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "rooms.db"


@pytest.fixture
def client(db: Path) -> Iterator[TestClient]:
    """The app as served, its host check on: the test client's requests name the host ``testserver``."""
    with TestClient(create_app(make_services(db), http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])) as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(db: Path, *args: str) -> Iterator[int]:
    """``lexicoord serve ARGS`` exactly as the command sets it up (its app and its uvicorn settings), run on a
    free loopback port in a thread; yields the port."""
    captured: list[uvicorn.Config] = []
    port = free_port()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(uvicorn.Server, "run", lambda self, sockets=None: captured.append(self.config))
        mp.setattr("lexicoord.collector.tune_for_long_runs", lambda: None)  # keeps the test process's gc as it is
        result = CliRunner().invoke(cli, ["serve", "--port", str(port), "--db", str(db), *args])
    assert result.exit_code == 0 and captured, result.output
    server = uvicorn.Server(captured[0])
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(15)


def create_room(client: TestClient, **settings: Any) -> str:
    body = {"agents": [{"name": "bot", "model": "scripted/first"}], **settings}
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 201, r.text
    return r.json()["code"]


def join(client: TestClient, code: str, name: str) -> str:
    r = client.post(f"/api/rooms/{code}/join", json={"name": name})
    assert r.status_code == 200, r.text
    return r.json()["token"]


class Browser:
    """One WebSocket as a page would use it: remembers the latest state, waits for conditions."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.state: dict[str, Any] | None = None
        self.errors: list[dict[str, Any]] = []
        self.stats: dict[str, Any] | None = None
        self.answered: set[tuple[int, str, int]] = set()

    def hello(self, token: str) -> Browser:
        self.ws.send_json({"type": "hello", "token": token})
        self.until(lambda s: True)
        return self

    def receive(self) -> dict[str, Any]:
        msg = json.loads(self.ws.receive_text())
        if msg["type"] == "state":
            self.state = msg
        elif msg["type"] == "error":
            self.errors.append(msg)
        elif msg["type"] == "stats":
            self.stats = msg
        return msg

    def until(self, pred: Callable[[dict[str, Any]], bool], limit: int = 500) -> dict[str, Any]:
        if self.state is not None and pred(self.state):
            return self.state
        for _ in range(limit):
            if self.receive()["type"] == "state" and pred(self.state):  # type: ignore[arg-type]
                return self.state  # type: ignore[return-value]
        raise AssertionError(f"condition not reached; last state: {str(self.state)[:800]}")

    def error(self) -> dict[str, Any]:
        while True:
            msg = self.receive()
            if msg["type"] == "error":
                return msg

    def send(self, **msg: Any) -> None:
        self.ws.send_json(msg)

    def _key(self, s: dict[str, Any]) -> tuple[int, str, int]:
        req = s["you"]["request"]
        return (s["room"]["game"]["number"], req["kind"], req["round"])

    def request(self, kind: str | None = None) -> dict[str, Any]:
        """Wait until this person is asked for something new (of ``kind``) and return the request."""
        s = self.until(lambda s: s["you"]["request"] is not None and self._key(s) not in self.answered
                       and (kind is None or s["you"]["request"]["kind"] == kind))
        self.answered.add(self._key(s))
        return s["you"]["request"]

    def options(self) -> list[str]:
        assert self.state is not None
        return self.state["room"]["game"]["item"]["options"]

    def vote(self, choice: str | int = 0, why: str = "because") -> int:
        """Answer the next request: an option by index or by text."""
        req = self.request()
        assert req["kind"] in ("choose", "announce")
        text = self.options()[choice] if isinstance(choice, int) else choice
        self.send(type="choose", round=req["round"], choice=text, justification=why)
        return req["round"]

    def clarify(self, statement: str = "") -> int:
        req = self.request("clarify")
        self.send(type="clarify", round=req["round"], statement=statement)
        return req["round"]

    def phase(self, phase: str) -> dict[str, Any]:
        return self.until(lambda s: s["room"]["phase"] == phase)


def game_of(s: dict[str, Any]) -> dict[str, Any]:
    """The state's game, or an empty one before the first game starts."""
    return s["room"]["game"] or {"status": {}, "round": -1, "rounds": [], "number": 0, "outcome": None}
