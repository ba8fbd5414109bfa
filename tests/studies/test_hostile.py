"""What a participant's page might send that a real one would not: someone else's id, a forged stage, a huge
answer, markup, a room of the study joined from outside. Each is refused and loses nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.studies.conftest import Participant, play_out, serving, values

API = "/api/studies/pilot"


def test_another_participants_id_reaches_nothing_of_theirs(db: Path) -> None:
    with serving(db, values()) as (client, _):
        alice, mallory = Participant(client, "alice"), Participant(client, "mallory")
        alice.to_lobby()
        mallory.enter()
        forged = {"X-Participant": "alice", "Authorization": f"Bearer {mallory.token}"}
        for method, path, body in [("GET", "/me", None), ("POST", "/answer", {"stage": "lobby"}), ("POST", "/play", {})]:
            r = client.request(method, f"{API}{path}", headers=forged, json=body)
            assert r.status_code == 401 and "alice" not in r.text, (path, r.text)
        r = client.post(f"{API}/enter", json={"pid": "alice"})  # her link, opened elsewhere
        assert r.status_code == 409 and "token" not in r.json()
        assert alice.me()["stage"] == "lobby"


@pytest.mark.parametrize("claimed", ["survey", "game", "done", "lobby", "quiz", "instructions"])
def test_a_forged_stage_jump_is_refused_and_the_session_stays_where_it_was(db: Path, claimed: str) -> None:
    with serving(db, values()) as (client, part):
        p = Participant(client, "p1")
        p.enter()
        r = client.post(f"{API}/answer", headers=p.headers(),
                        json={"stage": claimed, "answers": {"clear": 7, "colour": "Blue"}, "agree": True})
        assert r.status_code == 409 and r.json()["code"] == "wrong_stage"
        assert p.me()["stage"] == "consent" and part.study.participants["p1"].outcome is None


def test_a_megabyte_survey_answer_is_refused_whole_and_nothing_is_kept(db: Path) -> None:
    with serving(db, values(survey={"questions": [
            {"id": "comments", "kind": "text", "text": "Anything?", "max_length": 20000}]},
            quiz={"questions": []}, group={"people": 1})) as (client, part):
        p = Participant(client, "p1")
        p.enter()
        p.answer("consent", agree=True)
        p.answer("instructions")
        p.until("game")
        part.study.participants["p1"].stage = "survey"  # skip the game: this test is about the survey's input
        huge = "x" * (1024 * 1024)
        r = client.post(f"{API}/answer", headers=p.headers(), json={"stage": "survey", "answers": {"comments": huge}})
        assert r.status_code == 413
        long = "y" * 20001
        r = client.post(f"{API}/answer", headers=p.headers(), json={"stage": "survey", "answers": {"comments": long}})
        assert r.status_code == 413 and "20000" in r.json()["message"]
        assert part.study.participants["p1"].survey == {} and part.study.participants["p1"].outcome is None
        r = client.post(f"{API}/enter", content=b"[" * 300_000, headers={"Content-Type": "application/json"})
        assert r.status_code == 413


@pytest.mark.parametrize("body", [b"not json", b"[1,2]", b'"text"', b"{\"pid\": 5}", b"{\"pid\": \"<script>\"}",
                                  b"{\"pid\": \"ok\", \"study_id\": \"a b\"}"])
def test_malformed_requests_are_one_sentence_each(db: Path, body: bytes) -> None:
    with serving(db, values()) as (client, part):
        r = client.post(f"{API}/enter", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["message"].endswith(".")
        assert part.study.participants == {}


def test_the_pages_give_no_answers_away_and_escape_markup(db: Path) -> None:
    hostile = values(consent={"text": "Agree? <script>alert(1)</script> [x](javascript:alert(1)) <b>bold</b>"})
    with serving(db, hostile) as (client, _):
        pages = client.get(f"{API}/pages").json()
    assert "<script>" not in pages["consent"] and "&lt;script&gt;" in pages["consent"]
    assert "javascript:" not in pages["consent"].replace("[x](javascript:alert(1))", "")
    assert "<b>" not in pages["consent"]
    assert all("answer" not in q for q in pages["quiz"])
    assert all("expect" not in q for q in pages["survey"])
    assert "All agree" in json.dumps(pages["quiz"])  # the options are there, only which is right is not


def test_a_studys_room_cannot_be_joined_exported_or_run_from_outside(db: Path) -> None:
    with serving(db, values()) as (client, _):
        a, b = Participant(client, "a"), Participant(client, "b")
        a.to_lobby()
        b.to_lobby()
        a.until("game")
        room, _token = a.seat()
        r = client.post(f"/api/rooms/{room}/join", json={"name": "Intruder"})
        assert r.status_code == 403 and r.json()["code"] == "managed"
        for kind in ("json", "csv"):
            assert client.get(f"/api/rooms/{room}/export.{kind}").status_code == 403
        assert client.get("/api/runs").status_code == 404  # no run viewer on a study's server
        browser = a.play()  # Person 1: the game's leader, yet the study's schedule is not theirs to change
        for msg in ({"type": "end_game"}, {"type": "start"}, {"type": "drop", "name": "Person 2"},
                    {"type": "hand_over", "name": "Person 2"}):
            browser.send(**msg)
            assert browser.error()["code"] == "managed"
        assert browser.state is not None and browser.state["room"]["managed"] is True


def test_a_study_page_of_another_study_is_not_found(db: Path) -> None:
    with serving(db, values()) as (client, _):
        assert client.get("/studies/pilot/").status_code == 200
        assert client.get("/studies/other/").status_code == 404
        assert client.post("/api/studies/other/enter", json={"pid": "x"}).status_code == 404


def test_a_group_sees_only_its_own_games_also_after_a_restart(db: Path) -> None:
    """All groups store their games in the study's one run; a room's statistics and history are its own."""
    solo = values(group={"people": 1})
    with serving(db, solo) as (client, part):
        first = Participant(client, "first")
        first.to_lobby()
        first.until("game")
        play_out(first.play())
        first.until("survey")
        second = Participant(client, "second")
        second.to_lobby()
        second.until("game")
        rooms = client.app.state.rooms
        deadline = time.monotonic() + 10
        while rooms.get(part.study.state.groups["g1"].room) is not None:  # its games over: closed, its game kept
            assert time.monotonic() < deadline
            time.sleep(0.02)
        g2 = rooms.get(part.study.state.groups["g2"].room)
        assert g2.broadcast.stats["games"] == 0  # though the run has the first group's game
        assert len(client.app.state.services.store.episodes(part.study.file.run_id)) == 1
        browser = second.play()
        assert browser.stats is None or browser.stats["games"] == 0
        token = second.token
    with serving(db, solo) as (client, part):
        rooms = client.app.state.rooms
        g1, g2 = (rooms.get(part.study.state.groups[g].room) for g in ("g1", "g2"))
        assert g1 is None and g2.broadcast.stats["games"] == 0
        second = Participant(client, "second")
        second.token = token
        browser = second.play()
        play_out(browser)
        browser.until(lambda s: browser.stats is not None and browser.stats["games"] == 1)
        assert g2.broadcast.stats["games"] == 1  # its one game, never the other group's


def test_a_game_page_never_shows_another_participants_id(db: Path) -> None:
    """The room names people by seat (Person 1, Person 2); the link's ids stay with the study."""
    ids = ("5f2a9c1b7e4d3a2b1c0d9e8f", "lab-pool-0042")
    with serving(db, values()) as (client, _):
        first, second = (Participant(client, pid) for pid in ids)
        first.to_lobby()
        second.to_lobby()
        first.until("game")
        pages = [first.play(), second.play()]
        frames: list[str] = []
        for page in pages:
            receive = page.ws.receive_text

            def kept(receive=receive) -> str:  # type: ignore[no-untyped-def]
                frames.append(text := receive())
                return text

            page.ws.receive_text = kept
        play_out(*pages)
        assert frames and all(pid not in frame for frame in frames for pid in ids)
        assert any('"Person 2"' in frame for frame in frames)


