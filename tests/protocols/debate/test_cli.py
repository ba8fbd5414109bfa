"""The debate commands as a user runs them: generate, run (scripted and the real embedded model), report."""

import json
import os
import subprocess
import sys

import pytest

from lexicoord.tasks.tabletop import generate
from tests.cli.test_cli import lexicoord


def test_generate_is_seeded_jsonl_of_pairs(tmp_path) -> None:
    out = lexicoord("debate", "generate", "-n", "3", "--seed", "9").stdout
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines == [p.model_dump() for p in generate(3, seed=9)]
    assert {line["type"] for line in lines} == {"numerical", "attribute", "spatial"} and len(lines) == 9
    path = tmp_path / "sub" / "pairs.jsonl"
    lexicoord("debate", "generate", "-n", "3", "--seed", "9", "-o", str(path))
    assert path.read_text() == out


def test_a_scripted_study_runs_resumes_and_reports(tmp_path) -> None:
    db = str(tmp_path / "d.db")
    args = ["debate", "run", "-m", "scripted/random", "-m", "scripted/first", "-n", "1", "--rounds", "3",
            "--run", "s", "--db", db]
    first = lexicoord(*args)
    # 6 instructions x (2 single + 2 debates, each model leading once).
    assert "24 done, 0 failed" in first.stderr
    again = lexicoord(*args)
    assert "0 done, 0 failed, 24 already done" in again.stderr, "re-running resumes instead of replaying"
    out = tmp_path / "rep"
    report = lexicoord("debate", "report", "s", "--out", str(out), "--db", db)
    for needle in ("Single(random)", "Debate(first)", "false alarms", "Table 1", "Table 2"):
        assert needle in report.stdout, needle
    stats = json.loads((out / "stats.json").read_text())
    assert stats["episodes"] == 24 and len(stats["configs"]) == 4
    assert (out / "fig2_overall_success.png").is_file() and (out / "fig7_non_consensus.svg").is_file()
    assert "Transcripts" in (out / "report.html").read_text()
    shown = lexicoord("runs", "show", "s", "--transcript", "--db", db).stdout
    assert "leader proposes" in shown and ("agrees" in shown or "disagrees" in shown)


def test_a_users_own_instructions_and_one_condition(tmp_path) -> None:
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"id": "tea", "instruction": "Bring me the cup.", "ambiguous": True, "type": "referential",
                               "context": "A kitchen with a red cup and a blue cup.",
                               "slot": {"name": "object", "vague": "the cup", "ask_about": "which cup",
                                        "cues": ["which cup", "red", "blue"]}}) + "\n")
    db = str(tmp_path / "o.db")
    run = lexicoord("debate", "run", "-m", "scripted/first", "--dataset", str(own), "--condition", "single",
                    "--run", "own", "--db", db)
    assert "1 done, 0 failed" in run.stderr
    export = lexicoord("runs", "export", "own", "--db", db).stdout
    [call] = [json.loads(line) for line in export.splitlines() if '"type": "model_call"' in line]
    assert "A kitchen with a red cup and a blue cup." in call["messages"][-1]["content"]


