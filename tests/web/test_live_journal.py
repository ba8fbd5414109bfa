"""A live room's game reaches the store as it is played: the run viewer shows it in progress, as a spectator
sees it (never a role, a deal, a seed or a seat's prompt), its moves are in the store's one journal under the
episode the game is stored as, and once it ends the stored record is the game as played, whole, in the
same episode.

Rooms are driven over their WebSocket on the app as served (Starlette's TestClient), with scripted agents;
the viewer is read at its JSON endpoints, from this machine."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fastapi.testclient import TestClient

from lexicoord.core.events import Event
from lexicoord.models.model import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items
from lexicoord.web.app import create_app
from lexicoord.web.persistence import RoomStore
from lexicoord.web.services import Services
from tests.web.conftest import Browser, create_room, join, make_services
from tests.web.test_werewolf_room import Page, play_out

T = TypeVar("T")


def serve(services: Services) -> TestClient:
    """The app as ``lexicoord serve`` builds it, asked from this machine (the viewer answers only loopback)."""
    return TestClient(create_app(services, http_rate=1000, http_burst=1000, allowed_hosts=["testserver"]),
                      client=("127.0.0.1", 50000))


def ok(client: TestClient, path: str, **params: Any) -> Any:
    r = client.get(path, params=params)
    assert r.status_code == 200, (path, r.status_code, r.text)
    return r.json()


def until(read: Callable[[], T], pred: Callable[[T], bool], what: str, limit: float = 20) -> T:
    """``read()`` again until ``pred`` holds of it (the store's writer runs beside the game)."""
    deadline = time.monotonic() + limit
    while True:
        value = read()
        if pred(value):
            return value
        assert time.monotonic() < deadline, f"{what}; last read: {str(value)[:1500]}"
        time.sleep(0.05)


def viewed(client: TestClient, run: str) -> dict[str, Any]:
    """What the viewer serves of a run's only episode: the list, the head and every event (as text too)."""
    listing = ok(client, f"/api/runs/{run}/episodes")
    if len(listing["episodes"]) != 1:
        return {"episodes": listing["episodes"], "events": [], "text": ""}
    [row] = listing["episodes"]
    base = f"/api/runs/{run}/episodes/{row['id']}"
    head, events = ok(client, base), ok(client, f"{base}/events", limit=500)["events"]
    texts = [json.dumps(x) for x in (ok(client, "/api/runs"), ok(client, f"/api/runs/{run}"), listing, head, events)]
    return {"episodes": listing["episodes"], "row": row, "head": head, "events": events, "text": "".join(texts)}


def public(events: list[Event]) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in events if e.audience.public]


def dumps(events: list[Event]) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json") for e in events]


@pytest.fixture
def viewer(store_url: str) -> Iterator[TestClient]:
    with serve(make_services(store_url)) as c:
        yield c


def test_a_room_game_is_in_the_viewer_while_played_and_stored_whole_when_it_ends(store_url: str,
                                                                                   viewer: TestClient) -> None:
    """On a SQLite file and on a real PostgreSQL server."""
    code = create_room(viewer)
    room = viewer.app.state.rooms.get(code)
    run, store = room.run_id, Store(store_url)
    ann_token, bob_token = join(viewer, code, "Ann"), join(viewer, code, "Bob")
    with viewer.websocket_connect(f"/ws/{code}") as wa, viewer.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
        bob.until(lambda s: len(s["room"]["people"]) == 2)
        ann.send(type="start")
        ann.vote(why="announced in the open")
        ann.vote(0, why="Ann's first round")
        # Bob has not moved: the game is under way, and the viewer shows it so far.
        live = until(lambda: viewed(viewer, run),
                     lambda v: any(e["type"] == "choice" for e in v["events"]), "the announcement never showed")
        recorder = room.game.ctx.recorder
        assert live["row"]["status"] == "playing" and live["head"]["status"] == "playing"
        assert ok(viewer, f"/api/runs/{run}/episodes", status="playing")["count"] == 1
        assert ok(viewer, f"/api/runs/{run}/episodes", status="done")["count"] == 0
        assert [(e["seq"], e["type"]) for e in live["events"]] == public(recorder.events)
        assert any(e["line"] and "announced in the open" in e["line"] for e in live["events"])
        assert {e["audience"]["kind"] for e in live["events"]} == {"everyone"}, "a seat's model calls are its own"
        assert any(not e.audience.public for e in recorder.events), "the game had private events to leave out"
        current = room.current
        assert live["head"]["item"] == {} and live["head"]["seed"] is None and live["head"]["key"] is None
        assert str(current.seed) not in live["text"]
        # The journal: the moves so far, under the run and the key the game will be stored under.
        moves = store.episode_moves(run, current.spec.key)
        assert [m["kind"] for m in moves["Ann"]] == ["announce", "choose"] and "Bob" not in moves
        bob.vote(0, why="Bob's first round")
        over = ann.phase("over")
    assert over["room"]["game"]["outcome"]["converged"]
    done = until(lambda: viewed(viewer, run), lambda v: v["episodes"] and v["episodes"][0]["status"] == "done",
                 "the game's end was not stored")
    assert done["row"]["id"] == live["row"]["id"], "the game in progress became the stored episode"
    [(record, events)] = list(store.iter_run_events(run))
    assert dumps(events) == dumps(room.game.ctx.recorder.events), "every event of the game, once, as it was played"
    assert (record.status, record.attempt, record.key, record.seed) == ("done", 1, current.spec.key, current.seed)
    assert record.spec == current.spec.model_dump(mode="json") and record.position == current.number
    assert record.model_calls == sum(1 for e in events if e.type == "model_call") > 0
    assert done["head"]["events"]["count"] == len(events) and done["head"]["seed"] == current.seed
    assert store.episode_moves(run, current.spec.key) == {}, "a stored game's journal is cleared"


