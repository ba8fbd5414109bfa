"""A study served for real (its app in-process, a SQLite file): participants from link to completion code.

Scripted agents play the model seats: these tests check the study's rules (stages, lobby, groups,
takeovers, codes, data out), never a model's behaviour.
"""

from __future__ import annotations

import csv
import io
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from lexicoord.analysis.report import report_run
from lexicoord.runs.store import Store
from lexicoord.studies.file import StudyFile
from tests.studies.conftest import (
    KEY,
    Participant,
    one_stays_one_never_comes,
    play_out,
    serving,
    short_grace,
    study_of,
    values,
)


def admin(client, path: str):  # type: ignore[no-untyped-def]
    return client.get(f"/api/studies/pilot/admin/{path}", headers={"X-Admin-Key": KEY})


def test_a_group_plays_to_the_survey_and_each_gets_the_completed_code_and_bonus(db: Path) -> None:
    with serving(db, values()) as (client, part):
        a, b = Participant(client, "alice"), Participant(client, "bob")
        assert a.to_lobby()["stage"] == "lobby"
        b.to_lobby()
        view = a.until("game")
        assert view["seat"] == "Person 1" and view["ready"]  # the first to arrive is Player 1
        play_out(a.play(), b.play())
        a.until("survey")
        done = a.survey()["view"]
        assert (done["stage"], done["outcome"], done["code"]) == ("done", "completed", "DONE1")
        assert done["redirect"] == "https://app.prolific.com/submissions/complete?cc=DONE1"
        b.until("survey")
        b.survey(comments="=HYPERLINK(\"http://x\")")
        rows = list(csv.DictReader(io.StringIO(admin(client, "participants.csv").text)))
        bonus = admin(client, "bonus.csv").text.splitlines()
    by = {r["participant_id"]: r for r in rows}
    assert set(by) == {"alice", "bob"} and {r["code"] for r in rows} == {"DONE1"}
    assert by["alice"]["seat"] == "Person 1" and by["bob"]["seat"] == "Person 2"
    assert by["bob"]["survey_comments"].startswith("'=")  # a formula is written as text
    assert by["alice"]["attention_colour"] == "True" and by["alice"]["games_played"] == "1"
    # Scripted agents all choose the first option, as the people do here: the game converged.
    assert by["alice"]["games_counted"] == "1" and by["alice"]["bonus"] == "0.60"
    assert sorted(bonus) == ["alice,0.60", "bob,0.60"]  # Prolific's bulk-bonus lines, no header
    # The game is an episode of the study's run, its people seats carrying their participant ids.
    store = Store(str(db))
    [episode] = store.episodes("study-pilot")
    people = {a["name"]: a["options"].get("participant") for a in episode.spec["lineup"] if a["kind"] == "human"}
    assert people == {"Person 1": "alice", "Person 2": "bob"}


def test_declining_consent_and_failing_the_quiz_end_with_their_own_codes(db: Path) -> None:
    with serving(db, values()) as (client, _):
        no = Participant(client, "nope")
        no.enter()
        assert no.answer("consent", agree=False)["view"]["code"] == "NOPE2"
        quiz = Participant(client, "quizzed")
        quiz.enter()
        quiz.answer("consent", agree=True)
        quiz.answer("instructions")
        first = quiz.answer("quiz", answers={"goal": "Never"})
        assert first["wrong"] == ["goal"] and first["view"]["stage"] == "quiz" and first["view"]["attempts_left"] == 1
        second = quiz.answer("quiz", answers={"goal": "Never"})["view"]
        assert (second["outcome"], second["code"]) == ("failed_quiz", "QUIZ3")
        # The session is over: nothing more is taken, and the code stays.
        quiz.answer("quiz", expect=409, answers={"goal": "All agree"})
        assert quiz.me()["code"] == "QUIZ3"


