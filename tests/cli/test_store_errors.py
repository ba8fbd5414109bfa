"""A store that cannot be used as it is (damaged, read-only, locked by another process), met by the commands
that open one: each says in one sentence which file and what to do, and exits 1, never with a traceback.

The commands run as a user runs them, in a subprocess. When the tests run as root, the subprocess drops the
capabilities that let root write a read-only file, so it meets the store the way any other user would.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

ITEM = {"id": "bank-1", "sentence": "Meet me at the bank.", "word": "bank", "options": ["river", "money"],
        "intended": None, "open": True}
#: The commands of the issue: list, show, report (they read) and a campaign (it writes).
COMMANDS = [
    ["runs", "list"],
    ["runs", "show", "done", "--transcript"],
    ["report", "done"],
    ["coordination", "run", "--model", "scripted/first", "--items", "1", "--run", "new", "--no-cache"],
]


def as_a_user() -> None:
    """In the child: give up root's power over file modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER),
    which an exec then drops from every capability set; a no-op for anyone else."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "cannot drop a capability for the read-only test")


def lexicoord(*args: str, cwd: Path, env: dict[str, str] | None = None, user: bool = False
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", *args], capture_output=True, text=True, timeout=280, cwd=cwd,
        env={**os.environ, "COLUMNS": "400", "LEXICOORD_DB_WAIT": "0.5", **(env or {})},
        preexec_fn=as_a_user if user else None,
    )


def one_sentence(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 1, no traceback, and the error as one line; a campaign may print its run summary above it."""
    assert result.returncode == 1, (result.returncode, result.stdout[-500:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr + result.stdout, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    campaign = "run" in result.args and "coordination" in result.args
    assert len(lines) == 1 or campaign, result.stderr
    assert lines[-1].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[-1], (needle, lines[-1])


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A store with one finished coordination run, ``done``, with its events, checkpointed into one file."""
    db = tmp_path / "store" / "runs.db"
    db.parent.mkdir()
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("s", lambda m, c: {"choice": "river", "justification": "water"})), "scripted/s")
    lineup = [AgentSpec(name=f"a{i}", model="scripted/s") for i in range(2)]
    store = Store(str(db))
    asyncio.run(Runner(store, CoordinationGame(), models=pool).run("done", grid([ITEM], [lineup])))
    store.close()
    with closing(sqlite3.connect(db)) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert sorted(p.name for p in db.parent.iterdir()) == ["runs.db"], "one file, no -wal or -shm beside it"
    return db


def root_page(db: Path, table: str) -> int:
    with closing(sqlite3.connect(db)) as con:
        return int(con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0])


def damaged_copies(stored: Path) -> Iterator[Path]:
    """A file of random bytes named as a store; a store cut short; a store whose events table's root page was
    overwritten (it opens and lists its runs, and fails when the events are read or written)."""
    noise = stored.with_name("noise.db")
    noise.write_bytes(os.urandom(5000))
    yield noise
    cut = stored.with_name("cut.db")
    shutil.copy(stored, cut)
    os.truncate(cut, 5000)
    yield cut
    scribbled = stored.with_name("scribbled.db")
    shutil.copy(stored, scribbled)
    size = 4096
    with closing(sqlite3.connect(stored)) as con:
        size = con.execute("PRAGMA page_size").fetchone()[0]
    with scribbled.open("r+b") as fh:
        fh.seek((root_page(stored, "events") - 1) * size)
        fh.write(b"\x0d\x00\x07" + b"\xff" * 400)
    yield scribbled


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_damaged_store_is_one_sentence_naming_the_file(stored: Path, tmp_path: Path, command: list[str]) -> None:
    for damaged in damaged_copies(stored):
        result = lexicoord(*command, "--db", str(damaged), cwd=tmp_path)
        if command[:2] == ["runs", "list"] and damaged.name == "scribbled.db":
            # The runs and episodes are whole: the list is shown; reading the damaged pages is what fails.
            assert result.returncode == 0 and "done" in result.stdout, result.stderr
            continue
        one_sentence(result, str(damaged), "is damaged", "--db", f"sqlite3 {damaged} .recover")


def read_only(folder: Path) -> None:
    for path in [*folder.iterdir(), folder]:
        path.chmod(0o555 if path.is_dir() else 0o444)


def test_the_read_only_test_really_cannot_write(stored: Path, tmp_path: Path) -> None:
    """The check the read-only tests rest on: the child cannot write a file with mode 0444."""
    read_only(stored.parent)
    try:
        probe = subprocess.run([sys.executable, "-c", f"open({str(stored)!r}, 'ab')"], capture_output=True,
                               text=True, preexec_fn=as_a_user, timeout=60)
        assert probe.returncode != 0 and "PermissionError" in probe.stderr
    finally:
        stored.parent.chmod(0o755)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_in_a_read_only_folder_is_one_sentence(stored: Path, tmp_path: Path, command: list[str]) -> None:
    read_only(stored.parent)
    try:
        result = lexicoord(*command, "--db", str(stored), cwd=tmp_path, user=True)
    finally:
        stored.parent.chmod(0o755)
    one_sentence(result, str(stored), "cannot be written", "writable", "--db")


def test_a_read_only_store_in_a_writable_folder_is_read_and_refuses_a_campaign(stored: Path, tmp_path: Path) -> None:
    stored.chmod(0o444)
    listed = lexicoord("runs", "list", "--db", str(stored), cwd=tmp_path, user=True)
    assert listed.returncode == 0 and "done" in listed.stdout, listed.stderr
    result = lexicoord(*COMMANDS[-1], "--db", str(stored), cwd=tmp_path, user=True)
    one_sentence(result, str(stored), "cannot be written", "writable")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_locked_by_another_process_is_one_sentence_after_one_wait(stored: Path, tmp_path: Path,
                                                                          command: list[str]) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         f"con = sqlite3.connect({str(stored)!r}, isolation_level=None)\n"
         "con.execute('PRAGMA locking_mode=EXCLUSIVE'); con.execute('BEGIN EXCLUSIVE')\n"
         "con.execute('CREATE TABLE IF NOT EXISTS held(x)'); print('held', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        result = lexicoord(*command, "--db", str(stored), cwd=tmp_path)
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    one_sentence(result, str(stored), "is locked by another process", "0.5 s", "LEXICOORD_DB_WAIT")
    assert took < 30, f"one wait of 0.5 s, not one per retry: {took:.1f} s"


def test_a_bad_lock_wait_is_one_sentence(tmp_path: Path) -> None:
    result = lexicoord("runs", "list", "--db", str(tmp_path / "x.db"), cwd=tmp_path, env={"LEXICOORD_DB_WAIT": "soon"})
    one_sentence(result, "LEXICOORD_DB_WAIT must be a number of seconds")
