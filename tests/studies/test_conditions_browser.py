"""A study with two conditions in headless Chromium (Debian's), on ``lexicoord study serve`` with scripted agents:
four participants, each in their own browser, form four groups of one person; the lobby deals the two conditions
in balance, and a server restart between the first and the second group (in the middle of a block) keeps it. Each participant plays
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
import tomli_w
from playwright.sync_api import Error as PlaywrightError

from lexicoord.analysis.report import report_run
from lexicoord.runs.store import Store
from tests.studies.conftest import values
from tests.studies.test_study_browser import CODES, NAME, REDIRECT, Console, Participant, Server, serving, shot, until
from tests.web.test_browser import browser, playwright  # noqa: F401  (the browser fixture)

#: The in-process tests' study (tests/studies/conftest.py) as a file, with two conditions: the second seats two
#: agents, the first shows its groups a brief.
STUDY = values(
    name=NAME, seed=3, game={"seat_timeout": 60, "clarification_bound": 0},
    group={"people": 1, "games": 1, "agents": [{"name": "Ava", "model": "scripted/first"}]},
    completion={"codes": CODES, "redirect": f"{REDIRECT}{{code}}"}, bonus={"per_game": 0.25},
    conditions=[{"name": "alone", "brief": {"text": "You play with **one** computer player."}},
                {"name": "pair", "agents": [{"name": "Ava", "model": "scripted/first"},
                                            {"name": "Bo", "model": "scripted/first"}]}])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from serving(tmp_path, tomli_w.dumps(STUDY))


def through(p: Participant, server: Server) -> str | None:
    """From the link to the code: consent, instructions, the quiz, the game (its first meaning, in each round),
    the survey. Returns the brief the game page showed, if any."""
    p.to_quiz()
    p.quiz("All agree")
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
    briefs[people[0].pid] = through(people[0], server)
    [first] = [g["condition"] for g in server.admin("state").json()["groups"]]
    server.stop(patience=5)  # mid-block: dealt again from its start, the next group would get the same condition
    server.start()
    for p in people[1:]:
        briefs[p.pid] = through(p, server)
    state = server.admin("state").json()
    assert state["groups"][1]["condition"] != first, "the sequence goes on where it stopped, across the restart"
    board.goto(f"{server.base}/studies/{NAME}/admin#key=dashboard-key-for-the-browser-test")
    playwright.expect(board.locator("#conditions")).to_contain_text("alone")
    shot(board, "conditions-dashboard")
    rows = {r["participant_id"]: r for r in csv.DictReader(io.StringIO(server.admin("participants.csv").text))}
    assert Counter(g["condition"] for g in state["groups"]) == {"alone": 2, "pair": 2}, "balanced across the restart"
    assert [(c["name"], c["groups"], c["finished"]) for c in state["conditions"]] == [("alone", 2, 2), ("pair", 2, 2)]
    for p in people:
        condition = rows[p.pid]["condition"]
        assert condition in ("alone", "pair") and rows[p.pid]["code"] == CODES["completed"]
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