def test_the_lobby_groups_in_arrival_order_and_a_latecomer_waits(db: Path) -> None:
    with serving(db, values()) as (client, part):
        people = [Participant(client, f"p{i}") for i in range(5)]
        for p in people:
            p.to_lobby()
        for p in people[:4]:
            p.until("game")
        assert people[4].me()["stage"] == "lobby" and people[4].me()["place"] == 1
        groups = part.study.state.groups
        assert [g.members for g in groups.values()] == [["p0", "p1"], ["p2", "p3"]]


def test_many_arriving_at_once_form_each_group_once_and_lose_no_one(db: Path) -> None:
    with serving(db, values()) as (client, part):
        people = [Participant(client, f"q{i:02d}") for i in range(40)]
        for p in people:
            p.enter()
            p.answer("consent", agree=True)
            p.answer("instructions")
        with ThreadPoolExecutor(16) as pool:  # the quiz answers that send them all to the lobby, at once
            list(pool.map(lambda p: p.answer("quiz", answers={"goal": "All agree"}), people))
        deadline = time.monotonic() + 30
        while sum(g.status == "playing" for g in part.study.state.groups.values()) < 20:
            assert time.monotonic() < deadline, "groups not all opened"
            time.sleep(0.05)
        members = [m for g in part.study.state.groups.values() for m in g.members]
        rooms = {g.room for g in part.study.state.groups.values()}
    assert len(members) == len(set(members)) == 40  # no one in two groups, no one lost
    assert len(part.study.state.groups) == 20 and len(rooms) == 20
    arrivals = sorted(part.study.participants.values(), key=lambda p: p.arrival or 0)
    for first, second in zip(arrivals[::2], arrivals[1::2], strict=True):
        assert first.group == second.group  # grouped in arrival order


def test_a_lobby_timeout_sends_a_lone_participant_home_with_the_no_group_code(db: Path) -> None:
    def short(file: StudyFile) -> None:
        file.lobby.timeout = 0.3

    with serving(db, values(), tune=short) as (client, _):
        alone = Participant(client, "alone")
        alone.to_lobby()
        view = alone.until("done")
    assert (view["outcome"], view["code"]) == ("no_group", "ALONE4")


def test_a_lobby_timeout_fills_the_group_with_stand_ins_when_the_study_allows(db: Path) -> None:
    def short(file: StudyFile) -> None:
        file.lobby.timeout = 0.3

    with serving(db, values(lobby={"fill_with_agents": True}), tune=short) as (client, part):
        alone = Participant(client, "alone")
        alone.to_lobby()
        alone.until("game")
        play_out(alone.play())
        alone.until("survey")
        alone.survey()
        [group] = part.study.state.groups.values()
    assert group.filled == ["Stand-in 1"] and group.members == ["alone"]
    [episode] = Store(str(db)).episodes("study-pilot")
    seats = {a["name"]: (a["kind"], a["model"]) for a in episode.spec["lineup"]}
    assert seats == {"Person 1": ("human", None), "Bot": ("llm", "scripted/first"),
                     "Stand-in 1": ("llm", "scripted/first")}


def test_a_reload_resumes_the_same_stage_and_seat_and_another_browser_is_refused(db: Path) -> None:
    with serving(db, values()) as (client, _):
        a, b = Participant(client, "alice"), Participant(client, "bob")
        a.to_lobby()
        b.to_lobby()
        a.until("game")
        again = Participant(client, "alice")
        again.token = a.token  # the same browser: its token was kept
        assert again.enter()["stage"] == "game" and again.me()["seat"] == "Person 1"
        # Another browser with alice's link (no token, no session id), or with a forged token: nothing.
        r = client.post("/api/studies/pilot/enter", json={"pid": "alice"})
        assert r.status_code == 409 and r.json()["code"] == "in_use" and "token" not in r.text
        r = client.get("/api/studies/pilot/me", headers={"X-Participant": "alice", "Authorization": "Bearer nope"})
        assert r.status_code == 401
        # A second seat token for the same participant takes the seat: the first page is closed, its token
        # stops working, and the new page plays the same seat.
        first_page = a.play()
        room, second = again.seat()
        with pytest.raises(WebSocketDisconnect) as closed:
            first_page.until(lambda s: False)
        assert closed.value.code == 4409
        with client.websocket_connect(f"/ws/{room}") as ws:
            ws.send_json({"type": "hello", "token": second})
            assert json.loads(ws.receive_text())["type"] == "welcome"


