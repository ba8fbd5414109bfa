"""The protocol's part of every ``state`` frame, as browsers receive it from a played game, is exactly its adapter's
models' JSON, and carries every key its page script reads.

A scripted coordination game (manual mode, a clarification round), a debate and a Werewolf game are played over
the WebSocket. Every state frame's adapter part (the ``room`` object less the room's own keys, and the same of
``you``) must validate against the adapter's models, which forbid unknown keys, and dump back to the very same
JSON: no key more or less, null where null, nothing renamed. Each key a page script reads (listed below, and
looked for in the script's text) must be a field of those models, and appear in the frames of the game played.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel, ValidationError

import lexicoord
from lexicoord.protocols.coordination.room import CoordinationPublic, CoordinationYou
from lexicoord.protocols.werewolf.room import WerewolfPublic, WerewolfYou
from lexicoord.web.adapters.turns import TurnsPublic, TurnsYou
from lexicoord.web.app import create_app
from lexicoord.web.frames import RoomSeen, YouSeen
from tests.web import test_werewolf_room as ww
from tests.web.conftest import Browser, create_room, join
from tests.web.test_turn_rooms import asked, room, services_for

SRC = Path(lexicoord.__file__).parent
TURNS_JS = SRC / "web" / "adapters" / "turns.js"
COORDINATION_JS = SRC / "protocols" / "coordination" / "room.js"
WEREWOLF_JS = SRC / "protocols" / "werewolf" / "room.js"

#: The keys each script reads of the adapter's part: ``room.`` is ``state`` in the script, ``you.`` is ``you``;
#: ``[]`` is every item of a list, ``*`` every value of an object keyed by name.
TURNS_KEYS = """
room.phase room.games room.game.number room.game.item room.game.players[].name room.game.players[].role
room.game.players[].kind room.game.players[].model room.game.status.*.state room.game.status.*.kind
room.game.status.*.detail room.game.error room.spectators[].round room.spectators[].text room.spectators[].to
you.transcript[].round you.transcript[].text you.transcript[].to you.request.kind you.request.round
you.request.prompt you.request.fields[].kind you.request.fields[].name you.request.fields[].choices
you.request.fields[].max_length you.request.actions
""".split()
COORDINATION_KEYS = """
room.phase room.games room.manual.sentence room.manual.word room.manual.awaiting room.manual.agents_done
room.manual.proposals[].text room.manual.proposals[].proposers room.manual.proposals[].justifications
room.manual.silent room.manual.options room.game.number room.game.stage room.game.round room.game.players[].name
room.game.players[].kind room.game.players[].model room.game.status.*.state room.game.status.*.deadline
room.game.status.*.detail room.game.announcement.agent room.game.announcement.choice
room.game.announcement.justification room.game.rounds[].clarification room.game.rounds[].round
room.game.rounds[].converged room.game.rounds[].decisions.*.choice room.game.rounds[].decisions.*.failure
room.game.rounds[].decisions.*.justification room.game.outcome.converged room.game.outcome.interpretation
room.game.outcome.depth room.game.outcome.reason room.game.error room.game.item.sentence room.game.item.span
room.game.item.options you.request.kind you.request.round
""".split()
WEREWOLF_KEYS = """
room.phase room.games room.settings.wolves room.settings.seers room.settings.witches room.settings.guards
room.settings.max_days room.settings.condition room.game.number room.game.stage room.game.day
room.game.dead.*.cause room.game.dead.*.role room.game.players[].name room.game.players[].kind
room.game.players[].model room.game.winner you.seated you.request.kind you.request.round you.request.channel
you.request.task you.request.choices you.game.log[].t you.game.log[].when you.game.log[].public you.game.log[].to
you.game.log[].who you.game.log[].role you.game.log[].wolves you.game.log[].failure you.game.log[].channel
you.game.log[].text you.game.log[].action you.game.log[].target you.game.log[].victim you.game.log[].wolf
you.game.log[].cause you.game.log[].tally you.game.log[].exiled you.game.log[].tie you.game.log[].winner
you.game.moving[].who you.game.moving[].kind you.game.pools[].term you.game.pools[].definition
you.game.pools[].coiner you.game.pools[].pool
""".split()
#: Read by the script but not reached by the scripted Werewolf game: terms are coined only under ``cogent``, by
#: models. These are checked against the models only.
NOT_PLAYED = frozenset({"you.game.pools[].term", "you.game.pools[].definition", "you.game.pools[].coiner",
                        "you.game.pools[].pool"})


class Recording(Browser):
    """A page that keeps every state frame it receives."""

    def __init__(self, ws: Any) -> None:
        super().__init__(ws)
        self.frames: list[dict[str, Any]] = []

    def receive(self) -> dict[str, Any]:
        msg = super().receive()
        if msg["type"] == "state":
            self.frames.append(msg)
        return msg


# --------------------------------------------------------------------------------------------- the games
def coordination_frames(client: TestClient) -> list[dict[str, Any]]:
    """Manual mode: a sentence, proposals, the options confirmed; the announcement, a round that disagrees, the
    leader's clarification, a round that converges."""
    code = create_room(client, mode="manual", clarification_bound=3)
    ann_token, bob_token = join(client, code, "Ann"), join(client, code, "Bob")
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Recording(wa).hello(ann_token), Recording(wb).hello(bob_token)
        ann.send(type="start")
        ann.phase("sentence")
        ann.send(type="manual_sentence", sentence="I sat by the bank.", word="bank")
        bob.until(lambda s: (s["you"]["request"] or {}).get("kind") == "propose")
        ann.until(lambda s: (s["room"]["manual"] or {}).get("agents_done"))
        ann.send(type="propose", meaning="the side of a river", justification="water")
        bob.send(type="propose", meaning="a place to keep money", justification="coins")
        ann.phase("confirm")
        bob.phase("confirm")
        ann.send(type="manual_confirm", options=["a place to keep money", "the side of a river"])
        ann.vote("a place to keep money")  # the announcement
        ann.vote("the side of a river")
        bob.vote("a place to keep money")
        ann.clarify("I mean where money is kept")
        ann.vote("a place to keep money")
        bob.vote("a place to keep money")
        over = bob.phase("over")
        ann.phase("over")
        assert over["room"]["game"]["outcome"]["converged"] and over["room"]["game"]["outcome"]["depth"] == 1
        return ann.frames + bob.frames