def test_a_judge_at_a_closed_port_is_reported_as_failed_in_the_terminal_and_the_files(tmp_path) -> None:
    from tests.conftest import free_port

    db = str(tmp_path / "j.db")
    env = {"OPENAI_COMPATIBLE_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}  # nothing listens there
    lexicoord("debate", "run", "-m", "scripted/random", "-n", "1", "--condition", "single", "--judge",
              "openai-compatible/judge", "-o", "max_retries=0", "--run", "jr", "--db", db, env=env)
    out = tmp_path / "rep"
    shown = lexicoord("report", "jr", "--out", str(out), "--db", db).stdout
    judge = json.loads((out / "stats.json").read_text())["judge"]
    assert judge["asked"] > 0 and judge["failed"] == judge["asked"] and judge["judged"] == 0
    assert f"{judge['asked']} of {judge['asked']} questions" in shown and "Cannot reach" in shown
    assert "not used" not in shown
    page = (out / "report.html").read_text()
    transcripts = page.split("<h2>Transcripts</h2>")[1]
    assert transcripts.count("the judge failed") == judge["asked"] and "does not ask about it" not in page
    transcript = lexicoord("runs", "show", "jr", "--transcript", "--db", db).stdout
    assert transcript.count("the judge failed (Cannot reach") == judge["asked"]


def test_bad_input_is_a_clear_error(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "instruction": "Go.", "ambiguous": "perhaps"}\nnot json\n')
    db = ["--db", str(tmp_path / "x.db")]
    cases = [
        (["debate", "run", "--condition", "vote", *db], "Unknown condition(s) vote"),
        (["debate", "run", "-m", "smollm2", *db], "not of the form provider/model"),
        (["debate", "run", "-m", "scripted/first", "-m", "scripted/first", *db], "named twice"),
        (["debate", "run", "--dataset", str(bad), *db], "has 2 bad line(s): line 1: ambiguous"),
        (["debate", "run", "--dataset", str(tmp_path / "none.jsonl"), *db], "no file or folder at"),
        (["debate", "run", "-m", "nope/model", "-n", "1", *db], "nope"),
        (["debate", "run", "-m", "scripted/first", "--judge", "openai/gpt-4o-mini", "-n", "1", *db], "OPENAI_API_KEY"),
        (["debate", "report", "missing", *db], "No run 'missing'"),
        (["debate", "generate", "-n", "100000"], "ask for fewer"),
    ]
    for args, needle in cases:
        result = lexicoord(*args, check=False)
        assert result.returncode == 1 and needle in result.stderr, (args, result.stderr)


@pytest.mark.embedded
def test_a_real_debate_on_the_embedded_model_end_to_end(tmp_path) -> None:
    db = str(tmp_path / "e.db")
    run = lexicoord("debate", "run", "-n", "1", "--items", "2", "--rounds", "2", "--max-tokens", "120",
                    "--run", "emb", "--db", db, "--no-cache")
    assert "4 done, 0 failed" in run.stderr
    out = tmp_path / "rep"
    lexicoord("debate", "report", "emb", "--out", str(out), "--db", db)
    stats = json.loads((out / "stats.json").read_text())
    assert [c["config"] for c in stats["configs"]] == ["Single(smollm2-135m)", "Debate(smollm2-135m)"]
    export = [json.loads(line) for line in lexicoord("runs", "export", "emb", "--db", db).stdout.splitlines()]
    calls = [e for e in export if e.get("type") == "model_call"]
    assert len(calls) >= 2 + 2 * 3 and all(c["usage"]["completion_tokens"] > 0 for c in calls)
    proposals = [e for e in export if e.get("type") == "proposal"]
    assert proposals and all(p["verdict"] in ("clear", "ambiguous") and p["reasoning"] for p in proposals
                             if not p.get("failure"))
    assert {p["agent"] for p in proposals} >= {"smollm2-135m"}
    assert "<svg" in (out / "report.html").read_text()


@pytest.mark.embedded
def test_a_debate_mixing_the_embedded_model_and_a_real_openai_compatible_server(tmp_path, llama_server) -> None:
    """Rotation across providers: each model leads once, the other two seats follow, over HTTP and in-process."""
    db = str(tmp_path / "m.db")
    run = lexicoord("debate", "run", "-m", "local/smollm2-135m", "-m", "llamacpp/smollm2", "-n", "1", "--items", "1",
                    "--rounds", "1", "--max-tokens", "80", "--condition", "debate", "--run", "mix", "--db", db,
                    "--no-cache", env={"LLAMACPP_BASE_URL": llama_server})
    assert "2 done, 0 failed" in run.stderr
    export = [json.loads(line) for line in lexicoord("runs", "export", "mix", "--db", db).stdout.splitlines()]
    outcomes = [e["outcome"] for e in export if e.get("type") == "outcome"]
    assert sorted(o["leader_model"] for o in outcomes) == ["llamacpp/smollm2", "local/smollm2-135m"]
    calls = [e for e in export if e.get("type") == "model_call"]
    assert {c["model"] for c in calls} == {"llamacpp/smollm2", "local/smollm2-135m"}
    assert all(c["usage"]["completion_tokens"] for c in calls)


def _play(tmp_path, *args: str, answers: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "debate", "play", *args, "--seed", "1", "--timeout", "10",
         "--db", str(tmp_path / "p.db")],
        input=answers, capture_output=True, text=True, timeout=240, env={**os.environ, "COLUMNS": "200"},
    )