def test_a_new_browser_with_the_links_session_id_takes_the_session_over(db: Path) -> None:
    """Prolific's link carries a SESSION_ID only its participant has: a crashed or changed browser opened from
    that link resumes the session (the old browser's token stops working); the id alone is not enough."""
    with serving(db, values()) as (client, _):
        a = Participant(client, "5f2a9c1b7e4d3a2b1c0d9e8f")
        a.enter(study_id="STUDY1", session_id="sess-4417")
        a.answer("consent", agree=True)
        for wrong in ({}, {"session_id": "sess-0000"}, {"session_id": "SESS-4417"}):
            r = client.post("/api/studies/pilot/enter", json={"pid": a.pid, **wrong})
            assert r.status_code == 409, wrong
        other = Participant(client, a.pid)
        view = other.enter(study_id="STUDY1", session_id="sess-4417")
        assert view["stage"] == "instructions" and other.token != a.token
        r = client.get("/api/studies/pilot/me", headers=a.headers())
        assert r.status_code == 401, "the old browser's token no longer works"
        assert other.answer("instructions")["view"]["stage"] == "quiz"


def test_the_experimenter_lets_a_locked_out_participant_in_again(db: Path) -> None:
    headers = {"X-Admin-Key": KEY}
    with serving(db, values()) as (client, _):
        a = Participant(client, "carol")
        a.enter()
        a.answer("consent", agree=True)
        assert client.post("/api/studies/pilot/enter", json={"pid": "carol"}).status_code == 409
        for bad in ({"participant": "nobody"}, {"participant": ["carol"]}, {}):
            r = client.post("/api/studies/pilot/admin/action", json={"action": "release", **bad}, headers=headers)
            assert r.status_code == 404, bad
        r = client.post("/api/studies/pilot/admin/action", json={"action": "release", "participant": "carol"},
                        headers=headers)
        assert r.status_code == 200 and "carol" in r.json()["message"]
        assert client.get("/api/studies/pilot/me", headers=a.headers()).status_code == 401
        again = Participant(client, "carol")
        assert again.enter()["stage"] == "instructions"
        assert client.post("/api/studies/pilot/enter", json={"pid": "carol"}).status_code == 409, "let in once"
        done = Participant(client, "dan")
        done.enter()
        done.answer("consent", agree=False)
        r = client.post("/api/studies/pilot/admin/action", json={"action": "release", "participant": "dan"},
                        headers=headers)
        assert r.status_code == 409