def debate_frames(client: TestClient) -> list[dict[str, Any]]:
    """A person leads, a person and an agent follow; the leader revises, then ends the game."""
    code = room(client, protocol="debate", rounds=2)
    tokens = {n: join(client, code, n) for n in ("Ann", "Bob")}
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Recording(wa).hello(tokens["Ann"]), Recording(wb).hello(tokens["Bob"])
        ann.send(type="start")
        req = asked(ann, "propose")
        ann.send(type="reply", kind="propose", round=req["round"],
                 value={"reasoning": "ANN-REASONS", "verdict": "ambiguous", "question": "How many red blocks?"})
        review = asked(bob, "review")
        bob.send(type="reply", kind="review", round=review["round"],
                 value={"stance": "agree", "reasoning": "BOB-FEEDBACK", "alternative": ""})
        asked(ann, "propose")
        ann.send(type="end_game")
        ann.until(lambda s: s["room"]["phase"] == "over")
        bob.until(lambda s: s["room"]["phase"] == "over")
        return ann.frames + bob.frames


def werewolf_frames(client: TestClient) -> list[dict[str, Any]]:
    """Three people among scripted agents, a witch among the agents, played to the end."""
    rules = {**ww.RULES, "witches": 1}
    seed, _ = ww.seed_dealing(ww.WANT, rules)
    code = ww.create(client, seed, witches=1)
    tokens = {p: ww.join(client, code, p) for p in ww.PEOPLE}
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb, \
            client.websocket_connect(f"/ws/{code}") as wc:
        pages = {"Ann": ww.Page(wa, tokens["Ann"]), "Bob": ww.Page(wb, tokens["Bob"]),
                 "Cid": ww.Page(wc, tokens["Cid"])}
        pages["Ann"].send(type="start")
        ww.play_out(pages, ww.policy, lambda: all(p.state is not None and p.state["room"]["phase"] == "over"
                                                  for p in pages.values()))
        frames = [f for p in pages.values() for f in ww.parsed(p.snapshot())]
    return [f for f in frames if f["type"] == "state"]


@pytest.fixture
def debate_client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(services_for(tmp_path / "d.db"), http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])
    with TestClient(app) as c:
        yield c


@pytest.fixture
def werewolf_client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(ww.make_services(tmp_path / "ww.db"), http_rate=1000, http_burst=1000,
                     allowed_hosts=["testserver"])
    with TestClient(app) as c:
        yield c


