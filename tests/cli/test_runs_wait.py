"""``lexicoord runs wait RUN``: a report job waits for a run that other processes (array tasks, machines) play,
and learns from the exit code whether the run is whole."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.cli.test_cli import lexicoord
from tests.runs.toy import Toy, lineup


def playing(db: str, run: str, items: int, latency: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "run", "--model", "scripted/first", "-o",
         f"latency={latency}", "--items", str(items), "--bound", "0", "--db", db, "--run", run, "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def until_running(db: str, run: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        try:
            if Store(db).run(run).status == "running":
                return
        except Exception:  # the run is not opened yet
            pass
        time.sleep(0.2)
    raise AssertionError("the run never started")


def test_it_returns_once_the_run_is_finished_and_not_before(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    proc = playing(db, "long", 6, 0.3)
    until_running(db, "long", proc)
    waited = lexicoord("runs", "wait", "long", "--every", "0.2", "--db", db, check=False)
    run = Store(db).run("long")
    assert waited.returncode == 0, waited.stderr
    assert run.status == "finished" and run.done == 6, "it came back only when the run was whole"
    assert "run long: finished, 6 done, 0 failed (of 6)" in waited.stdout
    proc.communicate(timeout=60)
    assert lexicoord("runs", "wait", "long", "--db", db).returncode == 0, "a finished run: at once"


def test_a_run_still_playing_past_the_timeout_exits_124(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    proc = playing(db, "slow", 50, 0.5)
    try:
        until_running(db, "slow", proc)
        started = time.time()
        waited = lexicoord("runs", "wait", "slow", "--timeout", "1", "--every", "0.2", "--db", db, check=False)
        assert waited.returncode == 124 and "still running after 1 s" in waited.stderr
        assert time.time() - started < 30
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    stopped = lexicoord("runs", "wait", "slow", "--db", db, check=False)
    assert stopped.returncode == 1 and "slow: interrupted" in stopped.stderr, "an interrupted run is not whole"
    assert "re-running its command resumes it" in stopped.stderr


async def test_a_finished_run_with_failed_episodes_is_not_whole(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    runner = Runner(Store(db), Toy(), models=ModelPool(cache=False))
    await runner.run("partly", grid([{"id": "a"}, {"id": "b", "fail": True}], [lineup()]))
    waited = lexicoord("runs", "wait", "partly", "--db", db, check=False)
    assert waited.returncode == 1 and "partly: finished, 1 done, 1 failed (of 2)" in waited.stderr
    unknown = lexicoord("runs", "wait", "nope", "--db", db, check=False)
    assert unknown.returncode == 1 and "nope" in unknown.stderr