def test_a_page_gone_from_the_lobby_is_not_grouped_and_gets_its_code_at_the_timeout(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lexicoord.studies.study as study_module

    monkeypatch.setattr(study_module, "PRESENCE", 0.5)
    clock = [1000.0]
    with serving(db, values(lobby={"fill_with_agents": True, "timeout": 60})) as (client, part):
        part.study.clock = lambda: clock[0]
        part.study._started_mono -= 10  # long after the server started: absences count
        gone = Participant(client, "gone")
        gone.to_lobby()
        time.sleep(0.7)  # the page was closed: nothing heard from it since
        here = Participant(client, "here")
        assert here.to_lobby()["stage"] == "lobby", "not grouped with a page that left"
        assert gone.me()["stage"] == "lobby"  # back: heard again
        assert here.me()["stage"] == "game" or here.until("game")["seat"] == "Person 2"
        late = Participant(client, "late")
        late.to_lobby()
        time.sleep(0.7)
        clock[0] += 61  # the lobby's timeout: a page still there would be given a group of stand-ins
        deadline = time.monotonic() + 10
        while part.study.participants["late"].outcome is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert late.me()["code"] == "ALONE4" and len(part.study.state.groups) == 1


def test_a_participant_away_past_the_grace_period_is_taken_over_and_gets_the_dropped_code(db: Path) -> None:
    with serving(db, values(group={"games": 2}), tune=short_grace) as (client, part):
        stay, leave, browser = one_stays_one_never_comes(client, part)
        view = leave.until("done")
        assert (view["outcome"], view["code"]) == ("dropped", "GONE5")
        play_out(browser)
        browser.until(lambda s: s["room"]["phase"] == "over" and s["room"]["games"] == 2)
        play_out(browser)
        stay.until("survey")
        assert stay.survey()["view"]["code"] == "DONE1"
        dropped = part.study.participants["leave"].dropped
    assert dropped is not None and dropped.reason == "disconnected" and dropped.game == 1
    store = Store(str(db))
    episodes = sorted(store.episodes("study-pilot"), key=lambda e: e.position)
    assert len(episodes) == 2
    taken = [e for e in store.events(episodes[0].id or 0) if e.type == "seat_taken_over"]
    assert len(taken) == 1 and taken[0].agent == "Person 2" and taken[0].by == "scripted/first"  # type: ignore[attr-defined]
    # The group's second game is played without the dropped participant's seat.
    assert [a["name"] for a in episodes[1].spec["lineup"] if a["kind"] == "human"] == ["Person 1"]
    rows = list(csv.DictReader(io.StringIO(_csv(db, part))))
    by = {r["participant_id"]: r for r in rows}
    assert by["leave"]["dropped_reason"] == "disconnected" and by["leave"]["games_played"] == "0"
    assert by["stay"]["games_played"] == "2"
    # The analysis may keep such games or leave them out: every protocol's report reads them the same way.
    full = report_run(store, "study-pilot", db.parent / "full")
    kept = report_run(store, "study-pilot", db.parent / "kept", without_takeovers=True)
    assert not any("took a person's seat" in w for w in full.warnings)
    assert "1 game(s) in which a model took a person's seat over are left out" in kept.warnings[-1]
    assert _games(full.files["csv"]) == 2 and _games(kept.files["csv"]) == 1
    with full.files["csv"].open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["participants"] for r in rows] == ["Person 1=stay; Person 2=leave", "Person 1=stay"]
    # The seat a model took over is still the person's seat in the game's record (the event says from when).
    stats = json.loads((db.parent / "full" / "stats.json").read_text(encoding="utf-8"))
    # Game 1 has two people's seats in round 1 (the taken-over one included); game 2 has one.
    assert stats["alignment_fewer_than_two"] == 1
    assert sum(a["games"] for a in stats["alignment"]) + stats["alignment_failed_move"] == 1


def _games(path: Path) -> int:
    with path.open(encoding="utf-8") as fh:
        return sum(1 for _ in csv.DictReader(fh))


def _csv(db: Path, part) -> str:  # type: ignore[no-untyped-def]
    from lexicoord.studies.export import write_participants

    out = io.StringIO()
    write_participants(part.study, Store(str(db)), out)
    return out.getvalue()


def test_a_restart_mid_game_loses_nothing_and_the_game_goes_on(db: Path) -> None:
    with serving(db, values()) as (client, part):
        a, b = Participant(client, "alice"), Participant(client, "bob")
        a.to_lobby()
        b.to_lobby()
        a.until("game")
        ba, bb = a.play(), b.play()
        ba.vote(0)  # alice has moved; bob has not when the server stops
        ba.until(lambda s: "Person 1" in str(s["room"]["game"]["status"]))
        tokens = (a.token, b.token)
    with serving(db, values()) as (client, part):
        a, b = Participant(client, "alice"), Participant(client, "bob")
        a.token, b.token = tokens
        assert a.enter()["stage"] == "game" and b.me()["seat"] == "Person 2"
        ba, bb = a.play(), b.play()
        play_out(ba, bb)
        a.until("survey")
        b.until("survey")
        a.survey()
        b.survey()
        assert {p.code for p in part.study.participants.values()} == {"DONE1"}
    [episode] = Store(str(db)).episodes("study-pilot")
    assert episode.status == "done"


