"""Werewolf in a live room, checked on the WebSocket frames each browser receives (not on a page).

Three people sit among scripted agents: Ann is a wolf (with an agent wolf), Bob a villager, Cid the seer;
Dan joins once the game is under way, to watch. Every frame each of them receives is kept, and the secrets
are looked for in the raw text: the wolves' channel, the seer's results, the night's moves in progress.
Scripted agents make the game's course known in advance (they abstain from every choice); they test the
room's rules and visibility, never a model's behaviour.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.models.model import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.werewolf.room import WerewolfRoomSettings, room_game_item
from lexicoord.protocols.werewolf.state import deal
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items
from lexicoord.web.app import create_app
from lexicoord.web.services import Services

AGENTS = ["a1", "a2", "a3"]
PEOPLE = ["Ann", "Bob", "Cid"]
RULES = {"wolves": 2, "seers": 1, "witches": 0, "guards": 0, "max_days": 2, "wolf_turns": 1,
         "discussion_rounds": 1, "last_words": "exiled"}
WANT = {"Ann": "werewolf", "Bob": "villager", "Cid": "seer"}


def agent_reply(messages: Any, config: Any) -> Any:
    """Agents abstain from every choice; in the wolves' channel they say a marker naming the night."""
    if config.choices:
        return {"choice": "abstain"}
    night = re.search(r"Night (\d+): talk with the other wolves", messages[-1].content)
    agent = current_agent.get() or "?"
    return f"WOLFCHAN-{agent}-N{night.group(1)}" if night else f"{agent} speaks to everyone."


def make_services(db: Path) -> Services:
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("ww", agent_reply)), "scripted/ww")
    return Services(store=Store(str(db)), models=pool, items={"coordination": {"builtin": builtin_items()[:2]}},
                    model_names=["scripted/ww"], protocols=["coordination", "werewolf"])


def seed_dealing(want: dict[str, str], rules: dict[str, Any] = RULES, people: list[str] = PEOPLE,
                 agents: list[str] = AGENTS) -> tuple[int, dict[str, str]]:
    """A room seed whose first game deals ``want`` (the line-up: people in joining order, then agents)."""
    counts = WerewolfRoomSettings(**rules).game_settings()
    counts = {"werewolf": counts["wolves"], "seer": counts["seers"], "witch": counts["witches"],
              "guard": counts["guards"]}
    for seed in range(2000):
        roles = deal([*people, *agents], counts, random.Random(room_game_item(seed, 1)["seed"]))
        if all(roles[p] == r for p, r in want.items()):
            return seed, roles
    raise AssertionError("no seed deals these roles")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(make_services(tmp_path / "ww.db"), http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])
    with TestClient(app) as c:
        yield c


def create(client: TestClient, seed: int, **rules: Any) -> str:
    body = {"protocol": "werewolf", "agents": [{"name": a, "model": "scripted/ww"} for a in AGENTS],
            "seed": seed, **RULES, **rules}
    r = client.post("/api/rooms", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["code"])


def join(client: TestClient, code: str, name: str) -> str:
    r = client.post(f"/api/rooms/{code}/join", json={"name": name})
    assert r.status_code == 200, r.text
    return str(r.json()["token"])


