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

import pytest
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
    # The killed process's two claims in flight are played again once they run out: a 3-second lease instead of
    # the default minute keeps the wait short (a live claim being respected is test_a_run_being_played_...).
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEXICOORD_CLAIM_SECONDS": "3"}
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


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_saves_what_ended_and_marks_the_run(store_url, sig: signal.Signals) -> None:
    """SIGTERM is how SLURM (time limit, preemption) and Kubernetes stop a job: handled as Ctrl-C is."""
    db = store_url
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = start_and_signal(db, env, sig)
    assert proc.returncode != 0
    if sig == signal.SIGTERM:  # handled, not left to kill the process where it stood
        assert proc.returncode != -signal.SIGTERM
        assert "Terminated: stopped by SIGTERM" in (proc.stderr.read() if proc.stderr else "")
    store = Store(db)
    run = store.run("killme")
    assert run.status == "interrupted" and 6 <= run.done < N
    episodes = store.episodes("killme")
    assert len(episodes) == run.done and all(e.status == "done" for e in episodes)
    assert all(len(store.events(e.id)) == 5 for e in episodes), "every saved episode has all its events"


def test_a_run_whose_process_died_by_a_signal_reads_interrupted_then_resumes(store_url) -> None:
    """A segmentation fault (a native library's crash) gives the process no chance to mark its run: once its
    claims expire, the run reads ``interrupted``, in the store and in ``runs list``, and the same command resumes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEXICOORD_CLAIM_SECONDS": "1"}
    store = Store(store_url)
    proc = start_and_signal(store_url, env, signal.SIGSEGV)
    assert proc.returncode == -signal.SIGSEGV
    time.sleep(1.5)  # the dead process's claims run out
    os.environ["LEXICOORD_CLAIM_SECONDS"] = "1"
    try:
        run = store.run("killme")
        assert run.status == "interrupted" and 6 <= run.done < N
        listed = subprocess.run([sys.executable, "-c", "from lexicoord.cli.app import main; main()", "runs", "list", "--db", store_url],
                                cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert "interrupted" in listed.stdout and "running" not in listed.stdout, listed.stdout + listed.stderr
    finally:
        del os.environ["LEXICOORD_CLAIM_SECONDS"]
    subprocess.run([sys.executable, "-m", "tests.runs.kill_target", store_url, str(N), "0.01"], cwd=ROOT, env=env,
                   capture_output=True, text=True, timeout=120, check=True)
    assert store.run("killme").status == "finished" and store.run("killme").done == N


def test_a_run_being_played_reads_running_while_its_process_lives(store_url) -> None:
    """The other side: a live process whose run was opened long ago still holds unexpired claims."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEXICOORD_CLAIM_SECONDS": "2"}
    proc = subprocess.Popen([sys.executable, "-m", "tests.runs.kill_target", store_url, str(N), "0.3"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        store = Store(store_url)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if store.run("killme").done >= 2:
                    break
            except Exception:  # the run is not opened yet
                pass
            time.sleep(0.1)
        time.sleep(2.5)  # longer than a lease since the run was opened: only live claims keep it running
        os.environ["LEXICOORD_CLAIM_SECONDS"] = "2"
        try:
            assert proc.poll() is None and store.run("killme").status == "running"
        finally:
            del os.environ["LEXICOORD_CLAIM_SECONDS"]
    finally:
        proc.kill()
        proc.wait(30)
