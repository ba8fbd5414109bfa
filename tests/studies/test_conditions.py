"""Between-subjects conditions in a study served for real (in-process app, SQLite file): declared in the file,
dealt to groups by balanced randomisation, recorded on every participant, group and game, carried by the exports,
split by the report, compared by ``lexicoord compare``, closed from the dashboard, kept across a restart.

Scripted agents and pages that answer every request: the study's rules are checked, never a model's behaviour.
"""

from __future__ import annotations

import copy
import csv
import io
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lexicoord.analysis.compare_report import compare_runs
from lexicoord.analysis.report import report_run
from lexicoord.errors import ConfigError
from lexicoord.experiments.source import ExperimentError
from lexicoord.runs.store import Store
from lexicoord.studies.file import load
from tests.studies.autoplay import AutoPage
from tests.studies.conftest import KEY, Participant, serving, study_of, values

BOT = {"name": "Bot", "model": "scripted/first"}
CONDITIONS = [
    {"name": "one", "game": {"clarification_bound": 1}},
    {"name": "two", "agents": [BOT, {"name": "Bot 2", "model": "scripted/first"}],
     "brief": {"text": "Two **agents** play with you."}},
]


def with_conditions(**extra: Any) -> dict[str, Any]:
    return values(group={"people": 1, "games": 1, "agents": [BOT]}, bonus={"per_game": 0.5}, seed=4,
                  conditions=copy.deepcopy(CONDITIONS), **extra)


def admin(client: Any, path: str) -> Any:
    return client.get(f"/api/studies/pilot/admin/{path}", headers={"X-Admin-Key": KEY})


def act(client: Any, **body: Any) -> Any:
    return client.post("/api/studies/pilot/admin/action", json=body, headers={"X-Admin-Key": KEY})


def play_through(client: Any, pid: str, pick: int = 0) -> dict[str, Any]:
    """One participant from link to code, their game played by a page that answers every request."""
    p = Participant(client, pid)
    p.to_lobby()
    view = p.until("game")
    room, token = p.seat()
    ws = client.websocket_connect(f"/ws/{room}")
    client.sockets.append(ws)
    page = AutoPage(ws.__enter__(), token, pick=pick, tag=pid)
    assert page.closed.wait(60), f"{pid}'s game never ended"
    p.until("survey")
    p.survey()
    return view


