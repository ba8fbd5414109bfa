"""A room's broadcast: one per turn of changes (and the turn they wake), the shared part serialised once, each
person's own part built from their view alone, and a frame only for a page whose state changed.

The room here is the real :class:`~lexicoord.web.room.Room` with a stub adapter whose views say whom they were
built for, and real :class:`~lexicoord.web.connection.Connection` objects on sockets that record every text.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from lexicoord.web.adapters.base import RoomAdapter, Watch
from lexicoord.web.connection import Connection
from lexicoord.web.frames import Part, RoomSeen, YouSeen, dumps, merged
from lexicoord.web.people import Person
from lexicoord.web.room import Room
from lexicoord.web.settings import RoomSettings


class StubPublic(Part):
    phase: str
    moves: int


class StubYou(Part):
    secret: str


class StubAdapter(RoomAdapter):
    """Views that name whom they were built for, and count how often each was built."""

    protocol = "stub"

    def __init__(self, room: Any) -> None:
        super().__init__(room)
        self.moves = 0
        self.secrets: dict[str, str] = {}
        self.built: list[str | None] = []

    async def start(self, number: int, lineup: Any) -> None:
        return None

    def watch(self, current: Any) -> Watch:
        raise NotImplementedError

    def view(self, person: Person | None) -> BaseModel:
        self.built.append(person.name if person is not None else None)
        if person is None:
            return StubPublic(phase="playing", moves=self.moves)
        return StubYou(secret=self.secrets.get(person.name, f"{person.name}-ONLY"))

    async def summary(self, ended: Any = None) -> dict[str, Any]:
        return {}

    async def export(self, kind: Any) -> dict[str, Any]:
        return {}


class Socket:
    """What a Connection writes to: every text it was handed, in order."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def send_text(self, text: str) -> None:
        self.texts.append(text)

    def states(self) -> list[dict[str, Any]]:
        return [m for m in map(json.loads, self.texts) if m["type"] == "state"]


async def settle() -> None:
    """Let every callback and task already scheduled run (broadcasts, then the connections' sends)."""
    for _ in range(10):
        await asyncio.sleep(0)


@pytest.fixture
async def room() -> Any:
    made = Room(SimpleNamespace(), "r1", "ABCD", "run-r1", RoomSettings(), StubAdapter)  # type: ignore[arg-type]
    connections: list[Connection] = []
    for name in ("Ann", "Bob", "Cid"):
        person = made.people[name] = Person(name, "hash")
        if name != "Cid":  # Cid has no page open
            conn = Connection(Socket())  # type: ignore[arg-type]
            person.connections.add(conn)
            connections.append(conn)
    made.people.leader_name = "Ann"
    yield made
    for conn in connections:
        await conn.aclose()


def socket_of(room: Room, name: str) -> Socket:
    [conn] = room.people[name].connections
    return conn.ws  # type: ignore[return-value]


def counting(room: Room) -> list[int]:
    """Count the room's broadcasts from now on."""
    calls: list[int] = []
    run = room.broadcast.send

    def broadcast() -> None:
        calls.append(1)
        run()

    room.broadcast.send = broadcast  # type: ignore[method-assign]
    return calls


async def test_changes_in_one_turn_and_in_the_turn_they_wake_make_one_broadcast(room: Room) -> None:
    broadcasts = counting(room)
    room.changed()
    room.adapter.moves += 1  # type: ignore[attr-defined]
    room.changed()
    # A change made in the next turn, as a task woken by the first change makes one in its first step.
    asyncio.get_running_loop().call_soon(room.changed)
    await settle()
    assert len(broadcasts) == 1
    assert [len(socket_of(room, n).states()) for n in ("Ann", "Bob")] == [1, 1]
    room.adapter.moves += 1  # type: ignore[attr-defined]
    room.changed()
    await settle()
    assert len(broadcasts) == 2, "a change after the broadcast makes another"
    assert [s["room"]["moves"] for s in socket_of(room, "Ann").states()] == [1, 2]


async def test_a_page_whose_state_did_not_change_gets_no_new_frame(room: Room) -> None:
    room.changed()
    await settle()
    room.adapter.secrets["Ann"] = "Ann-NEW"  # type: ignore[attr-defined]
    room.changed()
    await settle()
    ann, bob = socket_of(room, "Ann").states(), socket_of(room, "Bob").states()
    assert [s["you"]["secret"] for s in ann] == ["Ann-ONLY", "Ann-NEW"]
    assert [s["you"]["secret"] for s in bob] == ["Bob-ONLY"], "Bob's state was the same: no frame"
    room.changed()
    await settle()
    assert len(socket_of(room, "Ann").states()) == 2 and len(socket_of(room, "Bob").states()) == 1


async def test_each_person_is_sent_their_own_part_built_for_them_alone(room: Room) -> None:
    adapter: StubAdapter = room.adapter  # type: ignore[assignment]
    room.changed()
    await settle()
    for name, other in (("Ann", "Bob"), ("Bob", "Ann")):
        [text] = [t for t in socket_of(room, name).texts if '"type": "state"' in t]
        assert f"{name}-ONLY" in text and f"{other}-ONLY" not in text and "Cid-ONLY" not in text
        assert json.loads(text)["you"] == {"name": name, "leader": name == "Ann", "absent": False,
                                           "secret": f"{name}-ONLY"}
    # The shared part once, each person with a page open once; Cid, with none, costs nothing.
    assert sorted(adapter.built, key=str) == sorted([None, "Ann", "Bob"], key=str)


async def test_a_room_with_no_page_open_builds_nothing(room: Room) -> None:
    adapter: StubAdapter = room.adapter  # type: ignore[assignment]
    for person in room.people.values():
        person.connections.clear()
    room.changed()
    await settle()
    assert adapter.built == []


async def test_a_frame_is_the_text_of_the_whole_state_as_one_model(room: Room) -> None:
    """The room's part and the adapter's, serialised apart and joined, are byte for byte the frame that one
    model of the whole state would give (the layout, the keys and their order)."""
    room.notice = "Ünïcode <b>as written</b>"
    for person in room.people.values():
        shown = room.broadcast
        whole = f'{{"type": "state", "room": {dumps(shown.public())}, "you": {dumps(shown.you(person))}}}'
        assert shown.state_for(person) == whole
    assert list(json.loads(room.broadcast.public_text())) == [*RoomSeen.model_fields, "phase", "moves"]


def test_an_adapter_part_that_repeats_a_room_key_is_refused() -> None:
    class Clashing(Part):
        leader: bool

    with pytest.raises(ValueError, match="leader"):
        merged(YouSeen(name="Ann", leader=True, absent=False), Clashing(leader=False))


def test_an_empty_part_adds_nothing() -> None:
    own = YouSeen(name="Ann", leader=True, absent=False)
    assert merged(own, Part()) == dumps(own)
