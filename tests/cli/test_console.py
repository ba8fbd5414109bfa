"""Output written to a file or a pipe keeps whole lines: names, paths and tables are not folded at 80 columns."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lexicoord.cli.console import WIDE, console_for


def _lexicoord(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # as a job's log or a pipe has it
    return subprocess.run([sys.executable, "-m", "lexicoord.cli.app", *args], capture_output=True, text=True,
                          timeout=300, env=env, check=False)


def test_a_table_and_a_store_path_written_to_a_pipe_are_not_folded(tmp_path: Path) -> None:
    folder = tmp_path / "a-rather-long-folder-name-for-the-store" / "with-another-long-subfolder-name-inside-it"
    folder.mkdir(parents=True)
    db = str(folder / "runs.db")
    empty = _lexicoord("runs", "list", "--db", db)
    assert any(db in line for line in empty.stdout.splitlines()), empty.stdout  # the path whole, on one line
    name = "a-run-with-quite-a-long-name-so-that-the-table-is-wider-than-eighty-columns"
    played = _lexicoord("coordination", "run", "--model", "scripted/first", "--items", "1", "--db", db, "--run", name)
    assert played.returncode == 0, played.stderr
    assert f"lexicoord report {name}" in played.stdout.splitlines()[-1]
    listed = _lexicoord("runs", "list", "--db", db).stdout.splitlines()
    row = next(line for line in listed if name in line)
    assert "coordination" in row and "finished" in row and len(row) > 80


def test_a_terminals_width_or_columns_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert console_for().width == WIDE and console_for(stderr=True).width == WIDE
    monkeypatch.setenv("COLUMNS", "120")
    assert console_for().width == 120 and console_for(stderr=True).width == 120
