"""A study with two conditions in headless Chromium (Debian's), on ``lexicoord study serve`` with scripted agents:
four participants, each in their own browser, form four groups of one person; the lobby deals the two conditions
in balance, and a server restart between the second and the third group keeps it. Each participant plays
through to the completion code, the condition's brief shown above the game of its groups alone; then the store,
the exports and the report are checked condition by condition.

Scripted agents play the model seats: the study's rules are checked here, never a model's behaviour.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

from lexicoord.analysis.report import report_run
from lexicoord.runs.store import Store
from tests.studies.test_study_browser import NAME, REDIRECT, Console, Participant, Server, shot, until
from tests.web.test_browser import browser, playwright  # noqa: F401  (the browser fixture)

STUDY = f"""
name = "{NAME}"
protocol = "coordination"
title = "A word game"
seed = 3

[game]
seat_timeout = 60
clarification_bound = 0

[group]
people = 1
games = 1
agents = [{{ name = "Ava", model = "scripted/first" }}]

[consent]
text = "Do you agree to take part?"

[instructions]
text = "Choose the meaning everyone will choose."

[quiz]
attempts = 2
[[quiz.questions]]
id = "goal"
text = "When does a game end well?"
options = ["When all choose the same meaning", "Never"]
answer = "When all choose the same meaning"

[survey]
[[survey.questions]]
id = "clear"
kind = "likert"
text = "The game was clear."
scale = 5
[[survey.questions]]
id = "colour"
kind = "choice"
text = "To show you read this, choose Blue."
options = ["Red", "Blue", "Green"]
expect = "Blue"
[[survey.questions]]
id = "comments"
kind = "text"
text = "Anything else?"
required = false
max_length = 500

[completion]
redirect = "{REDIRECT}{{code}}"
[completion.codes]
completed = "C0MPLETED"
no_consent = "N0CONSENT"
failed_quiz = "FA1LQUIZ"
no_group = "N0GROUP"
dropped = "DR0PPED"

[bonus]
per_game = 0.25

[[conditions]]
name = "alone"
brief = {{ text = "You play with **one** computer player." }}

[[conditions]]
name = "pair"
agents = [{{ name = "Ava", model = "scripted/first" }}, {{ name = "Bo", model = "scripted/first" }}]
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    home = tmp_path / "serve"
    home.mkdir()
    (home / "study.toml").write_text(STUDY, encoding="utf-8")
    served = Server(home, home / "study.toml")
    yield served
    if served.proc is not None and served.proc.poll() is None:
        served.stop(patience=2)


def through(p: Participant, server: Server) -> str | None:
    """From the link to the code: consent, instructions, the quiz, the game (its first meaning, in each round),
    the survey. Returns the brief the game page showed, if any."""
    p.to_quiz()
    p.quiz("When all choose the same meaning")
    playwright.expect(p.game.locator("#game-box .sentence mark")).to_be_visible(timeout=30_000)
    brief = p.page.locator("#brief")
    shown = brief.inner_text() if brief.count() else None
    def pump() -> None:
        try:
            if p.asked():
                p.move()
        except PlaywrightError:  # the game ended as it was looked at: the page moved on to the survey
            pass

    until(lambda: p.page.locator("#stage").get_attribute("data-stage") == "survey", 60,
          f"{p.pid}'s game did not end", pump)
    p.survey(4, "Blue", f"{p.pid} played")
    p.done("completed")
    return shown


def test_a_two_condition_study_in_chromium_balanced_across_a_restart(server: Server, browser) -> None:  # noqa: F811
    console = Console()
    server.start()
    board = browser.new_context().new_page()
    console.watch(board, "dashboard")
    people = [Participant(browser, server, console, f"c{i}") for i in range(1, 5)]
    briefs: dict[str, str | None] = {}
    for p in people[:2]:
        briefs[p.pid] = through(p, server)
    before = Counter(g["condition"] for g in server.admin("state").json()["groups"])
    assert before == {"alone": 1, "pair": 1}, before
    server.stop(patience=5)
    server.start()
    for p in people[2:]:
        briefs[p.pid] = through(p, server)
    state = server.admin("state").json()
    board.goto(f"{server.base}/studies/{NAME}/admin#key=dashboard-key-for-the-browser-test")
    playwright.expect(board.locator("#conditions")).to_contain_text("alone")
    shot(board, "conditions-dashboard")
    rows = {r["participant_id"]: r for r in csv.DictReader(io.StringIO(server.admin("participants.csv").text))}
    assert Counter(g["condition"] for g in state["groups"]) == {"alone": 2, "pair": 2}, "balanced across the restart"
    assert [(c["name"], c["groups"], c["finished"]) for c in state["conditions"]] == [("alone", 2, 2), ("pair", 2, 2)]
    for p in people:
        condition = rows[p.pid]["condition"]
        assert condition in ("alone", "pair") and rows[p.pid]["code"] == "C0MPLETED"
        assert (briefs[p.pid] == "You play with one computer player.") == (condition == "alone"), briefs
        assert len(rows[p.pid]["games"].split()) == 1
    for context in [p.context for p in people]:
        context.close()
    assert console.dialogs == [] and console.errors == [], (console.dialogs, console.errors)
    server.stop(patience=5)

    store = Store(str(server.db))
    episodes = {e.key: e for e in store.episodes(f"study-{NAME}")}
    assert len(episodes) == 4
    for p in people:
        [key] = rows[p.pid]["games"].split()
        game: Any = episodes[key]
        assert game.spec["place"]["condition"] == rows[p.pid]["condition"]
        assert [a["options"].get("participant") for a in game.spec["lineup"] if a["kind"] == "human"] == [p.pid]
        agents = [a["name"] for a in game.spec["lineup"] if a["kind"] != "human"]
        assert agents == (["Ava"] if rows[p.pid]["condition"] == "alone" else ["Ava", "Bo"])
    report = report_run(store, f"study-{NAME}", server.home / "report")
    assert [t.title for t in report.tables if t.title.endswith(" games")] == [
        f"study-{NAME}: 4 games", f"condition alone: study-{NAME}: 2 games", f"condition pair: study-{NAME}: 2 games"]