BOTS = [{"name": f"Bot {i}", "model": "scripted/first"} for i in range(1, 7)]
SMOKE = Path(__file__).resolve().parents[2] / "experiments" / "smoke"


@pytest.mark.parametrize(("protocol", "extra"), [
    ("debate", {"group": {"people": 1, "agents": BOTS[:1]}}),
    ("werewolf", {"group": {"people": 1, "agents": BOTS}}),
    ("cogent", {"group": {"people": 1, "agents": BOTS[:1]}, "game": {"seat_timeout": 30, "source": "gsm8k"},
                "items": {"gsm8k": str(SMOKE / "gsm8k.jsonl")}}),
])
def test_every_protocol_with_a_room_is_played_in_a_study(db: Path, protocol: str, extra: dict[str, Any]) -> None:
    with serving(db, values(protocol=protocol, bonus={"per_game": 0.0}, **extra)) as (client, part):
        p = Participant(client, "alice")
        p.to_lobby()
        view = p.until("game")
        room = client.app.state.rooms.get(part.study.state.groups["g1"].room)
        assert view["ready"] and room.managed is not None
        # "ready" is the room made and the seat taken; the game begins once the room has saved it.
        deadline = time.monotonic() + 10
        while not room.busy:
            assert time.monotonic() < deadline, "the group's game never began"
            time.sleep(0.02)
        assert room.managed.games == [room.current.spec.key]
    assert Store(str(db)).run("study-pilot").protocol == protocol


def test_a_table_too_small_for_the_protocol_is_a_problem_of_the_file() -> None:
    from lexicoord.experiments.source import ExperimentError

    with pytest.raises(ExperimentError) as err:
        study_of(values(protocol="werewolf", bonus={"per_game": 0.0}, group={"people": 1, "agents": BOTS[:1]}))
    assert any("group: " in str(p) and "cannot hold" in str(p) for p in err.value.problems), err.value.problems


def test_a_table_the_protocol_refuses_at_a_deal_sends_the_group_home_and_says_why(db: Path) -> None:
    """A table that passed the file's check but not the deal (here: the rule is tightened after the check)."""
    def tighten(file: StudyFile) -> None:
        file.group.agents = file.group.agents[:1]

    with serving(db, values(protocol="werewolf", bonus={"per_game": 0.0}, group={"people": 1, "agents": BOTS}), tune=tighten) as (client, part):
        p = Participant(client, "alice")
        p.to_lobby()
        view = p.until("done")
        state = client.get("/api/studies/pilot/admin/state", headers={"X-Admin-Key": KEY}).json()
    assert view["code"] == "ALONE4"
    assert "cannot hold" in (state["groups"][0]["error"] or "")


def test_a_finished_groups_room_closes_and_leaves_another_groups_game_under_way(db: Path) -> None:
    """Every group's games share the study's run: closing one group's room must not close the run nor forget
    another group's game in progress."""
    solo = values(group={"people": 1})
    with serving(db, solo) as (client, part):
        store: Store = client.app.state.services.store
        run = part.study.file.run_id
        first = Participant(client, "first")
        first.to_lobby()
        first.until("game")
        waiting = first.play()  # the first group's game waits for this person's vote
        deadline = time.monotonic() + 10
        while not any(e.status == "playing" for e in store.episode_page(run, limit=10)):
            assert time.monotonic() < deadline, "the first group's game never reached the store"
            time.sleep(0.05)
        second = Participant(client, "second")
        second.to_lobby()
        second.until("game")
        play_out(second.play())
        second.until("survey")
        rooms = client.app.state.rooms
        deadline = time.monotonic() + 10
        while rooms.get(part.study.state.groups["g2"].room) is not None:  # closed just after its people move on
            assert time.monotonic() < deadline, "a finished group's room is closed"
            time.sleep(0.02)
        assert rooms.get(part.study.state.groups["g1"].room) is not None
        statuses = sorted(e.status for e in store.episode_page(run, limit=10))
        assert statuses == ["done", "playing"], statuses
        assert store.run(run).status != "closed"
        play_out(waiting)
        first.until("survey")
        assert sorted(e.status for e in store.episode_page(run, limit=10)) == ["done", "done"]
        groups = admin(client, "state").json()["groups"]
        assert [[s["seat"] for s in g["seats"]] for g in groups] == [["Person 1", "Bot"]] * 2, \
            "a closed room's seats are still shown"


