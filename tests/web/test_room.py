"""People joining a room together (a study's group): one write for the group, in seat order, the first leading; a
name the room refuses stops the list there and keeps, saved, those admitted before it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.web.app import create_app
from lexicoord.web.errors import RoomError
from lexicoord.web.room import Room
from lexicoord.web.tokens import token_matches
from tests.web.conftest import make_services

BODY = {"agents": [{"name": "Ava", "model": "scripted/first"}], "seat_timeout": 30}


def saved_people(client: TestClient, code: str) -> list[str]:
    """The names the store holds for the room ``code``, in order: what a restart would bring back."""
    rooms = client.app.state.services.rooms  # type: ignore[attr-defined]
    saved = next(r for r in rooms.open_rooms() if r.code == code)
    return [p["name"] for p in saved.state["people"]]


def counting_saves(room: Room) -> list[str]:
    """Every save of ``room``'s state from now on, by room id (the real write still happens)."""
    calls: list[str] = []
    writer = room.services.rooms
    save_state = writer.save_state

    async def counted(room_id: str, state: Callable[[], dict[str, Any]]) -> None:
        calls.append(room_id)
        await save_state(room_id, state)

    writer.save_state = counted  # type: ignore[method-assign]
    return calls


def test_a_group_joining_together_is_saved_in_one_write_in_seat_order(tmp_path: Path) -> None:
    with TestClient(create_app(make_services(tmp_path / "rooms.db"), allowed_hosts=["testserver"])) as client:
        rooms = client.app.state.rooms  # type: ignore[attr-defined]
        room: Room = client.portal.call(lambda: rooms.create(dict(BODY)))
        saves = counting_saves(room)
        joined = client.portal.call(room.join_all, [("Cy", "p3"), ("Ann", "p1"), ("Bo", "p2")])
        assert saves == [room.id], "the group's three seats cost one write"
        assert [person.name for person, _ in joined] == ["Cy", "Ann", "Bo"] == list(room.people)
        assert room.leader is not None and room.leader.name == "Cy", "the first of the group leads"
        assert [person.participant for person, _ in joined] == ["p3", "p1", "p2"]
        for person, token in joined:
            assert token_matches(token, person.token_hash) and room.people.person_for(token) is person
        assert len({token for _, token in joined}) == 3
        assert saved_people(client, room.code) == ["Cy", "Ann", "Bo"]


def test_a_refused_name_stops_the_group_and_keeps_those_admitted_before_it(tmp_path: Path) -> None:
    with TestClient(create_app(make_services(tmp_path / "rooms.db"), allowed_hosts=["testserver"])) as client:
        rooms = client.app.state.rooms  # type: ignore[attr-defined]
        room: Room = client.portal.call(lambda: rooms.create(dict(BODY)))
        saves = counting_saves(room)
        with pytest.raises(RoomError) as refused:
            client.portal.call(room.join_all, [("Ann", "p1"), ("  ann ", "p2"), ("Bo", "p3")])
        assert refused.value.code == "name_taken"
        assert list(room.people) == ["Ann"], "the list stops at the refused name"
        assert saves == [room.id] and saved_people(client, room.code) == ["Ann"], "Ann stays, saved"


def test_one_person_joining_alone_is_one_write_as_before(tmp_path: Path) -> None:
    with TestClient(create_app(make_services(tmp_path / "rooms.db"), allowed_hosts=["testserver"])) as client:
        rooms = client.app.state.rooms  # type: ignore[attr-defined]
        room: Room = client.portal.call(lambda: rooms.create(dict(BODY)))
        saves = counting_saves(room)
        person, token = client.portal.call(room.join, "Dee")
        assert saves == [room.id] and person.name == "Dee" and room.people.person_for(token) is person
        with pytest.raises(RoomError):
            client.portal.call(room.join, "Ava")  # an agent's name
        assert saves == [room.id], "a refused lone name writes nothing"
