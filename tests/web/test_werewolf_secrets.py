"""What a live Werewolf room must not give away: the deal (secret per game, never served before the game
ends) and the night's hidden moves (a page gets a frame only when its own projection changes).

Scripted agents play the other seats: they test the room's rules and what it sends, not a model."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.core.spec import AgentSpec
from lexicoord.models.model import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.werewolf import WerewolfGame
from lexicoord.protocols.werewolf.cli import game_items
from lexicoord.protocols.werewolf.room import WerewolfRoomSettings, room_game_item
from lexicoord.protocols.werewolf.state import deal
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items
from lexicoord.web.app import create_app
from lexicoord.web.services import Services
from tests.web.test_werewolf_room import Page

AGENTS = ["a1", "a2", "a3", "a4", "a5"]
RULES = {"wolves": 2, "seers": 1, "witches": 1, "guards": 0, "max_days": 2}
#: What the agents do with a choice: "quiet" abstains from everything, "busy" picks the first target.
MODE = {"now": "quiet"}


def agent_reply(messages: Any, config: Any) -> Any:
    if config.choices:
        busy = MODE["now"] == "busy" and not re.search(r"vote for the player to exile|how urgently", messages[-1].content)
        return {"choice": config.choices[0] if busy else "abstain"}
    return f"{current_agent.get()} speaks."


@pytest.fixture(autouse=True)
def quiet_agents() -> Iterator[None]:
    MODE["now"] = "quiet"
    yield
    MODE["now"] = "quiet"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("ww", agent_reply)), "scripted/ww")
    services = Services(store=Store(str(tmp_path / "ww.db")), models=pool, items={"coordination": {"builtin": builtin_items()[:2]}},
                        model_names=["scripted/ww"], protocols=["werewolf"])
    app = create_app(services, http_rate=1000, http_burst=1000, allowed_hosts=["testserver"], rooms_per_address=100)
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        yield c


def create(client: TestClient, agents: list[str] = AGENTS, **rules: Any) -> str:
    body = {"protocol": "werewolf", "agents": [{"name": a, "model": "scripted/ww"} for a in agents],
            **RULES, **rules}
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["code"])


def one_game(client: TestClient, code: str, *, peek: Any = None) -> dict[str, Any]:
    """Bob starts a game and ends it at his first request; ``peek(page)`` runs while it is in progress."""
    token = client.post(f"/api/rooms/{code}/join", json={"name": "Bob"}).json()["token"]
    with client.websocket_connect(f"/ws/{code}") as ws:
        bob = Page(ws, token)
        bob.send(type="start")
        bob.wait(lambda s: s["you"]["request"] is not None or s["room"]["phase"] == "over")
        if peek is not None:
            peek(bob)
        bob.send(type="end_game")
        bob.wait(lambda s: s["room"]["phase"] == "over")
    [game] = client.get(f"/api/rooms/{code}/export.json").json()["history"]
    return dict(game)


def test_rooms_without_a_seed_deal_each_game_from_a_secret_seed(client: TestClient) -> None:
    games = [one_game(client, create(client, agents=AGENTS[:3], wolves=1, witches=0)) for _ in range(20)]
    seats = ["Bob", *AGENTS[:3]]
    deals = [tuple(g["roles"][p] for p in seats) for g in games]
    assert len(set(deals)) > 1, "twenty rooms dealt alike"
    for i, seat in enumerate(seats):
        assert len({d[i] for d in deals}) > 1, f"seat {i + 1} ({seat}) has the same role in every room"
    assert len({g["seed"] for g in games}) == 20, "each game its own seed, recorded once it is over"


def test_a_game_in_progress_is_served_to_nobody_with_its_deal_or_seed(client: TestClient) -> None:
    code = create(client)
    room = client.app.state.rooms.get(code)
    seen: dict[str, str] = {}

    def peek(bob: Page) -> None:
        secret = room.current.spec.item["seed"]
        seen["seed"] = str(secret)
        seen["export"] = client.get(f"/api/rooms/{code}/export.json").text
        seen["csv"] = client.get(f"/api/rooms/{code}/export.csv").text
        run = room.run_id
        pages = [client.get(url) for url in ("/api/runs", f"/api/runs/{run}", f"/api/runs/{run}/episodes")]
        assert [p.status_code for p in pages] == [200, 200, 200], "the viewer's pages must be read, not their 404s"
        seen["viewer"] = "".join(p.text for p in pages)
        seen["frames"] = "\n".join(bob.snapshot())

    game = one_game(client, code, peek=peek)
    assert all(part for part in seen.values())
    for where in ("export", "csv", "viewer", "frames"):
        assert seen["seed"] not in seen[where], f"the game's seed is served by the {where}"
    exported = json.loads(seen["export"])
    assert exported["history"] == [] and "seed" not in exported["room"]["settings"], "no deal, no seed"
    assert '"roles"' not in seen["viewer"] and "werewolf" not in seen["csv"]
    roles = [r for r in re.findall(r'"role": ?"(\w+)"', seen["frames"])]
    assert set(roles) <= {"villager", game["roles"]["Bob"]}, "Bob's frames hold his own role only"
    assert str(game["seed"]) == seen["seed"], "recorded for a replay once the game is over"


async def test_the_same_seed_deals_the_same_game_in_a_room_and_in_a_campaign(client: TestClient, tmp_path) -> None:
    rooms = [one_game(client, create(client, seed=seed)) for seed in (7, 8)]
    seats = ["Bob", *AGENTS]
    for seed, room_game in zip((7, 8), rooms):
        assert room_game_item(seed, 1) == game_items(1, seed)[0], "one rule for a room's game 1 and a campaign's"
        pool = ModelPool(cache=False)
        pool.add(Model(ScriptedProvider("ww", agent_reply)), "scripted/ww")
        runner = Runner(Store(str(tmp_path / f"c{seed}.db")), WerewolfGame(), models=pool, seed=seed)
        settings = WerewolfRoomSettings(**RULES).game_settings() | {"max_days": 1}
        lineup = [AgentSpec(name=n, model="scripted/ww") for n in seats]
        await runner.run("c", grid(game_items(1, seed), [lineup], settings=[settings]))
        [(episode, _)] = list(runner.store.iter_run_events("c"))
        assert episode.outcome["roles"] == room_game["roles"], f"seed {seed}: the campaign dealt otherwise"
    assert rooms[0]["roles"] != rooms[1]["roles"] or rooms[0]["seed"] != rooms[1]["seed"]


def night_frames(frames: list[str], code: str, day: int = 1) -> list[str]:
    """The frames a page received while the night of ``day`` was under way (the room's code masked)."""
    out = []
    for text in (f.replace(code, "CODE") for f in frames):
        msg = json.loads(text)
        game = msg.get("room", {}).get("game") if msg["type"] == "state" else None
        if game and game["day"] == day and game["stage"] == "night":
            out.append(text)
    return out


def seed_with_bob_a_villager() -> int:
    counts = {"werewolf": 2, "seer": 1, "witch": 1, "guard": 0}
    return next(s for s in range(500)
                if deal(["Bob", *AGENTS], counts, random.Random(room_game_item(s, 1)["seed"]))["Bob"] == "villager")


@pytest.mark.parametrize("order", [("quiet", "busy"), ("busy", "quiet")])
def test_a_villagers_night_frames_are_the_same_whatever_the_hidden_roles_do(client: TestClient, order) -> None:
    """The seer checks or not, the witch saves and poisons or not, the wolves kill or not: the villager's page
    gets the same frames through the night, and never the same frame twice in a row."""
    seed = seed_with_bob_a_villager()
    nights = {}
    for mode in order:
        MODE["now"] = mode
        code = create(client, seed=seed)
        frames: list[str] = []
        one_game(client, code, peek=lambda bob, frames=frames: frames.extend(bob.snapshot()))
        nights[mode] = night_frames(frames, code)
        assert all(a != b for a, b in zip(frames, frames[1:])), f"{mode}: a frame repeated the one before"
    assert nights["quiet"] and nights["quiet"] == nights["busy"]


def test_a_finished_games_seed_does_not_tell_the_next_games_deal() -> None:
    """A room's game seeds come from the room's seed by a one-way function: seeing game 1's (it is shown once the
    game is over) gives neither the room's seed by a division nor game 2's seed by a step. The same room seed
    still gives the same games, in a room and in a campaign."""
    from lexicoord.protocols.werewolf.state import game_item

    for room_seed in (0, 7, 123456789):
        seeds = [room_game_item(room_seed, n)["seed"] for n in range(1, 6)]
        steps = {b - a for a, b in zip(seeds, seeds[1:])}
        assert len(steps) == len(seeds) - 1, "no constant step from one game's seed to the next"
        assert all(s // 100_003 != room_seed for s in seeds), "the old affine rule is gone"
        assert all(0 <= s < 2**62 for s in seeds)
        assert seeds == [game_item(room_seed, n - 1)["seed"] for n in range(1, 6)] == \
            [g["seed"] for g in game_items(5, room_seed)], "an explicit seed still replays, rooms and campaigns alike"
    assert room_game_item(7, 1)["seed"] != room_game_item(8, 1)["seed"]
