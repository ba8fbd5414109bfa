"""``lexicoord werewolf`` as a user runs it: paired conditions, resume, the report and its replay, a person at
the keyboard, clear errors; and a real game on the embedded model through to the report."""

import json
import subprocess
import sys

import pytest

from tests.cli.test_cli import lexicoord


def test_paired_games_run_resume_and_report(tmp_path) -> None:
    db = ["--db", str(tmp_path / "w.db")]
    args = ["werewolf", "run", "-m", "scripted/random", "--games", "2", "--run", "w", *db]
    assert "4 done, 0 failed" in lexicoord(*args).stderr
    assert "0 done, 0 failed, 4 already done" in lexicoord(*args).stderr
    out = lexicoord("werewolf", "report", "w", *db, cwd=tmp_path).stdout
    assert "lexical grounding (Table 7)" in out and "matched checkpoints (Table 6)" in out
    stats = json.loads((tmp_path / "reports" / "w" / "stats.json").read_text())
    assert {r["condition"]: r["games"] for r in stats["results"]} == {"origin": 2, "cogent": 2}
    from lexicoord.protocols.werewolf.state import game_item

    assert sorted(m["seed"] for m in stats["matched"]) == sorted(game_item(0, i)["seed"] for i in range(2)), \
        "each ORIGIN game is paired with its COGENT twin"
    page = (tmp_path / "reports" / "w" / "report.html").read_text()
    assert "docs/protocols/werewolf.md" in page and "README" not in page, "the definitions are in the docs"
    assert page.count("what they knew</summary>") == 4 * 8 and "[the wolves]" in page and "[moderator only]" in page
    export = [json.loads(x) for x in lexicoord("runs", "export", "w", *db).stdout.splitlines()]
    roles = {}
    for e in export:
        if e.get("type") == "ww_role":
            roles.setdefault(e["episode_id"], []).append(e["role"])
    deals = [sorted(r) for r in roles.values()]
    assert all(d == sorted(["werewolf"] * 2 + ["seer", "witch", "guard"] + ["villager"] * 3) for d in deals)


def test_a_run_dealt_by_the_older_seed_rule_is_refused_on_resume_not_mixed(tmp_path) -> None:
    """Game seeds now come from the run's seed by a one-way function: a run begun under the older rule would get
    other deals for its new games, so a resume is refused in one sentence instead of mixing the two."""
    import sqlite3

    db = ["--db", str(tmp_path / "w.db")]
    args = ["werewolf", "run", "-m", "scripted/random", "--games", "1", "--run", "old", *db]
    assert "2 done, 0 failed" in lexicoord(*args).stderr
    with sqlite3.connect(tmp_path / "w.db") as conn:  # as a run begun before the rule changed has it
        [(config,)] = conn.execute("SELECT config FROM runs WHERE id = 'old'").fetchall()
        stored = json.loads(config)
        assert stored.pop("deals") == "sha256"
        conn.execute("UPDATE runs SET config = ? WHERE id = 'old'", (json.dumps(stored),))
    grown = lexicoord("werewolf", "run", "-m", "scripted/random", "--games", "2", "--run", "old", *db, check=False)
    assert grown.returncode != 0 and "deals" in grown.stderr + grown.stdout, grown.stderr


def test_rule_flags_and_bad_input_are_one_sentence(tmp_path) -> None:
    db = ["--db", str(tmp_path / "x.db")]
    ok = lexicoord("werewolf", "run", "-m", "scripted/random", "--rule", "max_days=1", "--rule", "exile_tie=random",
                   "--condition", "origin", "--run", "r", *db)
    assert "1 done, 0 failed" in ok.stderr
    cases = [(["--rule", "moon=full"], "Unknown rule 'moon=full'"),
             (["--rule", "exile_rule=unanimous"], "settings.exile_rule"),
             (["--condition", "chaos"], "Unknown condition(s) chaos"),
             (["--players", "4", "--rule", "wolves=2"], "cannot hold 2 wolves")]
    for extra, needle in cases:
        result = lexicoord("werewolf", "run", "-m", "scripted/random", "--run", "bad", *extra, *db, check=False)
        assert result.returncode != 0 and needle in result.stderr + result.stdout, (extra, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_person_plays_a_seat_at_the_keyboard_and_sees_only_their_own(tmp_path) -> None:
    """Every answer is 'abstain' (a legal choice, and a short speech); the person is Player 1 and learns only
    their own role."""
    moves = "abstain\n" * 200
    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "werewolf", "play", "--seat", "Player 1", "-m", "scripted/random",
         "--seed", "3", "--rule", "max_days=2", "--timeout", "5", "--db", str(tmp_path / "p.db")],
        input=moves, capture_output=True, text=True, timeout=120, env={"COLUMNS": "200", **__import__("os").environ})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "You are Player 1" in out and "Start: you are the" in out and "Game over:" in out
    own = out.split("Start: you are the ", 1)[1].split(".", 1)[0]
    others = [f"Start: you are the {r}" for r in ("werewolf", "seer", "witch", "guard", "villager") if r != own]
    assert not any(o in out for o in others), "only the person's own role is shown"


@pytest.mark.embedded
def test_a_real_game_on_the_embedded_model_through_to_the_report(tmp_path) -> None:
    """SmolLM2-135M plays both conditions of one short game; the record and report must hold, not the play."""
    db = ["--db", str(tmp_path / "e.db")]
    # Four seats (the wolf, the seer, the guard, a villager) and no witch, whose poison could end the game before
    # the day: one night kills at most one, so the day is played.
    run = lexicoord("werewolf", "run", "--games", "1", "--players", "4", "--rule", "wolves=1", "--rule", "witches=0",
                    "--rule", "max_days=1", "--rule", "max_tokens=48", "--run", "e", *db, cwd=tmp_path)
    assert "2 done, 0 failed" in run.stderr, run.stderr
    out = lexicoord("werewolf", "report", "e", *db, cwd=tmp_path).stdout
    stats = json.loads((tmp_path / "reports" / "e" / "stats.json").read_text())
    assert sum(r["games"] for r in stats["results"]) == 2 and stats["matched"], out
    # the wolf's, the seer's and the guard's night moves; at least three living seats speak and vote
    assert all(r["mean_calls"] >= 3 + 3 + 3 for r in stats["results"]), "every living seat spoke and voted"
    export = [json.loads(x) for x in lexicoord("runs", "export", "e", *db).stdout.splitlines()]
    calls = [e for e in export if e.get("type") == "model_call"]
    assert calls and all(c["model"] == "local/smollm2-135m" and c["usage"]["completion_tokens"] for c in calls)


@pytest.mark.embedded
def test_a_person_plays_among_embedded_model_players(tmp_path) -> None:
    """The default play: the other seats on the embedded model; the person abstains and stays silent."""
    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "werewolf", "play", "--seat", "Player 2", "--players", "4",
         "--seed", "5", "--rule", "wolves=1", "--rule", "max_days=1", "--rule", "max_tokens=32", "--timeout", "30",
         "--db", str(tmp_path / "p.db")],
        input="abstain\n" * 60, capture_output=True, text=True, timeout=300,
        env={**__import__("os").environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "You are Player 2" in result.stdout and "Game over:" in result.stdout
    export = [json.loads(x) for x in subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "runs", "export", "play-werewolf", "--db", str(tmp_path / "p.db")],
        capture_output=True, text=True, check=True).stdout.splitlines()]
    calls = [e for e in export if e.get("type") == "model_call"]
    assert calls and {c["model"] for c in calls} == {"local/smollm2-135m"} and "Player 2" not in {c["agent"] for c in calls}
