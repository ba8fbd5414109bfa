"""The plugin's experiment plan (``tests/core/plugin_dist/same_word_game/experiment.py``) read by lexicoord's
``lexicoord run FILE``, in fresh processes with the distribution installed: its example file
(``plugin_dist/same-word.toml``, data beside it) runs at smoke scale and whole, resumes, grows, reports and
compares; its ``run`` command's flags are the same file (``--print-file``) and estimate it (``--dry-run``)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.core.test_plugin_distribution import DIST, SCRIPTED_WORD, installed, lexicoord  # noqa: F401 (fixture)

EXAMPLE = DIST / "same-word.toml"
THINGS = sum(1 for line in (DIST / "things.jsonl").read_text().splitlines() if line.strip())


@pytest.fixture
def env(installed, tmp_path: Path) -> dict[str, str]:  # noqa: F811
    """The installation with a store of this test's own, and the file's players on ``scripted/first``."""
    return {**installed, "LEXICOORD_DB": str(tmp_path / "runs.db"), "PLAYER": "scripted/first"}


def said(done) -> str:  # type: ignore[no-untyped-def]
    return done.stdout + done.stderr


def test_the_example_file_runs_at_smoke_scale_then_whole_and_reports(env, tmp_path: Path) -> None:
    smoke = lexicoord(env, "run", str(EXAMPLE), "--smoke", cwd=tmp_path)
    assert smoke.returncode == 0, said(smoke)
    assert "run same-word-smoke: 1 done, 0 failed" in said(smoke) and "report: lexicoord report same-word-smoke" in said(smoke)
    whole = lexicoord(env, "run", str(EXAMPLE), cwd=tmp_path)  # from another folder: the data is the file's own
    assert whole.returncode == 0 and f"run same-word: {THINGS * 2} done, 0 failed" in said(whole), said(whole)
    again = lexicoord(env, "run", str(EXAMPLE), cwd=tmp_path)
    assert f"0 done, 0 failed, {THINGS * 2} already done" in said(again), said(again)
    grown = lexicoord(env, "run", str(EXAMPLE), "--set", "grid.seats=[2, 3, 4]", cwd=tmp_path)  # its grows: seats
    assert f"{THINGS} done, 0 failed, {THINGS * 2} already done" in said(grown), said(grown)
    report = lexicoord(env, "report", "same-word", "--out", str(tmp_path / "r"))
    assert report.returncode == 0, said(report)
    stats = json.loads((tmp_path / "r" / "same_word.json").read_text())
    assert stats["games"] == THINGS * 3 and stats["agreed"] == THINGS * 3
    assert sorted(stats["by_seats"]) == ["2", "3", "4"]
    shown = lexicoord(env, "runs", "show", "same-word")
    assert SCRIPTED_WORD in shown.stdout and '"things":' in shown.stdout, said(shown)


def test_a_bad_file_is_refused_at_its_line(env, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(EXAMPLE.read_text().replace("seats = [2, 3]", "seats = [1, 3]").replace(
        'things = "things.jsonl"', 'things = "missing.jsonl"'))
    refused = lexicoord(env, "run", str(bad))
    assert refused.returncode == 2, said(refused)
    assert "grid.seats.0" in said(refused) and "missing.jsonl" in said(refused)


def test_the_run_commands_flags_are_a_file_and_a_dry_run(env, tmp_path: Path) -> None:
    flags = ["same-word", "run", "-m", "scripted/first", "-m", "scripted/random", "--things", str(DIST / "things.jsonl"),
             "--items", "2", "--seats", "2", "--seats", "3", "--run", "flags"]
    printed = lexicoord(env, *flags, "--print-file")
    assert printed.returncode == 0, said(printed)
    file = tomllib.loads(printed.stdout)
    assert file["protocol"] == "same-word" and file["name"] == "flags"
    assert file["models"] == {"players": ["scripted/first", "scripted/random"]}
    assert file["data"]["items"] == 2 and file["grid"] == {"seats": [2, 3]} and file["settings"] == {"max_tokens": 20}
    dry = lexicoord(env, *flags, "--dry-run")
    assert dry.returncode == 0 and "run flags (same-word): 4 episodes" in dry.stdout, said(dry)
    # Seats take the models in turn (p1 first, p2 random, p3 first): per thing 1 + 2 calls to one, 1 + 1 to the other.
    calls = {cells[1].strip(): int(cells[2]) for line in dry.stdout.splitlines()
             if "│ scripted/" in line for cells in [line.split("│")]}
    assert calls == {"scripted/first": 6, "scripted/random": 4}, dry.stdout
    assert lexicoord(env, "runs", "show", "flags").returncode != 0, "neither ran anything"
    # The file printed runs as lexicoord run FILE, the same run the flags would make.
    (tmp_path / "flags.toml").write_text(printed.stdout)
    ran = lexicoord(env, "run", str(tmp_path / "flags.toml"))
    assert ran.returncode == 0 and "run flags: 4 done, 0 failed" in said(ran), said(ran)
    resumed = lexicoord(env, *flags)
    assert "0 done, 0 failed, 4 already done" in said(resumed), said(resumed)


def test_two_runs_compare_on_their_shared_things(env, tmp_path: Path) -> None:
    """The entry's outcomes: each game's cell (its seats) and whether all named it alike (the task's score)."""
    for name, model in (("alike", "scripted/first"), ("apart", "scripted/random")):
        done = lexicoord({**env, "PLAYER": model}, "run", str(EXAMPLE), "--set", f'name="{name}"')
        assert done.returncode == 0, said(done)
    compared = lexicoord(env, "compare", "alike", "apart", "--out", str(tmp_path / "c"))
    assert compared.returncode == 0, said(compared)
    result = json.loads((tmp_path / "c" / "comparison.json").read_text())
    rows = {(r["measure"], r["cell"]): r for r in result["rows"]}
    assert {cell for _, cell in rows} == {"seats=2", "seats=3", "all cells"}
    accuracy = rows[("accuracy (%)", "all cells")]
    assert (accuracy["pairs"], accuracy["a"], accuracy["b"]) == (THINGS * 2, 100.0, 0.0)