def test_a_group_whose_room_cannot_open_is_sent_home_after_a_while(db: Path) -> None:
    clock = [1000.0]
    with serving(db, values(group={"people": 1})) as (client, part):
        study = part.study
        study.clock = lambda: clock[0]
        rooms = client.app.state.rooms

        async def refuse(*_: Any, **__: Any) -> Any:
            raise RuntimeError("the store is away")

        rooms.create = refuse
        p = Participant(client, "alone")
        view = p.to_lobby()
        assert view["stage"] == "game" and not view["ready"]
        deadline = time.monotonic() + 10
        while study.state.groups["g1"].failing_since is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert p.me()["stage"] == "game", "a failure is tried again, not given up at once"
        clock[0] += 31
        deadline = time.monotonic() + 10
        while p.me()["stage"] != "done":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert p.me()["code"] == "ALONE4"
        assert "could not be opened" in (admin(client, "state").json()["groups"][0]["error"] or "")


def test_an_ended_study_is_not_opened_again(db: Path) -> None:
    with serving(db, values()) as (client, _):
        headers = {"X-Admin-Key": KEY}
        assert client.post("/api/studies/pilot/admin/action", json={"action": "end_study"}, headers=headers).status_code == 200
        for action in ("resume", "pause"):
            r = client.post("/api/studies/pilot/admin/action", json={"action": action}, headers=headers)
            assert r.status_code == 409 and "ended" in r.json()["message"]
        assert admin(client, "state").json()["status"] == "ended"
        r = client.post("/api/studies/pilot/enter", json={"pid": "late"})
        assert r.status_code == 403


def test_a_game_the_room_saved_but_the_group_did_not_is_taken_back_from_the_room(db: Path) -> None:
    """The room saves a game before it is played and the group's record follows; a crash between the two
    saves must not leave that game out of the group's record, and so out of the exports and the bonus."""
    with serving(db, values(group={"people": 1})) as (client, part):
        p = Participant(client, "solo")
        p.to_lobby()
        p.until("game")
        group = part.study.state.groups["g1"]
        room = client.app.state.rooms.get(group.room)
        deadline = time.monotonic() + 10
        while not (room.managed.games and [g.key for g in group.games] == room.managed.games
                   and group.id not in part.study._busy):  # the game begun and the group's record kept
            assert time.monotonic() < deadline
            time.sleep(0.02)
        group.games.clear()  # as the group's record stands after such a crash
        client.portal.call(part.study._look, group)
        assert [(g.number, g.key) for g in group.games] == [(1, room.managed.games[0])]
        play_out(p.play())
        p.survey()
        rows = list(csv.DictReader(io.StringIO(admin(client, "participants.csv").text)))
        assert rows[0]["games_played"] == "1"


def test_a_seeded_werewolf_study_begun_under_the_older_deal_rule_is_refused_on_a_restart(db: Path) -> None:
    """Its games' deals come from the study's seed; a run begun under the older rule would deal the groups after
    the restart otherwise than those before, so the restart is refused, naming the rule."""
    import sqlite3

    from lexicoord.errors import ConfigError

    data = values(protocol="werewolf", seed=5, bonus={"per_game": 0.0}, group={"people": 1, "agents": BOTS})
    with serving(db, data):
        pass
    assert Store(str(db)).run("study-pilot").config["deals"] == "sha256"
    with sqlite3.connect(db) as conn:
        [(config,)] = conn.execute("SELECT config FROM runs WHERE id = 'study-pilot'").fetchall()
        old = json.loads(config)
        del old["deals"]
        conn.execute("UPDATE runs SET config = ? WHERE id = 'study-pilot'", (json.dumps(old),))
    with pytest.raises(ConfigError, match="deals"):
        with serving(db, data):
            pass
