"""The coordination commands as a user runs them."""

import json

import pytest

from tests.cli.test_cli import lexicoord


def test_campaign_with_simulated_people_then_report(tmp_path) -> None:
    db = str(tmp_path / "c.db")
    args = ["coordination", "run", "-a", "lead=sim:intended", "-a", "p=sim:noisy:0.3", "-a", "q=sim:majority",
            "--items", "12", "--repetitions", "2", "--run", "sims", "--db", db]
    first = lexicoord(*args)
    assert "24 done, 0 failed" in first.stderr
    again = lexicoord(*args)
    assert "0 done, 0 failed, 24 already done" in again.stderr, "re-running resumes instead of replaying"
    out = tmp_path / "rep"
    report = lexicoord("coordination", "report", "sims", "--out", str(out), "--db", db)
    assert "first-round convergence" in report.stdout and "simulated" in report.stdout
    stats = json.loads((out / "stats.json").read_text())
    assert stats["games"] == 24 and stats["converged"] + stats["failed"] == 24
    assert (out / "depth_distribution.png").is_file() and (out / "depth_distribution.svg").is_file()
    assert "<svg" in (out / "report.html").read_text()


def test_bad_lineups_and_datasets_are_clear(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\nnot json\n')
    cases = [
        (["coordination", "run", "-a", "x=sim:telepathy", "-a", "y=sim:first"], "Unknown simulated policy 'telepathy'"),
        (["coordination", "run", "-a", "only=sim:first"], "at least two agents"),
        (["coordination", "run", "-a", "x=sim:first", "-a", "x=sim:first"], "same name"),
        (["coordination", "run", "--dataset", str(bad)], "has 2 bad line(s): line 1:"),
        (["coordination", "report", "nothing-here", "--db", str(tmp_path / "e.db")], "No run 'nothing-here'"),
    ]
    for args, needle in cases:
        result = lexicoord(*args, check=False)
        assert result.returncode == 1 and needle in result.stderr, (args, result.stderr)


def test_play_in_the_terminal_as_leader(tmp_path) -> None:
    import os
    import subprocess
    import sys

    db = str(tmp_path / "p.db")
    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "play", "--model", "scripted/first", "--item",
         "release-01", "--seed", "1", "--timeout", "10", "--db", db],
        input="1\nlet go\n1\nbecause\n", capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "Converged on 'let go of it' at clarification depth 0" in result.stdout
    export = lexicoord("runs", "export", "play-", "--db", db).stdout
    choices = [json.loads(line) for line in export.splitlines() if '"type": "choice"' in line]
    you = [c for c in choices if c["agent"] == "you"]
    assert [c["move"] for c in you] == ["announcement", "choice"] and you[1]["agent_kind"] == "human"


def test_manual_mode_in_the_terminal(tmp_path) -> None:
    import os
    import subprocess
    import sys

    db = str(tmp_path / "m.db")
    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "play", "--model", "scripted/first", "--sentence",
         "Secure the load before the lift.", "--word", "secure", "--timeout", "10", "--seed", "3", "--db", db],
        input="guard it from theft\nloads get stolen\n\n2\nmine\n1\nok\n", capture_output=True, text=True,
        timeout=120, env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "Propose a meaning" in result.stdout and "The players propose:" in result.stdout
    export = lexicoord("runs", "export", "play-", "--db", db).stdout
    [episode] = [json.loads(line) for line in export.splitlines() if '"record": "episode"' in line]
    item = episode["spec"]["item"]
    assert "guard it from theft" in item["options"] and len(item["options"]) == 2, \
        "your proposal joins the merge; the two scripted proposals merge into one"
    mine = [p for p in item["proposals"] if "you" in p["proposers"]]
    assert [p["text"] for p in mine] == ["guard it from theft"] and mine[0]["justifications"] == ["loads get stolen"]
    assert sorted(a for p in item["proposals"] for a in p["proposers"]) == ["a1", "a2", "you"]
    assert episode["outcome"]["rounds"] >= 1


@pytest.mark.embedded
def test_a_short_real_campaign_on_the_embedded_model(tmp_path) -> None:
    db = str(tmp_path / "e.db")
    lexicoord("coordination", "run", "--agents", "2", "--items", "2", "--bound", "1", "--run", "emb", "--db", db, "--no-cache")
    out = tmp_path / "rep"
    lexicoord("coordination", "report", "emb", "--out", str(out), "--db", db)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["games"] == 2
    assert set(stats["revisions"]) == {"a1", "a2"} and stats["revisions"]["a1"]["model"] == "local/smollm2-135m"
    export = lexicoord("runs", "export", "emb", "--db", db).stdout
    calls = [json.loads(line) for line in export.splitlines() if '"type": "model_call"' in line]
    assert calls and all(c["usage"]["completion_tokens"] > 0 for c in calls)