class Page:
    """One browser's WebSocket: every frame it receives, as text, read on its own thread so the game can go
    on while the test looks at another page."""

    def __init__(self, ws: Any, token: str) -> None:
        self.ws = ws
        self.frames: list[str] = []
        self.state: dict[str, Any] | None = None
        self.errors: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        ws.send_json({"type": "hello", "token": token})
        self.wait(lambda s: True)

    def _read(self) -> None:
        while True:
            try:
                text = self.ws.receive_text()
            except Exception:  # noqa: BLE001 - the page was closed
                return
            msg = json.loads(text)
            with self.cond:
                self.frames.append(text)
                if msg["type"] == "state":
                    self.state = msg
                elif msg["type"] == "error":
                    self.errors.append(msg)
                self.cond.notify_all()

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 30) -> dict[str, Any]:
        with self.cond:
            if not self.cond.wait_for(lambda: self.state is not None and pred(self.state), timeout):
                raise AssertionError(f"condition not reached; last state: {str(self.state)[:1500]}")
            assert self.state is not None
            return self.state

    def send(self, **msg: Any) -> None:
        self.ws.send_json(msg)

    def refused(self, **msg: Any) -> str:
        """Send ``msg`` and return the code of the error it gets back."""
        with self.cond:
            seen = len(self.errors)
        self.send(**msg)
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.errors) > seen, 10), f"no error for {msg}"
            return str(self.errors[seen]["code"])

    def snapshot(self) -> list[str]:
        with self.cond:
            return list(self.frames)


def request_key(s: dict[str, Any]) -> tuple[Any, ...] | None:
    """A request, told apart from the person's next one of the same kind: the game is sequential, so the
    person's log cannot grow while their request waits."""
    req = s["you"]["request"]
    if req is None:
        return None
    return (s["room"]["game"]["number"], req["kind"], req["round"], req["channel"], len(s["you"]["game"]["log"]))


Policy = Callable[[str, dict[str, Any]], dict[str, Any]]


def play_out(pages: dict[str, Page], policy: Policy, until: Callable[[], bool], timeout: float = 60) -> None:
    """Answer every request any page is given, by ``policy(name, request)``, until ``until()``."""
    answered: set[tuple[Any, ...]] = set()
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, {n: str(p.state)[:600] for n, p in pages.items()}
        for name, page in pages.items():
            with page.cond:
                s = page.state
            key = request_key(s) if s is not None else None
            if key is not None and (name, *key) not in answered:
                answered.add((name, *key))
                page.send(**policy(name, s["you"]["request"]))  # type: ignore[index]
        time.sleep(0.005)


def policy(name: str, req: dict[str, Any]) -> dict[str, Any]:
    """Ann (a wolf) marks her channel talk and picks Bob; Cid checks Ann, then votes her out; else abstain."""
    day, kind = req["round"], req["kind"]
    if kind == "speak":
        text = "WOLFMARK-ANN <b>secret</b>" if req["channel"] == "wolves" else f"{name} speaks on day {day}."
        return {"type": "speak", "round": day, "text": text}
    target = "abstain"
    if name == "Ann" and kind == "kill_vote":
        target = "Bob"
    elif name == "Cid" and kind == "check":
        target = "Ann" if day == 1 else next(c for c in req["choices"] if c != "abstain")
    elif name == "Cid" and kind == "vote" and day == 1:
        target = "Ann"
    assert target in req["choices"], (name, req)
    return {"type": "act", "round": day, "action": kind, "target": target}


def parsed(frames: list[str]) -> list[dict[str, Any]]:
    return [json.loads(f) for f in frames]


def split_at_reveal(frames: list[str]) -> tuple[list[str], list[str]]:
    """The frames before the game's end was announced, and from then on."""
    for i, f in enumerate(frames):
        msg = json.loads(f)
        if msg["type"] == "state" and msg["room"]["revealed"]:
            return frames[:i], frames[i:]
    return frames, []