def test_groups_are_dealt_conditions_in_balance_and_every_record_names_its_condition(db: Path, tmp_path: Path) -> None:
    with serving(db, with_conditions()) as (client, part):
        briefs = {}
        for i in range(4):
            view = play_through(client, f"p{i}", pick=i % 2)
            briefs[f"p{i}"] = view.get("brief")
            counts = Counter(g.condition for g in part.study.state.groups.values())
            assert max(counts.values()) - min(counts.get(c, 0) for c in ("one", "two")) <= 1, counts
        groups = {g.id: g for g in part.study.state.groups.values()}
        people = dict(part.study.participants)
        rows = {r["participant_id"]: r for r in csv.DictReader(io.StringIO(admin(client, "participants.csv").text))}
        snapshot = admin(client, "state").json()
    assert Counter(g.condition for g in groups.values()) == {"one": 2, "two": 2}
    for pid, p in people.items():
        group = groups[p.group or ""]
        assert p.condition == group.condition and rows[pid]["condition"] == group.condition
        assert (briefs[pid] is not None) == (group.condition == "two"), "a condition's brief goes to its groups alone"
        if briefs[pid]:
            assert "<strong>agents</strong>" in briefs[pid]
    store = Store(str(db))
    episodes = store.episodes("study-pilot")
    assert len(episodes) == 4
    for e in episodes:
        place = e.spec["place"]
        condition = groups[place["group"]].condition
        assert place["condition"] == condition
        agents = [a["name"] for a in e.spec["lineup"] if a["kind"] != "human"]
        assert agents == (["Bot"] if condition == "one" else ["Bot", "Bot 2"]), "the condition's agents played"
        assert e.spec["settings"]["clarification_bound"] == (1 if condition == "one" else 3)
    assert [(c["name"], c["groups"], c["participants"], c["open"]) for c in snapshot["conditions"]] == [
        ("one", 2, 2, True), ("two", 2, 2, True)]
    assert all(g["condition"] in ("one", "two") for g in snapshot["groups"])
    # The report: all games, then each condition's under its own settings.
    report = report_run(store, "study-pilot", tmp_path / "report")
    titles = [t.title for t in report.tables]
    assert any(t.startswith("condition one: ") for t in titles) and any(t.startswith("condition two: ") for t in titles)
    summaries = [t.title for t in report.tables if t.title.endswith(" games")]  # "RUN: N games", the summary's
    assert summaries == ["study-pilot: 4 games", "condition one: study-pilot: 2 games",
                         "condition two: study-pilot: 2 games"], summaries
    assert (tmp_path / "report" / "condition-one").is_dir() and (tmp_path / "report" / "condition-two").is_dir()
    # Two conditions compared as independent groups.
    compared = compare_runs(store, "study-pilot@one", "study-pilot@two", tmp_path / "compare")
    table = compared.tables[0]
    assert "independent groups" in table.title and table.head[2] == "games A / B"
    assert all(row[2] == "2 / 2" for row in table.rows), table.rows
    assert "Fisher" in " ".join(r[6] for r in table.rows)
    with pytest.raises(Exception, match="no condition 'three'"):
        compare_runs(store, "study-pilot@one", "study-pilot@three", tmp_path / "compare")
    # The same from the command line, with the run named by a prefix.
    from typer.testing import CliRunner

    from lexicoord.cli.app import app as cli

    said = CliRunner().invoke(cli, ["compare", "study-pil@one", "study-pilot@two", "--db", str(db),
                                     "--out", str(tmp_path / "cli")],
                              env={"COLUMNS": "200", "LEXICOORD_HOME": str(tmp_path)})
    assert said.exit_code == 0, said.output
    assert "study-pilot@one (A) vs study-pilot@two (B)" in said.output and "Fisher" in said.output
    assert (tmp_path / "cli" / "compare.html").is_file()


def test_a_restart_between_two_groups_keeps_the_balance(db: Path) -> None:
    with serving(db, with_conditions()) as (client, part):
        play_through(client, "before")
        first = part.study.state.groups["g1"].condition
    with serving(db, with_conditions()) as (client, part):
        play_through(client, "after")
        second = part.study.state.groups["g2"].condition
        assert part.study.state.assigned == 2
    assert {first, second} == {"one", "two"}, "the sequence goes on where it stopped, not from its start"


def test_the_dashboard_closes_a_condition_to_new_groups_and_never_the_last(db: Path) -> None:
    with serving(db, with_conditions()) as (client, part):
        r = act(client, action="close_condition", condition="two")
        assert r.status_code == 200 and "closed" in r.json()["message"]
        assert act(client, action="close_condition", condition="one").status_code == 409
        assert act(client, action="close_condition", condition="nope").status_code == 404
        for i in range(3):
            play_through(client, f"c{i}")
        assert [g.condition for g in part.study.state.groups.values()] == ["one"] * 3
        assert [c["open"] for c in admin(client, "state").json()["conditions"]] == [True, False]
        assert act(client, action="open_condition", condition="two").status_code == 200
        play_through(client, "c3")
        play_through(client, "c4")
        assert Counter(g.condition for g in part.study.state.groups.values())["two"] >= 1


def test_accept_changes_never_takes_a_change_to_a_condition_that_has_begun(db: Path) -> None:
    with serving(db, with_conditions()) as (client, part):
        play_through(client, "first")
        begun = part.study.state.groups["g1"].condition
    other = "two" if begun == "one" else "one"

    def changed(name: str) -> dict[str, Any]:
        data = with_conditions()
        for c in data["conditions"]:
            if c["name"] == name:
                c["game"] = {**c.get("game", {}), "agent_timeout": 11}
        return data

    with pytest.raises(ConfigError, match=rf"conditions\.{begun}\.game"):
        with serving(db, changed(begun), accept_changes=True):
            pass
    with serving(db, changed(other), accept_changes=True) as (_, part):
        assert part.study.file.condition(other).game["agent_timeout"] == 11
    with pytest.raises(ConfigError, match="--accept-changes"):
        with serving(db, with_conditions()):
            pass


