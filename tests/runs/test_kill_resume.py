"""The runner killed for real (SIGKILL mid-run), then resumed: nothing redone, nothing lost.

On a SQLite file and on a real PostgreSQL server.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from lexicoord.runs.store import Store

ROOT = Path(__file__).resolve().parents[2]
N = 60  # at 0.15 s a call, two at a time: about 9 s, ample for the signal to land mid-run on a busy machine


def start_and_signal(db: str, env: dict, sig: signal.Signals) -> subprocess.Popen:
    """Start the run in a subprocess and send ``sig`` once at least 6 episodes are saved."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.runs.kill_target", db, str(N), "0.15"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.time() + 60
    done_before = 0
    engine = create_engine(db)
    while time.time() < deadline and done_before < 6:
        time.sleep(0.05)
        # Read the count with a bare engine: opening a Store checks migrations, too slow to poll on a busy machine.
        try:
            with engine.connect() as con:
                done_before = con.execute(text("SELECT COUNT(*) FROM episodes WHERE status = 'done'")).scalar_one()
        except SQLAlchemyError:
            continue
    engine.dispose()
    assert proc.poll() is None, "the run ended before it could be stopped"
    proc.send_signal(sig)
    proc.wait(30)
    return proc


def test_sigkill_then_resume(store_url) -> None:
    db = store_url
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start_and_signal(db, env, signal.SIGKILL)

    store = Store(db)
    before = {e.key: e for e in store.episodes("killme")}
    assert 6 <= len(before) < N, "the kill must land mid-run"
    assert all(e.status == "done" and len(store.events(e.id)) > 0 for e in before.values())

    resumed = subprocess.run(
        [sys.executable, "-m", "tests.runs.kill_target", db, str(N), "0.01"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=120, check=True,
    )
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary["skipped"] == len(before)
    assert summary["done"] == N - len(before) and summary["failed"] == 0
    assert summary["model_calls"] == 2 * (N - len(before)), "finished episodes must not be played again"

    after = {e.key: e for e in store.episodes("killme")}
    assert len(after) == N and all(e.status == "done" for e in after.values())
    for key, old in before.items():
        new = after[key]
        assert (new.id, new.finished_at, new.attempt) == (old.id, old.finished_at, 1), "a finished episode was rewritten"
    assert store.run("killme").status == "finished"


def test_ctrl_c_saves_what_ended_and_marks_the_run(store_url) -> None:
    db = store_url
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = start_and_signal(db, env, signal.SIGINT)
    assert proc.returncode != 0
    store = Store(db)
    run = store.run("killme")
    assert run.status == "interrupted" and 6 <= run.done < N
    episodes = store.episodes("killme")
    assert len(episodes) == run.done and all(e.status == "done" for e in episodes)
    assert all(len(store.events(e.id)) == 5 for e in episodes), "every saved episode has all its events"