def test_each_browser_receives_only_what_its_seat_may_see(client: TestClient) -> None:
    seed, roles = seed_dealing(WANT)
    [agent_wolf] = [a for a in AGENTS if roles[a] == "werewolf"]
    code = create(client, seed)
    tokens = {p: join(client, code, p) for p in PEOPLE}
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb, \
            client.websocket_connect(f"/ws/{code}") as wc:
        pages = {"Ann": Page(wa, tokens["Ann"]), "Bob": Page(wb, tokens["Bob"]), "Cid": Page(wc, tokens["Cid"])}
        pages["Ann"].send(type="start")
        pages["Ann"].wait(lambda s: s["you"]["request"] is not None)
        dan_token = join(client, code, "Dan")  # joins once the game is under way: a spectator
        with client.websocket_connect(f"/ws/{code}") as wd:
            dan = Page(wd, dan_token)
            play_out(pages, policy, lambda: all(p.state is not None and p.state["room"]["phase"] == "over"
                                                for p in [*pages.values(), dan]))
            frames = {**{n: p.snapshot() for n, p in pages.items()}, "Dan": dan.snapshot()}

    before = {n: split_at_reveal(f)[0] for n, f in frames.items()}
    after = {n: split_at_reveal(f)[1] for n, f in frames.items()}
    text = {n: "\n".join(f) for n, f in before.items()}
    final = parsed(after["Bob"])[-1]
    assert final["room"]["game"]["winner"] == "draw" and set(final["room"]["game"]["dead"]) == {"Bob", "Ann"}

    # The wolves' channel: Ann's own marker and the agent wolf's first night reach her frames only.
    assert "WOLFMARK-ANN" in text["Ann"] and f"WOLFCHAN-{agent_wolf}-N1" in text["Ann"]
    for other in ("Bob", "Cid", "Dan"):
        assert "WOLFMARK-ANN" not in text[other] and "WOLFCHAN-" not in text[other], f"leak to {other}"
    # Ann died (exiled on day 1): a spectator from then on, she hears no more of the wolves' channel.
    dead_from = next(i for i, f in enumerate(parsed(before["Ann"]))
                     if f["type"] == "state" and f["room"]["game"] and "Ann" in f["room"]["game"]["dead"])
    assert any("Cid speaks on day 2" in f for f in before["Ann"][dead_from:]), "she still sees public talk"
    assert f"WOLFCHAN-{agent_wolf}-N2" not in text["Ann"]
    assert not any('"t": "role"' in f for f in before["Ann"][dead_from:]), "public events only, her own role too"
    # The seer's results: Cid's only.
    checks = [e for f in parsed(before["Cid"]) if f["type"] == "state" and f["you"]["game"]
              for e in f["you"]["game"]["log"] if e["t"] == "check"]
    assert {(e["target"], e["wolf"]) for e in checks} >= {("Ann", True)} and {e["when"] for e in checks} == \
        {"Night 1", "Night 2"}
    for other in ("Ann", "Bob", "Dan"):
        assert '"t": "check"' not in text[other], other
        assert '"kind": "check"' not in text[other], f"{other} saw the seer moving"
    # Every log entry and move in progress in every frame before the end is one the receiver may see.
    for name, fs in before.items():
        for f in parsed(fs):
            if f["type"] != "state" or not f["you"]["game"]:
                continue
            me, game = f["you"], f["you"]["game"]
            dead = name in f["room"]["game"]["dead"]
            wolf = roles.get(name) == "werewolf" and not dead
            allowed = {"everyone"} | ({name} if me["seated"] else set()) | ({"the wolves"} if wolf else set())
            assert game["viewer"] == ("seat" if me["seated"] else "spectator"), (name, game["viewer"])
            assert me["seated"] == (name in PEOPLE and not dead), name
            assert {e["to"] for e in game["log"]} <= allowed, (name, {e["to"] for e in game["log"]})
            night = f["room"]["game"]["stage"] == "night"
            for m in game["moving"]:
                assert m["who"] == name or (not night and m["kind"] in ("speak", "vote")) or (
                    wolf and night and m["kind"] in ("speak", "kill_vote")), (name, m)
    # A spectator sees public events: the deaths and the day's talk.
    assert "Cid speaks on day 1" in text["Dan"] and '"t": "death"' in text["Dan"]
    # Once the game is over, everyone sees everything: each secret above, and the moderator's record.
    for name in ("Ann", "Bob", "Cid", "Dan"):
        last = after[name][-1]
        for secret in ("WOLFMARK-ANN", f"WOLFCHAN-{agent_wolf}-N2", '"t": "check"', '"t": "night"', '"to": "moderator"'):
            assert secret in last, (name, secret)
        assert json.loads(last)["you"]["game"]["viewer"] == "everyone"
    # The page's text is the server's data as sent; nothing is turned into markup on the way.
    assert "WOLFMARK-ANN <b>secret</b>" in after["Bob"][-1]


