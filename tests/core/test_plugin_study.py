"""The plugin's own study file (``tests/core/plugin_dist/same-word-study.toml``) served by ``lexicoord study serve`` in
a fresh process with the distribution installed: two participants, each a group of their own beside a scripted
agent, play the same two things; every game of both groups is kept under its own group, with its own outcome, and
is paid, exported and reported as that group's. Each participant's room page is a WebSocket that answers every
request as the turn room's page does (``{"type": "reply", "kind": ..., "round": ..., "value": {"word": ...}}``).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from lexicoord.runs.store import Store
from tests.conftest import free_port, wait_until_answering
from tests.core.test_plugin_distribution import (  # noqa: F401 (fixture)
    DIST,
    LEXICOORD,
    SCRIPTED_WORD,
    installed,
    lexicoord,
)
from tests.studies.conftest import Participant

STUDY = DIST / "same-word-study.toml"
FILE = tomllib.loads(STUDY.read_text())
RUN = f"study-{FILE['name']}"


@pytest.fixture
def served(installed, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:  # noqa: F811
    """The study served on loopback with its agent on ``scripted/first``: its base address and environment."""
    env = {**installed, "LEXICOORD_DB": str(tmp_path / "study.db"), "STUDY_MODEL": "scripted/first"}
    port = free_port()
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen([str(LEXICOORD), "study", "serve", str(STUDY), "--port", str(port)], env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    wait_until_answering(proc, f"{base}/api/studies/{FILE['name']}/pages", tmp_path / "server.log",
                         "lexicoord study serve")
    try:
        yield base, env
    finally:
        proc.terminate()
        proc.wait(15)
        log.close()


class RoomPage:
    """A participant's room page that names every thing ``word`` until the study closes the room."""

    def __init__(self, base: str, room: str, token: str, word: str) -> None:
        self.url, self.token, self.word, self.sent = base.replace("http", "ws", 1) + f"/ws/{room}", token, word, 0
        #: The fields of every form this page was asked to fill.
        self.forms: list[list[str]] = []
        self.thread = threading.Thread(target=self._play, daemon=True)
        self.thread.start()

    def _play(self) -> None:
        answered: set[str] = set()
        with connect(self.url) as socket:
            socket.send(json.dumps({"type": "hello", "token": self.token}))
            while True:
                try:
                    msg: dict[str, Any] = json.loads(socket.recv())
                except Exception:  # noqa: BLE001 - the room closed the page: the group's games are over
                    return
                request = msg.get("you", {}).get("request") if msg["type"] == "state" else None
                key = json.dumps([(msg["room"].get("game") or {}).get("number"), request]) if request else ""
                if request and key not in answered:
                    answered.add(key)
                    self.forms.append([f["name"] for f in request["fields"]])
                    socket.send(json.dumps({"type": "reply", "kind": request["kind"], "round": request["round"],
                                            "value": {"word": self.word}}))
                    self.sent += 1


def test_the_dist_study_file_is_checked_whole(installed) -> None:  # noqa: F811
    checked = lexicoord({**installed, "STUDY_MODEL": "scripted/first"}, "study", "check", str(STUDY))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "same-word, groups of 1 people and 1 agent(s)" in checked.stdout and "2 game(s)" in checked.stdout


def test_two_groups_of_the_dist_study_keep_both_groups_games(served, tmp_path: Path) -> None:
    base, env = served
    quiz = {q["id"]: q["answer"] for q in FILE["quiz"]["questions"]}
    words = {"first": SCRIPTED_WORD, "second": "group-of-second"}  # the first names it as the agent does
    pages = {}
    with httpx.Client(base_url=base, timeout=30) as client:
        people = {pid: Participant(client, pid, FILE["name"]) for pid in words}  # type: ignore[arg-type]
        for pid, p in people.items():
            p.enter()
            p.answer("consent", agree=True)
            p.answer("instructions")
            p.answer("quiz", answers=quiz)
            p.until("game")
            pages[pid] = RoomPage(base, *p.seat(), word=words[pid])
        for pid, page in pages.items():
            page.thread.join(60)
            assert not page.thread.is_alive() and page.sent == 2, f"{pid}'s games never ended"
            assert page.forms == [["word"], ["word"]]
            people[pid].until("survey")
            people[pid].answer("survey", answers={"guess": 3, "attention": "Blue"})
    episodes = Store(env["LEXICOORD_DB"]).episodes(RUN)
    assert len({e.key for e in episodes}) == 4 and all(e.status == "done" for e in episodes)
    by_place = {(e.spec["place"]["group"], e.spec["place"]["game"]): e for e in episodes}
    assert sorted(by_place) == [("g1", 1), ("g1", 2), ("g2", 1), ("g2", 2)]
    for n, item in ((1, "t0"), (2, "t1")):  # both groups played the same things, in order
        assert by_place[("g1", n)].item_id == by_place[("g2", n)].item_id == item
    for group, pid, agreed in (("g1", "first", True), ("g2", "second", False)):
        for n in (1, 2):
            game = by_place[(group, n)]
            assert [a["options"].get("participant") for a in game.spec["lineup"] if a["kind"] == "human"] == [pid]
            assert game.outcome is not None and game.outcome["agreed"] is agreed
            assert words[pid].lower() in game.outcome["words"].values()
    # The study's exports and its report, each in a fresh process.
    exported = lexicoord(env, "study", "export", str(STUDY), "-o", str(tmp_path / "out"))
    assert exported.returncode == 0, exported.stdout + exported.stderr
    rows = {r["participant_id"]: r for r in csv.DictReader((tmp_path / "out" / "participants.csv").open())}
    assert {pid: (r["games_played"], r["games_counted"]) for pid, r in rows.items()} == {
        "first": ("2", "2"), "second": ("2", "0")}
    bonus = dict(line.split(",") for line in (tmp_path / "out" / "bonus.csv").read_text().splitlines())
    assert bonus == {"first": f"{2 * FILE['bonus']['per_game']:.2f}"}, "paid on the participant's own games"
    report = lexicoord(env, "report", RUN, "--out", str(tmp_path / "r"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert json.loads((tmp_path / "r" / "same_word.json").read_text()) == {
        "games": 4, "agreed": 2, "by_seats": {"2": {"games": 4, "agreed": 2}}}
    assert os.path.exists(tmp_path / "r" / "report.html")
