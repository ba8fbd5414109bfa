"""What a careless or hostile user meets at the command line: one sentence and a non-zero exit, never a
traceback, and nothing left behind. The command runs in-process through its real entry point."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lexicoord.cli.app import main
from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider, register_script
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

ITEM = {"id": "bank-1", "sentence": "Meet me at the bank.", "word": "bank", "options": ["river", "money"],
        "intended": None, "open": True}


def run_cli(capsys, monkeypatch, *args: str) -> tuple[int, str]:
    """Exit code and everything printed, from ``lexicoord ARGS``."""
    monkeypatch.setattr(sys, "argv", ["lexicoord", *args])
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit) as stop:
        main()
    out = capsys.readouterr()
    code = stop.value.code if isinstance(stop.value.code, int) else 0
    return code, out.out + out.err


@pytest.fixture
def stored(tmp_path) -> tuple[str, str]:
    """A store with one finished coordination run, ``done``."""
    db = str(tmp_path / "runs.db")
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("s", lambda m, c: {"choice": "river", "justification": "water"})), "scripted/s")
    lineup = [AgentSpec(name=f"a{i}", model="scripted/s") for i in range(2)]
    runner = Runner(Store(db), CoordinationGame(), models=pool)
    import asyncio

    asyncio.run(runner.run("done", grid([ITEM], [lineup])))
    return db, "done"


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


def test_every_file_option_refuses_bad_paths_with_one_sentence(tmp_path, stored, capsys, monkeypatch) -> None:
    db, run = stored
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me", encoding="utf-8")
    a_folder = tmp_path / "folder"
    a_folder.mkdir()
    missing = tmp_path / "missing" / "out.jsonl"
    cases = [
        (["runs", "export", run, "-o", str(a_folder)], "is a folder"),
        (["runs", "export", run, "-o", str(missing)], "does not exist"),
        (["report", run, "--out", str(a_file)], "is a file"),
        (["coordination", "report", run, "--out", str(a_file)], "is a file"),
        (["debate", "report", run, "--out", str(a_file)], "is a file"),
        (["cogent", "report", run, "--out", str(a_file)], "is a file"),
        (["werewolf", "report", run, "--out", str(a_file)], "is a file"),
        (["cogent", "annotate", run, "-m", "scripted/first", "--out", str(a_folder)], "is a folder"),
        (["werewolf", "annotate", run, "-m", "scripted/first", "--out", str(missing)], "does not exist"),
        (["debate", "generate", "-o", str(a_folder)], "Is a directory"),
    ]
    before = files_under(tmp_path)
    for args, needle in cases:
        code, printed = run_cli(capsys, monkeypatch, *args, *(["--db", db] if args[0] != "debate" or
                                                                 args[1] != "generate" else []))
        assert code in (1, 2), (args, printed)
        assert "Traceback" not in printed and needle in printed, (args, printed)
    assert a_file.read_text(encoding="utf-8") == "keep me"
    assert files_under(tmp_path) - before == set(), "a refused command writes nothing"


def test_a_bad_provider_option_is_one_sentence(capsys, monkeypatch) -> None:
    code, printed = run_cli(capsys, monkeypatch, "ask", "scripted/first", "hi", "-o", "latency=abc", "--no-cache")
    assert code == 1 and "Traceback" not in printed and "latency='abc'" in printed


@pytest.mark.parametrize("name", ["../../../x", "/tmp/anywhere", "two\nlines", "x" * 300, ".", "..", "a/b", ""])
def test_run_names_are_checked_before_anything_is_opened(tmp_path, capsys, monkeypatch, name) -> None:
    db = tmp_path / "never.db"
    code, printed = run_cli(capsys, monkeypatch, "coordination", "run", "--run", name, "--model", "scripted/first",
                            "--items", "1", "--db", str(db), "--no-cache")
    assert code == 2 and "is not allowed" in printed and "Traceback" not in printed
    assert not db.exists(), "a refused name leaves no store behind"


@pytest.mark.parametrize("command", [["runs", "list"], ["report", "r"], ["coordination", "run", "--items", "1"]])
@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_db_is_an_error_not_the_default_store(tmp_path, capsys, monkeypatch, command, empty) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LEXICOORD_HOME", str(tmp_path / "home"))
    code, printed = run_cli(capsys, monkeypatch, *command, "--db", empty)
    assert code == 2 and "is empty" in printed and "Traceback" not in printed
    assert files_under(tmp_path) == set(), "nothing is opened or written"


def test_the_store_refuses_a_new_run_with_an_unsafe_name(tmp_path) -> None:
    from lexicoord.errors import ConfigError

    store = Store(str(tmp_path / "s.db"))
    with pytest.raises(ConfigError, match="not allowed"):
        store.open_run("../up", "coordination", {}, 1)
    assert [r.id for r in store.runs()] == []
    store.open_run("fine-name_1.2", "coordination", {}, 1)
    assert [r.id for r in store.runs()] == ["fine-name_1.2"]


def test_a_dataset_without_line_ends_is_refused_and_leaves_no_store(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LEXICOORD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LEXICOORD_MAX_LINE_KB", "64")
    code, printed = run_cli(capsys, monkeypatch, "coordination", "run", "--dataset", "/dev/zero", "--model",
                            "scripted/first", "--db", str(tmp_path / "x.db"))
    assert code == 1 and "Line 1" in printed and "64 KB" in printed and "LEXICOORD_MAX_LINE_KB" in printed
    assert not (tmp_path / "x.db").exists()


def test_a_refused_schema_leaves_no_cache_behind(tmp_path, capsys, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("LEXICOORD_HOME", str(home))
    code, printed = run_cli(capsys, monkeypatch, "ask", "scripted/first", "hi", "--json-schema", '{"type": "nope"}')
    assert code == 1 and "schema" in printed and "Traceback" not in printed
    assert not any(home.rglob("*.db")), "nothing was opened for a refused call"


def test_ask_prints_a_reply_without_its_terminal_control_sequences(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("LEXICOORD_HOME", str(tmp_path))
    hostile = "ok\x1b[2J\x1b]0;pwned\x07 done\x1b[31m red\x1b[0m\x07\x08 end\tthere\nnext"
    register_script("hostile", lambda messages, config: hostile)
    code, printed = run_cli(capsys, monkeypatch, "ask", "scripted/hostile", "hi", "--no-cache")
    assert code == 0
    assert "\x1b" not in printed and "\x07" not in printed and "\x08" not in printed
    assert "ok done red end\tthere\nnext" in printed, "the words, tabs and newlines stay"
