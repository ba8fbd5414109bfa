"""``lexicoord run FILE`` as a user runs it: a pilot grown into the full run, the file a command line amounts to,
and the cost of a run before it starts."""

import json
import sqlite3
from pathlib import Path

import pytest

from tests.cli.test_cli import lexicoord

PILOT = """protocol = "coordination"
seed = 2

[models]
leader = "scripted/first"
p1 = "sim:noisy:0.3"
p2 = "${P2_SEAT:-sim:majority}"

[data]
items = 2

[settings]
clarification_bound = 1
"""


def test_a_pilot_grows_into_the_full_run_playing_only_the_new_episodes(tmp_path: Path) -> None:
    path = tmp_path / "pilot.toml"
    path.write_text(PILOT)
    db = str(tmp_path / "runs.db")
    first = lexicoord("run", str(path), "--db", db)
    assert "2 done, 0 failed" in first.stderr and "report: lexicoord report pilot" in first.stdout
    grown = lexicoord("run", str(path), "--db", db, "--set", "data.items=5", "--set", "grid.repetitions=2")
    assert "8 done, 0 failed, 2 already done" in grown.stderr, grown.stderr
    shrunk = lexicoord("run", str(path), "--db", db, check=False)
    assert shrunk.returncode == 1 and "already holds" in shrunk.stderr and "never shrinks" in shrunk.stderr
    changed = lexicoord("run", str(path), "--db", db, "--set", "data.items=5", "--set", "grid.repetitions=2",
                        "--set", "settings.clarification_bound=3", check=False)
    assert changed.returncode == 1 and "resume it with the same settings" in changed.stderr
    assert "settings.clarification_bound was 1 and is now 3" in " ".join(changed.stderr.split()), changed.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from episodes where run_id = 'pilot'").fetchone() == (10,)
        config = json.loads(con.execute("select config from runs where id = 'pilot'").fetchone()[0])
    assert config["items"] == 5 and config["repetitions"] == 2


def test_the_environment_fills_the_file_and_smoke_runs_apart(tmp_path: Path) -> None:
    path = tmp_path / "pilot.toml"
    path.write_text(PILOT + '\n[smoke]\n"data.items" = 1\n')
    db = str(tmp_path / "runs.db")
    smoke = lexicoord("run", str(path), "--db", db, "--smoke", env={"P2_SEAT": "scripted/random"})
    assert "1 done, 0 failed" in smoke.stderr and "lexicoord report pilot-smoke" in smoke.stdout
    with sqlite3.connect(db) as con:
        [(lineup,)] = con.execute("select config from runs where id = 'pilot-smoke'").fetchall()
    assert {"name": "p2", "model": "scripted/random"}.items() <= json.loads(lineup)["lineup"][2].items()


COMMANDS = [
    ["coordination", "run", "-a", "lead=scripted/first", "-a", "p=sim:noisy:0.2", "--items", "3", "--bound", "1",
     "--repetitions", "2", "--seed", "4", "--leader-may-end"],
    ["debate", "run", "-m", "scripted/first", "-m", "scripted/random", "--per-category", "2", "--rounds", "2",
     "--condition", "debate", "--judge", "scripted/first"],
    ["werewolf", "run", "-m", "scripted/random", "--wolves-model", "scripted/random", "--games", "2", "--players", "6",
     "--rule", "max_days=2", "--rule", "exile_tie=random", "--condition", "cogent"],
]


GSM8K = [{"question": "Ann has 3 pens and buys 4 more. How many pens has she?", "answer": "3 + 4 = 7\n#### 7"},
         {"question": "A box holds 12 eggs; 5 break. How many are whole?", "answer": "12 - 5 = 7\n#### 7"},
         {"question": "Tom reads 6 pages a day for 3 days. How many pages?", "answer": "6 * 3 = 18\n#### 18"}]
COMMANDS.append(["cogent", "run", "--task", "gsm8k", "--data", "{data}", "-m", "scripted/echo", "--items", "2", "-R", "1",
                 "-K", "1", "--coin-rounds", "1", "--variant", "single", "--variant", "cogent", "--slice-seed", "5"])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_command_line_is_a_file_that_makes_the_same_run(tmp_path: Path, command: list[str]) -> None:
    db = str(tmp_path / "runs.db")
    data = tmp_path / "gsm8k.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in GSM8K))
    command = [str(data) if c == "{data}" else c for c in command]
    text = lexicoord(*command, "--print-file").stdout
    assert text.startswith(f'protocol = "{command[0]}"'), text
    assert not (tmp_path / "runs.db").exists(), "--print-file runs nothing"
    path = tmp_path / "from-flags.toml"
    path.write_text(text)
    by_flags = lexicoord(*command, "--run", "by-flags", "--db", db)
    by_file = lexicoord("run", str(path), "--db", db)
    assert " 0 failed" in by_flags.stderr and " 0 failed" in by_file.stderr
    with sqlite3.connect(db) as con:
        rows = dict(con.execute("select id, config from runs").fetchall())
        keys = {run: {k for (k,) in con.execute("select key from episodes where run_id = ?", (run,))} for run in rows}
    assert json.loads(rows["by-flags"]) == json.loads(rows["from-flags"]), "the same config is stored"
    assert keys["by-flags"] == keys["from-flags"] and keys["by-flags"], "the same episodes are played"