def test_the_check_above_fails_when_the_projection_sends_everything(client: TestClient,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The leak check is not vacuous: a projection that gives every page the whole record is caught."""
    from lexicoord.protocols.werewolf.room_view import EVERYTHING
    from lexicoord.web.room import Room

    monkeypatch.setattr("lexicoord.protocols.werewolf.room.SPECTATOR", EVERYTHING)
    monkeypatch.setattr(Room, "events_for", lambda self, viewer: list(self.game.ctx.recorder.events))
    with pytest.raises(AssertionError, match="leak to Bob"):
        test_each_browser_receives_only_what_its_seat_may_see(client)


def test_moves_out_of_turn_or_off_the_menu_are_refused_with_a_code(client: TestClient) -> None:
    seed, _ = seed_dealing(WANT)
    code = create(client, seed)
    tokens = {p: join(client, code, p) for p in PEOPLE}
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb, \
            client.websocket_connect(f"/ws/{code}") as wc:
        ann, bob, cid = Page(wa, tokens["Ann"]), Page(wb, tokens["Bob"]), Page(wc, tokens["Cid"])
        assert bob.refused(type="start") == "not_leader"
        assert ann.refused(type="act", round=1, action="vote", target="Bob") == "not_your_turn"  # the lobby
        assert ann.refused(type="choose", round=1, choice="x") == "bad_message"  # another protocol's move
        ann.send(type="start")
        assert ann.refused(type="start") == "wrong_phase"
        s = ann.wait(lambda s: s["you"]["request"] is not None)
        assert s["you"]["request"]["kind"] == "speak" and s["you"]["request"]["channel"] == "wolves"
        assert bob.refused(type="speak", round=1, text="I am a wolf too") == "not_your_turn"  # Ann's turn
        assert bob.refused(type="act", round=1, action="kill_vote", target="Cid") == "not_your_turn"
        assert ann.refused(type="act", round=1, action="kill_vote", target="Bob") == "wrong_move"
        assert ann.refused(type="speak", round=2, text="tomorrow") == "round_closed"
        assert ann.refused(type="speak", round=1, text="x" * 601) == "bad_message"
        ann.send(type="speak", round=1, text="let us pick Bob")
        s = ann.wait(lambda s: s["you"]["request"] is not None and s["you"]["request"]["kind"] == "kill_vote")
        assert "Ann" not in s["you"]["request"]["choices"]  # a wolf is no prey
        assert ann.refused(type="act", round=1, action="kill_vote", target="Ann") == "not_an_option"
        assert ann.refused(type="act", round=1, action="kill_vote", target="<script>x</script>") == "not_an_option"
        assert ann.refused(type="act", round=1, action="check", target="Bob") == "wrong_move"
        assert ann.refused(type="speak", round=1, text="more talk") == "wrong_move"
        ann.send(type="act", round=1, action="kill_vote", target="Bob")
        cid.wait(lambda s: s["you"]["request"] is not None and s["you"]["request"]["kind"] == "check")
        assert cid.refused(type="act", round=1, action="check", target="Cid") == "not_an_option"  # not herself
        cid.send(type="act", round=1, action="check", target="abstain")
        s = bob.wait(lambda s: "Bob" in s["room"]["game"]["dead"])
        assert s["you"]["seated"] is False and s["you"]["game"]["viewer"] == "spectator"
        assert bob.refused(type="act", round=1, action="vote", target="Ann") == "not_your_turn"  # the dead
        assert bob.refused(type="end_game") == "not_leader"
        ann.send(type="end_game")
        ann.wait(lambda s: s["room"]["phase"] == "over", timeout=30)
        assert ann.refused(type="end_game") == "wrong_phase"


def test_a_reconnecting_page_gets_its_seat_and_its_secrets_back(client: TestClient) -> None:
    seed, _ = seed_dealing(WANT)
    code = create(client, seed)
    tokens = {p: join(client, code, p) for p in PEOPLE}
    with client.websocket_connect(f"/ws/{code}") as wb:
        bob = Page(wb, tokens["Bob"])
        with client.websocket_connect(f"/ws/{code}") as wa:
            ann = Page(wa, tokens["Ann"])
            ann.send(type="start")
            first = ann.wait(lambda s: s["you"]["request"] is not None)
        # Ann's page closed mid-request; the others see her disconnected, and her move waits.
        bob.wait(lambda s: not next(p for p in s["room"]["people"] if p["name"] == "Ann")["connected"])
        with client.websocket_connect(f"/ws/{code}") as wa2:
            ann = Page(wa2, tokens["Ann"])
            again = ann.wait(lambda s: s["you"]["request"] is not None)
            assert again["you"]["name"] == "Ann" and again["you"]["seated"]
            assert again["you"]["request"] == first["you"]["request"]
            assert again["you"]["game"]["log"] == first["you"]["game"]["log"]
            [role] = [e for e in again["you"]["game"]["log"] if e["t"] == "role"]
            assert role["who"] == "Ann" and role["role"] == "werewolf"
            ann.send(type="speak", round=1, text="back again WOLFMARK-BACK")
            ann.wait(lambda s: any("WOLFMARK-BACK" in e.get("text", "") for e in s["you"]["game"]["log"]))
        assert "WOLFMARK-BACK" not in "\n".join(bob.snapshot())


def test_the_start_page_offers_werewolf_with_its_rules_and_only_the_operators_models(client: TestClient) -> None:
    offer = client.get("/api/offer").json()
    [ww] = [p for p in offer["protocols"] if p["name"] == "werewolf"]
    fields = {f["name"]: f for f in ww["fields"]}
    assert fields["condition"]["choices"] == ["origin", "cogent"] and fields["max_days"]["max"] == 10
    assert offer["models"] == ["scripted/ww"]
    bad = client.post("/api/rooms", json={"protocol": "werewolf", "agents": [{"name": "x", "model": "openai/gpt-4o"}]})
    assert bad.status_code == 400 and "not offered" in bad.json()["message"]
    bad = client.post("/api/rooms", json={"protocol": "werewolf", "max_days": 99})
    assert bad.status_code == 422 and "max_days" in bad.json()["message"]
    assert client.get("/adapters/werewolf.js").status_code == 200


def test_too_few_players_for_the_roles_is_refused_and_a_finished_game_is_stored(client: TestClient, tmp_path: Path) -> None:
    seed, _ = seed_dealing(WANT)
    code = create(client, seed, max_days=1)
    ann_token = join(client, code, "Ann")
    with client.websocket_connect(f"/ws/{code}") as wa:
        ann = Page(wa, ann_token)
        assert ann.refused(type="start") == "bad_table"  # 4 players cannot hold 2 wolves outnumbered
    code = create(client, seed, max_days=1, wolves=1)
    tokens = {p: join(client, code, p) for p in PEOPLE}
    with client.websocket_connect(f"/ws/{code}") as wa:
        ann = Page(wa, tokens["Ann"])
        ann.send(type="start")
        ann.wait(lambda s: s["you"]["request"] is not None or s["room"]["phase"] == "over")
        ann.send(type="end_game")
        ann.wait(lambda s: s["room"]["phase"] == "over")
    exported = client.get(f"/api/rooms/{code}/export.json").json()
    assert exported["games"] == 1 and exported["history"][0]["roles"]["Ann"]
    assert "Ann" in client.get(f"/api/rooms/{code}/export.csv").text