# --------------------------------------------------------------------------------------------- the checks
def adapter_parts(frame: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The adapter's part of ``room`` and of ``you``: what is left once the room's own keys are taken out."""
    room_part = {k: v for k, v in frame["room"].items() if k not in RoomSeen.model_fields}
    you_part = {k: v for k, v in frame["you"].items() if k not in YouSeen.model_fields}
    return room_part, you_part


def exactly(model: type[BaseModel], part: dict[str, Any]) -> None:
    """``part`` is ``model``'s JSON, key for key: it validates (no unknown key) and dumps back unchanged."""
    assert model.model_validate(part).model_dump(mode="json") == part, (model.__name__, part)


def reached(value: Any, steps: list[str]) -> bool:
    """Whether ``steps`` lead to a key present in ``value`` (in any item of a list, any value of an object)."""
    if not steps:
        return True
    step, rest = steps[0], steps[1:]
    if step == "[]":
        return isinstance(value, list) and any(reached(v, rest) for v in value)
    if step == "*":
        return isinstance(value, dict) and any(reached(v, rest) for v in value.values())
    return isinstance(value, dict) and step in value and reached(value[step], rest)


def declared(schema: dict[str, Any], node: dict[str, Any], steps: list[str]) -> bool:
    """Whether the JSON schema ``node`` (of a model, its definitions in ``schema``) declares ``steps``."""
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].split("/")[-1]]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return any(declared(schema, alt, steps) for alt in node[key])
    if not steps:
        return True
    step, rest = steps[0], steps[1:]
    if step == "[]":
        return node.get("type") == "array" and declared(schema, node.get("items", {}), rest)
    if step == "*":
        extra = node.get("additionalProperties")
        return isinstance(extra, dict) and declared(schema, extra, rest)
    return step in node.get("properties", {}) and declared(schema, node["properties"][step], rest)


def split(path: str) -> list[str]:
    return [s for s in re.split(r"\.|(\[\])", path) if s]


def check_game(frames: list[dict[str, Any]], public: type[BaseModel], own: type[BaseModel], script: Path,
               keys: list[str], not_played: frozenset[str] = frozenset()) -> None:
    assert len(frames) > 10 and frames[-1]["room"]["phase"] == "over", "a whole game was played"
    for frame in frames:
        room_part, you_part = adapter_parts(frame)
        exactly(public, room_part)
        exactly(own, you_part)
    parts = [dict(zip(("room", "you"), adapter_parts(f), strict=True)) for f in frames]
    text = script.read_text()
    schemas = {"room": public.model_json_schema(), "you": own.model_json_schema()}
    for path in keys:
        where, *steps = split(path)
        assert re.search(rf"\.{re.escape(steps[-1])}\b", text), f"{script.name} reads no '{steps[-1]}' ({path})"
        assert declared(schemas[where], schemas[where], steps), f"{path}: not in {public.__name__}/{own.__name__}"
        if path not in not_played:
            assert any(reached(p[where], steps) for p in parts), f"no frame carries {path}"


def test_a_coordination_games_frames_are_its_models_and_carry_what_its_page_reads(client: TestClient) -> None:
    check_game(coordination_frames(client), CoordinationPublic, CoordinationYou, COORDINATION_JS, COORDINATION_KEYS)


def test_a_debates_frames_are_the_turn_rooms_models_and_carry_what_its_page_reads(debate_client: TestClient) -> None:
    check_game(debate_frames(debate_client), TurnsPublic, TurnsYou, TURNS_JS, TURNS_KEYS)


def test_a_werewolf_games_frames_are_its_models_and_carry_what_its_page_reads(werewolf_client: TestClient) -> None:
    check_game(werewolf_frames(werewolf_client), WerewolfPublic, WerewolfYou, WEREWOLF_JS, WEREWOLF_KEYS, NOT_PLAYED)


def test_a_frame_with_a_key_more_or_less_fails_the_check() -> None:
    """The check above is not vacuous: an unknown key, a missing one, or null where a key was absent is caught."""
    part = {"request": {"kind": "propose", "round": None}}
    exactly(CoordinationYou, part)
    for bad in ({"request": {"kind": "propose", "round": None, "extra": 1}}, {"request": {"kind": "propose"}},
                {"request": None, "seen": True}):
        with pytest.raises((ValidationError, AssertionError)):  # refused, or dumped back otherwise
            exactly(CoordinationYou, bad)
    status = {"state": "thinking", "kind": "propose", "deadline": None, "since": 1.0, "detail": None}
    with pytest.raises(ValidationError):  # a thinking seat has no ``detail`` yet: the key must stay absent
        exactly(TurnsPublic, {"phase": "playing", "games": 1, "spectators": [], "game": {
            "number": 1, "item": None, "players": [], "status": {"Ann": status}, "error": None}})