def test_dry_run_counts_calls_tokens_and_cost_per_model_and_runs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(PILOT.replace('p2 = "${P2_SEAT:-sim:majority}"', 'p2 = "scripted/random"') +
                    '\n[prices."scripted/first"]\nprompt = 1000.0\ncompletion = 2000.0\n')
    db = tmp_path / "runs.db"
    out = lexicoord("run", str(path), "--dry-run", "--db", str(db)).stdout
    assert "2 episodes" in out and not db.exists()
    # Two rounds (bound 1): the leader announces, chooses twice and clarifies once; p2 chooses twice; per episode.
    lines = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
             for line in out.splitlines() if line.startswith("│ scripted/")}
    assert lines["scripted/first"][0] == "8" and lines["scripted/random"][0] == "4"
    prompt, completion = (int(c.replace(",", "")) for c in lines["scripted/first"][1:3])
    assert lines["scripted/first"][3] == f"{(prompt * 1000 + completion * 2000) / 1e6:,.4f}"
    assert lines["scripted/random"][3] == "no price in the file"


@pytest.mark.parametrize(("stem", "episodes", "chars"), [("gsm8k", 1500, 240), ("folio", 612, 487), ("mmlu", 1500, 454)])
def test_a_cogent_dry_run_before_the_data_is_on_disk_estimates_from_the_files_size_and_says_what_is_missing(
        stem: str, episodes: int, chars: int, tmp_path: Path) -> None:
    path = Path(__file__).parents[2] / "experiments" / f"cogent-table1-{stem}.toml"
    empty = tmp_path / "data"
    empty.mkdir()
    for env in ({"LEXICOORD_DATA": str(empty)}, {"LEXICOORD_DATA": ""}):
        out = lexicoord("run", str(path), "--dry-run", "--db", str(tmp_path / "runs.db"), env=env).stdout
        assert f"{episodes} episodes" in out and "data missing:" in out and f"of {chars} characters" in out, out
        assert "local/smollm2-135m" in out and not (tmp_path / "runs.db").exists()
    missing = lexicoord("run", str(path), "--db", str(tmp_path / "runs.db"), env={"LEXICOORD_DATA": str(empty)},
                        check=False)
    assert missing.returncode == 2 and "error:" in missing.stderr, "a real run still needs its data"


def test_a_dry_run_on_a_data_file_that_is_there_but_bad_shows_the_files_problem(tmp_path: Path) -> None:
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "test.jsonl").write_text('{"question": "How many?"\n', encoding="utf-8")
    path = Path(__file__).parents[2] / "experiments" / "cogent-table1-gsm8k.toml"
    bad = lexicoord("run", str(path), "--dry-run", env={"LEXICOORD_DATA": str(tmp_path)}, check=False)
    assert bad.returncode == 2 and "test.jsonl" in bad.stderr and "data missing" not in bad.stdout


PAPER_MODELS = """protocol = "debate"
name = "standing-in"
[models]
debaters = ["scripted/first"]
[paper_models]
"Llama3-8B" = "scripted/first"
[data]
items = 1
[settings]
rounds = 1
[grid]
conditions = ["single"]
[[published]]
source = "Figure 2"
metric = "success_rate"
cell = { condition = "single", type = "overall" }
value = 13.3
paper_model = "Llama3-8B"
[[published]]
source = "Figure 2"
metric = "success_rate"
cell = { condition = "single", type = "overall" }
value = 80.0
paper_model = "Gemma2-9B"
"""


def test_a_model_the_file_names_as_the_papers_gets_a_verdict_and_the_mapping_may_change_on_resume(
        tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(PAPER_MODELS)
    db = str(tmp_path / "runs.db")
    lexicoord("run", str(path), "--db", db)
    out = tmp_path / "report"
    lexicoord("report", "standing-in", "--db", db, "--out", str(out))
    table = (out / "report.html").read_text().split("published numbers beside this run", 1)[1].split("</table>")[0]
    rows = [[c.split("</td>")[0] for c in row.split("<td>")[1:]] for row in table.split("<tr>")[1:]]
    verdicts = {row[3]: row[-1] for row in rows if len(row) > 3}
    assert verdicts["13.3 (Llama3-8B)"] in {"yes", "no"}, verdicts
    assert verdicts["80 (Gemma2-9B)"] == "- (another model)", verdicts
    path.write_text(PAPER_MODELS.replace('"Llama3-8B" = "scripted/first"', '"Gemma2-9B" = "scripted/first"'))
    again = lexicoord("run", str(path), "--db", db)  # a note on the run, not a change to its episodes
    assert again.returncode == 0
    lexicoord("report", "standing-in", "--db", db, "--out", str(out))
    table = (out / "report.html").read_text().split("published numbers beside this run", 1)[1].split("</table>")[0]
    rows = [[c.split("</td>")[0] for c in row.split("<td>")[1:]] for row in table.split("<tr>")[1:]]
    assert {row[3]: row[-1] for row in rows if len(row) > 3}["13.3 (Llama3-8B)"] == "- (another model)"


def test_a_files_rate_limits_are_the_runs_budget_and_a_misspelt_model_stops_it_before_any_episode(
        tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    path = tmp_path / "limited.toml"
    path.write_text(PILOT + '\n[rate_limits."scripted/first"]\nrequests_per_minute = 6000\n')
    ran = lexicoord("run", str(path), "--db", db, env={"LEXICOORD_PROGRESS_SECONDS": "0.1"})
    assert "2 done, 0 failed" in ran.stderr
    with sqlite3.connect(db) as con:
        [(model, requests)] = con.execute("select model, spent_requests from rate_buckets where run_id = 'limited'")
        calls = con.execute("select sum(model_calls) from episodes where run_id = 'limited'").fetchone()[0]
    assert model == "scripted/first" and requests == calls > 0
    path.write_text('name = "typo"\n' + PILOT + '\n[rate_limits."scripted/frist"]\nrequests_per_minute = 6000\n')
    typo = lexicoord("run", str(path), "--db", db, check=False)
    assert typo.returncode != 0 and "rate_limits names scripted/frist" in " ".join(typo.stderr.split()), typo.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from episodes where run_id = 'typo'").fetchone() == (0,)