def test_a_condition_with_a_bad_key_is_one_line_at_its_line(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "experiments" / "studies" / "lexicoord-conditions.toml"
    text = example.read_text(encoding="utf-8")
    for added, says in (("game = { clarification_bund = 2 }", r"conditions\.one_agent\.game\.clarification_bund"),
                        ("weigth = 2", r"conditions\.0\.weigth")):
        bad = text.replace('name = "one_agent"', f'name = "one_agent"\n{added}')
        path = tmp_path / "study.toml"
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(ExperimentError) as err:
            load(path, environ={})
        problems = [str(p) for p in err.value.problems]
        line = next(i for i, t in enumerate(bad.splitlines(), 1) if t == added)
        assert len(problems) == 1 and re.match(rf".*:{line}: {says}.*unknown key", problems[0]), problems
    twice = text.replace('name = "four_agents"', 'name = "one_agent"')
    path.write_text(twice, encoding="utf-8")
    with pytest.raises(ExperimentError, match="named twice"):
        load(path, environ={})


def test_a_condition_whose_table_the_protocol_cannot_hold_is_a_problem_of_the_file() -> None:
    bots = [{"name": f"Bot {i}", "model": "scripted/first"} for i in range(1, 7)]
    data = values(protocol="werewolf", bonus={"per_game": 0.0}, group={"people": 1, "agents": bots},
                  conditions=[{"name": "small", "agents": bots[:1]}, {"name": "full"}])
    with pytest.raises(ExperimentError) as err:
        study_of(data)
    assert any("conditions.small.agents: 2 players" in str(p) and "cannot hold" in str(p) for p in err.value.problems)


def test_conditions_added_to_a_study_under_way_deal_the_groups_from_then_on(db: Path) -> None:
    """A study begun without conditions takes new ones with --accept-changes (no group has played them): the
    groups before keep no condition, the next are dealt one, and the run records each condition's settings."""
    plain = with_conditions()
    del plain["conditions"]
    with serving(db, plain) as (client, part):
        play_through(client, "early")
    with serving(db, with_conditions(), accept_changes=True) as (client, part):
        play_through(client, "later")
        assert [g.condition for g in part.study.state.groups.values()][0] is None
        assert part.study.state.groups["g2"].condition in ("one", "two")
    assert sorted(Store(str(db)).run("study-pilot").config["conditions"]) == ["one", "two"]


def test_a_file_stored_before_conditions_existed_is_the_same_file(db: Path) -> None:
    """A study served before studies had conditions stored its file without the key: served again with the same
    file, nothing has changed (no --accept-changes asked)."""
    import json
    import sqlite3

    plain = with_conditions()
    del plain["conditions"]
    with serving(db, plain):
        pass
    with sqlite3.connect(db) as conn:
        [(config,)] = conn.execute("SELECT config FROM studies WHERE id = 'pilot'").fetchall()
        stored = json.loads(config)
        assert stored.pop("conditions") == []
        conn.execute("UPDATE studies SET config = ? WHERE id = 'pilot'", (json.dumps(stored),))
    with serving(db, plain) as (_, part):
        assert part.study.accepted_changes == []


def test_a_condition_no_group_played_may_go_and_a_refused_file_is_never_recorded(db: Path) -> None:
    with serving(db, with_conditions()) as (client, part):
        play_through(client, "first")
        begun = part.study.state.groups["g1"].condition
    kept = [c for c in with_conditions()["conditions"] if c["name"] == begun]
    with serving(db, {**with_conditions(), "conditions": kept}, accept_changes=True) as (_, part):
        assert [c.name for c in part.study.file.conditions] == [begun]
    assert sorted(Store(str(db)).run("study-pilot").config["conditions"]) == [begun]
    with pytest.raises(ConfigError, match=rf"conditions\.{begun}"):  # the played one cannot go
        with serving(db, {**with_conditions(), "conditions": []}, accept_changes=True):
            pass
    with serving(db, {**with_conditions(), "conditions": kept}) as (_, part):  # the stored file is still this
        assert part.study.accepted_changes == []