def test_a_person_leads_a_debate_in_the_terminal(tmp_path) -> None:
    # reasoning, verdict (2 = ambiguous), question; the scripted followers agree (their first stance).
    result = _play(tmp_path, "--model", "scripted/first",
                   answers="The quantity is vague.\n2\nHow many blocks do you mean?\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Instruction:" in out and "your proposal" in out
    assert "Debate ended: consensus after 1 round(s); final verdict ambiguous, question: How many blocks" in out
    export = lexicoord("runs", "export", "play-debate-", "--db", str(tmp_path / "p.db")).stdout
    [proposal] = [json.loads(line) for line in export.splitlines() if '"type": "proposal"' in line]
    assert proposal["agent"] == "you" and proposal["question"] == "How many blocks do you mean?"
    assert not [line for line in export.splitlines() if '"type": "model_call"' in line and '"agent": "you"' in line]


def test_a_person_follows_and_too_long_text_is_asked_again(tmp_path) -> None:
    long = "x" * 701
    # stance 2 (disagree), a reasoning over the 700-character limit (refused, asked again), then a short one.
    result = _play(tmp_path, "--role", "follower", "--model", "scripted/first", "--rounds", "1",
                   answers=f"2\n{long}\nToo vague.\nWhich blocks?\n")
    assert result.returncode == 0, result.stderr
    assert "the limit is 700" in result.stdout
    export = lexicoord("runs", "export", "play-debate-", "--db", str(tmp_path / "p.db")).stdout
    mine = [json.loads(line) for line in export.splitlines() if '"type": "feedback"' in line and '"agent": "you"' in line]
    assert [(f["stance"], f["reasoning"], f["alternative"]) for f in mine] == [("disagree", "Too vague.", "Which blocks?")]
    assert mine[0]["audience"]["agents"] == ["m1", "you"], "feedback goes to the leader, and stays with its author"


def test_every_run_reports_through_one_command(tmp_path) -> None:
    db = str(tmp_path / "r.db")
    lexicoord("debate", "run", "-m", "scripted/first", "-n", "1", "--condition", "single", "--run", "amb", "--db", db)
    lexicoord("coordination", "run", "-a", "l=sim:first", "-a", "p=sim:first", "--items", "2", "--run", "crd", "--db", db)
    amb = lexicoord("report", "amb", "--out", str(tmp_path / "amb"), "--db", db).stdout
    crd = lexicoord("report", "crd", "--out", str(tmp_path / "crd"), "--db", db).stdout
    assert "Single(first)" in amb and (tmp_path / "amb" / "fig2_overall_success.png").is_file()
    assert "first-round convergence" in crd and (tmp_path / "crd" / "depth_distribution.svg").is_file()
    listed = lexicoord("protocols").stdout
    assert "coordination" in listed and "debate" in listed


@pytest.mark.embedded
def test_a_person_follows_an_embedded_leader(tmp_path) -> None:
    result = _play(tmp_path, "--role", "follower", "--followers", "1", "--rounds", "1",
                   answers="1\nI agree with the proposal.\n\n")
    assert result.returncode == 0, result.stderr
    assert "m1 proposes" in result.stdout and "Debate ended:" in result.stdout


def test_an_empty_line_is_asked_again_and_the_command_ends_with_the_game(tmp_path) -> None:
    """Standard input stays open (a person at a terminal): the command must still end when the game does."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lexicoord.cli.app", "debate", "play", "-m", "scripted/first", "--seed", "1",
         "--timeout", "30", "--db", str(tmp_path / "p.db")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.stdin is not None
    proc.stdin.write("The quantity is vague.\n\n2\nHow many?\n")  # the empty line at the verdict: asked again
    proc.stdin.flush()
    try:
        proc.wait(timeout=60)  # stdin is never closed
    finally:
        if proc.poll() is None:
            proc.kill()
    stdout = proc.stdout.read() if proc.stdout else ""
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert "type a number from 1 to 2" in stdout and "Debate ended: consensus" in stdout


def test_defaults_are_the_papers_and_items_is_a_sample_across_types(tmp_path) -> None:
    from lexicoord.runs.store import Store

    db = str(tmp_path / "d.db")
    run = lexicoord("debate", "run", "-m", "scripted/first", "--items", "3", "--no-twins", "--condition", "single",
                    "--concurrency", "2", "--run", "st", "--db", db)
    assert "3 done, 0 failed" in run.stderr
    config = Store(db).run("st").config
    assert config["dataset"] == "generated:20/type seed 0", "20 pairs per type by default, as in the paper"
    assert config["runtime"] == {"concurrency": [2]}
    again = lexicoord("debate", "run", "-m", "scripted/first", "--items", "3", "--no-twins", "--condition", "single",
                      "--concurrency", "1", "--run", "st", "--db", db)
    assert "3 already done" in again.stderr, "a resume at another concurrency is allowed"
    assert Store(db).run("st").config["runtime"] == {"concurrency": [2, 1]}
    report = lexicoord("debate", "report", "st", "--out", str(tmp_path / "rep"), "--db", db).stdout
    stats = json.loads((tmp_path / "rep" / "stats.json").read_text())
    assert stats["types"] == ["attribute", "numerical", "spatial"], "three instructions, one of each type"
    assert stats["concurrency"] == [2, 1] and "concurrency" in report
    assert "detection (the paper's success)" in report and "right-slot question" in report