def test_a_restarted_game_is_shown_again_from_its_start_without_repeats(tmp_path: Path) -> None:
    db = tmp_path / "rooms.db"
    with serve(make_services(db)) as first:
        code = create_room(first)
        room = first.app.state.rooms.get(code)
        ann_token, bob_token = join(first, code, "Ann"), join(first, code, "Bob")
        with first.websocket_connect(f"/ws/{code}") as wa:
            ann = Browser(wa).hello(ann_token)
            ann.send(type="start")
            ann.vote(why="before the restart")
            before = until(lambda: viewed(first, room.run_id), lambda v: any(e["type"] == "choice" for e in v["events"]),
                           "the announcement never showed")
    with serve(make_services(db)) as second:
        room = second.app.state.rooms.get(code)
        with second.websocket_connect(f"/ws/{code}") as wb:
            bob = Browser(wb).hello(bob_token)
            assert bob.request() == {"kind": "choose", "round": 1}
            again = until(lambda: viewed(second, room.run_id),
                          lambda v: [(e["seq"], e["type"]) for e in v["events"]] == public(room.game.ctx.recorder.events),
                          "the replayed game was not shown as played")
            assert again["row"]["id"] == before["row"]["id"] and again["row"]["status"] == "playing"
            assert [e["seq"] for e in again["events"]] == [e["seq"] for e in before["events"]], "each event once"
            assert "before the restart" in json.dumps(again["events"])


def test_a_room_closed_from_the_command_line_mid_game_stops_showing_the_game(tmp_path: Path) -> None:
    """The operator's ``rooms close`` (another process's :class:`RoomStore` on the same store) while a game is
    under way: the game is cut short, never played again, so the viewer no longer shows it as under way."""
    db = tmp_path / "rooms.db"
    with serve(make_services(db)) as client:
        code = create_room(client)
        room = client.app.state.rooms.get(code)
        with client.websocket_connect(f"/ws/{code}") as wa:
            ann = Browser(wa).hello(join(client, code, "Ann"))
            ann.send(type="start")
            ann.vote(why="before the close")
            until(lambda: viewed(client, room.run_id), lambda v: any(e["type"] == "choice" for e in v["events"]),
                  "the announcement never showed")
            closed = RoomStore(Store(str(db))).close_codes([code])
            assert [r.code for r in closed] == [code]
            assert ok(client, f"/api/runs/{room.run_id}/episodes")["episodes"] == []


WEREWOLF_AGENTS = ["a1", "a2", "a3", "a4", "a5"]


def abstain(messages: Any, config: Any) -> Any:
    return {"choice": "abstain"} if config.choices else "I have nothing to hide."


def along(name: str, req: dict[str, Any]) -> dict[str, Any]:
    """A person who says little and abstains where they can."""
    if req["kind"] == "speak":
        return {"type": "speak", "round": req["round"], "text": f"{name} listens."}
    target = "abstain" if "abstain" in req["choices"] else req["choices"][0]
    return {"type": "act", "round": req["round"], "action": req["kind"], "target": target}


def test_a_werewolf_game_in_progress_shows_no_role_deal_or_seed(tmp_path: Path) -> None:
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("ww", abstain)), "scripted/ww")
    services = Services(store=Store(str(tmp_path / "ww.db")), models=pool, items={"coordination": {"builtin": builtin_items()[:2]}},
                        model_names=["scripted/ww"], protocols=["werewolf"])
    with serve(services) as client:
        body = {"protocol": "werewolf", "agents": [{"name": a, "model": "scripted/ww"} for a in WEREWOLF_AGENTS],
                "wolves": 2, "seers": 1, "witches": 1, "guards": 0, "max_days": 2}
        r = client.post("/api/rooms", json=body)
        assert r.status_code == 201, r.text
        code = r.json()["code"]
        room = client.app.state.rooms.get(code)
        token = join(client, code, "Bob")
        with client.websocket_connect(f"/ws/{code}") as ws:
            bob = Page(ws, token)
            bob.send(type="start")
            bob.wait(lambda s: s["you"]["request"] is not None)
            recorder = room.game.ctx.recorder
            # Bob plays along until the table has heard something and the game waits on him again.
            play_out({"Bob": bob}, along, lambda: bool(public(recorder.events)) and bob.state is not None
                     and bob.state["you"]["request"] is not None)
            live = until(lambda: viewed(client, room.run_id),
                         lambda v: [(e["seq"], e["type"]) for e in v["events"]] == public(recorder.events),
                         "the game so far was not shown")
            secret = str(room.current.spec.item["seed"])
            assert live["row"]["status"] == "playing" and live["events"], "the game so far is there"
            assert any(e.type == "ww_role" for e in recorder.events), "roles were dealt"
            assert not any(e["type"] == "ww_role" for e in live["events"]) and '"roles"' not in live["text"]
            assert secret not in live["text"] and live["head"]["item"] == {} and live["head"]["seed"] is None
            bob.send(type="end_game")
            bob.wait(lambda s: s["room"]["phase"] == "over")
        done = until(lambda: viewed(client, room.run_id), lambda v: v["episodes"][0]["status"] != "playing",
                     "the game's end was not stored")
        assert done["row"]["id"] == live["row"]["id"]
        assert sum(1 for e in done["events"] if e["type"] == "ww_role") == 1 + len(WEREWOLF_AGENTS), "all, once over"
        assert secret in done["text"], "the deal's seed is in the record once the game is over"