def test_campaigns_refuse_people_and_bad_probabilities(tmp_path) -> None:
    for args, needle in [
        (["-a", "human", "-a", "y=sim:first"], "no people at the keyboard"),
        (["-a", "lead=sim:first", "-a", "p= human"], "no people at the keyboard"),
        (["-a", "x=sim:noisy:2", "-a", "y=sim:first"], "between 0 and 1"),
        (["-a", "x=sim:first:0.5", "-a", "y=sim:first"], "Only the noisy policy"),
    ]:
        result = lexicoord("coordination", "run", *args, "--items", "1", "--db", str(tmp_path / "x.db"), check=False)
        assert result.returncode == 1 and needle in result.stderr, (args, result.stderr)


def test_a_person_playing_sees_the_announcement_before_choosing(tmp_path) -> None:
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "play", "--role", "player", "--model", "scripted/first",
         "--item", "release-01", "--seed", "1", "--timeout", "10", "--db", str(tmp_path / "p.db")],
        input="1\nsame\n", capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("a1 (leader) announced: let go of it") < out.index("Round 1: choose")


def model_calls(db: str, run: str) -> list[dict]:
    export = lexicoord("runs", "export", run, "--db", db).stdout
    return [json.loads(line) for line in export.splitlines() if '"type": "model_call"' in line]


def test_campaign_generation_settings_and_a_model_leader_that_may_end(tmp_path) -> None:
    db = str(tmp_path / "g.db")
    lineup = ["-a", "lead=scripted/random", "-a", "p=sim:stubborn", "-a", "q=sim:random"]
    lexicoord("coordination", "run", *lineup, "--items", "8", "--run", "free", "--db", db, "--leader-may-end")
    export = lexicoord("runs", "export", "free", "--db", db).stdout
    episodes = [json.loads(line) for line in export.splitlines() if '"record": "episode"' in line]
    assert all(e["spec"]["settings"]["leader_may_end"] is True for e in episodes)
    reasons = {e["outcome"]["reason"] for e in episodes}
    assert "leader_ended" in reasons, reasons
    calls = model_calls(db, "free")
    # What the coordination page states `coordination run` sends: temperature 0.7 on every call, 160 tokens for a choice or the
    # announcement, 120 for the leader's clarification (which, here, also offers the end).
    assert calls and all(c["config"]["temperature"] == 0.7 for c in calls)
    moves = [c for c in calls if "choice" in c["config"]["json_schema"]["properties"]]
    clarifications = [c for c in calls if "statement" in c["config"]["json_schema"]["properties"]]
    assert moves and all(c["config"]["max_tokens"] == 160 for c in moves)
    assert clarifications and all(c["config"]["max_tokens"] == 120 for c in clarifications)
    assert all("end" in c["config"]["json_schema"]["properties"] for c in clarifications)

    lexicoord("coordination", "run", *lineup, "--items", "8", "--run", "bound", "--db", db)
    export = lexicoord("runs", "export", "bound", "--db", db).stdout
    episodes = [json.loads(line) for line in export.splitlines() if '"record": "episode"' in line]
    assert {e["outcome"]["reason"] for e in episodes} <= {"converged", "bound"}, "without the flag only the bound ends"
    assert not any("end" in c["config"]["json_schema"]["properties"] for c in model_calls(db, "bound")
                   if "statement" in c["config"]["json_schema"]["properties"])

    both = lexicoord("coordination", "run", *lineup, "--leader-may-end", "--no-clarify", "--db", db, check=False)
    assert both.returncode == 1 and "--leader-may-end" in both.stderr


def test_every_protocol_is_mounted_under_its_one_name_and_coord_is_a_hidden_short_form() -> None:
    from typer.testing import CliRunner

    from lexicoord.cli.app import app

    helped = CliRunner().invoke(app, ["--help"])
    listed = {line.split()[1] for line in helped.output.splitlines() if line.startswith("│ ") and len(line.split()) > 2}
    assert {"coordination", "debate", "cogent", "werewolf"} <= listed, helped.output
    assert "coord" not in listed and "ambiguity" not in listed
    short = CliRunner().invoke(app, ["coord", "run", "--help"])
    full = CliRunner().invoke(app, ["coordination", "run", "--help"])
    assert short.exit_code == full.exit_code == 0 and "--leader-may-end" in short.output


def test_a_person_whose_input_ends_is_noticed_at_once(tmp_path) -> None:
    import os
    import subprocess
    import sys
    import time

    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "play", "--role", "player", "--model", "scripted/first",
         "--item", "release-01", "--seed", "1", "--timeout", "120", "--db", str(tmp_path / "p.db")],
        input="", capture_output=True, text=True, timeout=110, env={**os.environ, "COLUMNS": "200"},
    )
    said = " ".join((result.stdout + result.stderr).split())
    assert "Standard input ended" in said, said
    assert time.monotonic() - started < 100, "the seat did not wait out its 120 s limit"
