"""`lexicoord gate eval`: policies on a benchmark with a simulated person, stored, resumable, reported.

Scripted models check the rules (who may see what, which seat answered, what the judge decided); the embedded
model checks that the whole path runs on a real model from a fresh machine.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lexicoord.cli.app import app
from lexicoord.models.types import ChatMessage, GenerateConfig
from lexicoord.runs.store import Store
from tests.gate.conftest import proposal, scripted

EXPERIMENTS = Path(__file__).parents[3] / "experiments"
KNOWNO = f"knowno:{EXPERIMENTS / 'smoke' / 'knowno.txt'}"
AMBIK = f"ambik:{EXPERIMENTS / 'smoke' / 'ambik.csv'}"


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_no_prompt_before_the_question_holds_the_gold_fields_and_the_person_is_simulated(tmp_path: Path) -> None:
    prompts: list[str] = []

    def model(messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, object]:
        text = "\n".join(m.content for m in messages)
        prompts.append(text)
        if "The person answered" in text:
            return proposal("clear")
        return proposal("ambiguous", "Which pan should I use?")

    db = str(tmp_path / "runs.db")
    invoke("gate", "eval", "--dataset", AMBIK, "--policy", "single", "--model", scripted(model), "--db", db,
           "--run", "ev", "--no-cache")
    before = [p for p in prompts if "The person answered" not in p]
    assert len(before) == 4  # one first look per item
    # the readings offered are the seats' to see; the gold answer and which reading is meant are not
    for secret in ("Use the nonstick pan.", "The ceramic bowl; never the metal one.", "user_intent", "gold"):
        assert not any(secret in p for p in before), secret
    assert any("Use the nonstick pan." in p for p in prompts if "The person answered" in p)  # after it answered
    store = Store(db)
    for record, events in store.iter_run_events("ev"):
        assert any(s["kind"] == "simulated" and s["name"] == "simulated-person" for s in record.spec["lineup"])
        answers = [e for e in events if e.type == "gate_answer"]
        assert answers and all(e.agent == "simulated-person" for e in answers)
        assert record.outcome and record.outcome["status"] == "clear"


def test_the_report_gives_every_metric_with_its_denominator_and_the_judge(tmp_path: Path) -> None:
    def model(messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, object]:
        text = "\n".join(m.content for m in messages)
        if "Does the question ask the person" in text:
            return {"verdict": "yes"}
        if "The person answered" in text or "Put the banana" in text or "something baked" in text:
            return proposal("clear")
        return proposal("ambiguous", "Which one do you mean?")

    name = scripted(model)
    db = str(tmp_path / "runs.db")
    invoke("gate", "eval", "--dataset", KNOWNO, "--policy", "single", "--model", name, "--judge", name, "--db", db,
           "--run", "ev", "--no-cache")
    out = tmp_path / "report"
    shown = invoke("report", "ev", "--db", db, "--out", str(out))
    assert "Policies side by side" in shown and "By ambiguity type" in shown
    rows = list(csv.DictReader((out / "checks.csv").open(encoding="utf-8")))
    by_id = {r["item_id"]: r for r in rows}
    assert len(rows) == 4
    # the two ambiguous tasks asked and succeeded (the person chose); the two clear ones did not ask
    assert by_id["knowno-knowno-0"]["asked"] == "True" and by_id["knowno-knowno-0"]["success"] == "1.0"
    assert by_id["knowno-knowno-1"]["asked"] == "False" and by_id["knowno-knowno-1"]["success"] == "1.0"
    assert by_id["knowno-knowno-0"]["about_judge"] == "True" and by_id["knowno-knowno-0"]["judge"] == name
    # "Which one do you mean?" names neither mug: the rule says no (the readings offered beside it are not read)
    assert by_id["knowno-knowno-0"]["about_rule"] == "False"
    # the judge's call is the evaluation's, not the gate's: one call for the check that asked and then cleared
    assert by_id["knowno-knowno-0"]["model_calls"] == "2" and by_id["knowno-knowno-1"]["model_calls"] == "1"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "correct help" in page and "false alarms" in page and "2/2" in page and "0/2" in page
    assert f"by the judge model {name}" in page
    assert (out / "policies.png").stat().st_size > 0


def test_a_conformal_policy_without_a_threshold_is_refused_before_anything_runs(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["gate", "eval", "--dataset", KNOWNO, "--policy", "conformal", "--db",
                                      str(tmp_path / "r.db")])
    assert result.exit_code != 0 and "threshold" in str(result.exception)


def test_a_dataset_that_is_not_a_benchmark_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["gate", "eval", "--dataset", f"coarsewsd:{tmp_path}", "--db",
                                      str(tmp_path / "r.db")])
    assert result.exit_code != 0 and "knowno:PATH or ambik:PATH" in str(result.exception)


@pytest.mark.embedded
def test_every_policy_on_the_embedded_model_resumes_and_reports(tmp_path: Path) -> None:
    config = tmp_path / "gate.toml"
    config.write_text('[gate]\npolicy = "conformal"\nmodels = ["local/smollm2-135m"]\nqhat = 0.8\n'
                      'calibrated_model = "local/smollm2-135m"\nrounds = 1\nfollowers = 1\nplayers = 2\n',
                      encoding="utf-8")
    db = str(tmp_path / "runs.db")
    args = ["gate", "eval", "--dataset", KNOWNO, "--config", str(config), "--db", db, "--run", "ev", "--items", "1"]
    for policy in ("single", "debate", "coalition", "conformal"):
        args += ["--policy", policy]
    invoke(*args)
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "4 already done" in again.output.replace("\n", " "), again.output
    out = tmp_path / "report"
    invoke("report", "ev", "--db", db, "--out", str(out))
    numbers = json.loads((out / "gate.json").read_text())
    assert numbers["checks"] == 4
    rows = list(csv.DictReader((out / "checks.csv").open(encoding="utf-8")))
    assert sorted({r["policy"] for r in rows}) == ["coalition", "conformal", "debate", "single"]
    assert all(r["status"] in ("clear", "refuse", "error") for r in rows)
    conformal = [r for r in rows if r["policy"] == "conformal"]
    assert all(r["set_size"] not in ("", None) for r in conformal)


def test_tasks_of_the_calibration_source_are_left_out_and_counted() -> None:
    calibration = f"knowno:{EXPERIMENTS / 'smoke' / 'knowno-calibration.txt'}"
    shown = " ".join(invoke("gate", "eval", "--dataset", KNOWNO, "--exclude", calibration, "--dry-run").split())
    assert "items: 3" in shown and "skipped: 1 tasks also in knowno-calibration.txt" in shown
    assert "items: 4" in " ".join(invoke("gate", "eval", "--dataset", KNOWNO, "--dry-run").split())