def test_a_group_formed_just_before_a_stop_gets_its_room_after_the_restart(db: Path) -> None:
    with serving(db, values(group={"people": 1})) as (client, part):
        async def refuse(*_: object, **__: object) -> None:
            raise RuntimeError("the server is stopping")

        client.app.state.rooms.create = refuse
        p = Participant(client, "early")
        assert p.to_lobby()["stage"] == "game"
        token = p.token
        assert part.study.state.groups["g1"].room is None
    with serving(db, values(group={"people": 1})) as (client, part):
        p = Participant(client, "early")
        p.token = token
        view = p.until("game")
        assert view["ready"] and view["seat"] == "Person 1"
        assert part.study.state.groups["g1"].room is not None and len(part.study.state.groups) == 1


def test_a_proxy_the_server_does_not_trust_is_named_once_in_the_log(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    with serving(db, values()) as (client, _):
        for pid in ("a1", "a2", "a3"):
            r = client.post(f"{API}/enter", json={"pid": pid}, headers={"X-Forwarded-For": "203.0.113.7"})
            assert r.status_code == 201
        Participant(client, "direct").enter()
    said = [r.getMessage() for r in caplog.records if "not trusted" in r.getMessage()]
    assert len(said) == 1 and "--forwarded-allow-ips testclient" in said[0]
