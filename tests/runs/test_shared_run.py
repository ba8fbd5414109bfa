"""Several processes on one run share its episodes through the store: each episode played and saved once.

Real processes (``tests.runs.kill_target``), a real SQLite file and a real PostgreSQL server, real signals.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from lexicoord.runs.store import Store

ROOT = Path(__file__).resolve().parents[2]
N = 60


def start(url: str, plays: Path, latency: float, env: dict[str, str], n: int = N) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.runs.kill_target", url, str(n), str(latency), str(plays)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def plays_by_key(plays: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = collections.defaultdict(list)
    for line in plays.read_text().splitlines():
        key, pid = line.split()
        out[key].append(int(pid))
    return out


def wait_until(url: str, plays: Path, procs: list[subprocess.Popen[str]], done: int) -> None:
    """Until every process has started an episode and ``done`` episodes are saved."""
    engine = create_engine(url)
    deadline = time.time() + 180  # three interpreters and a database starting on a busy two-core machine
    started: set[int] = set()
    saved = 0
    try:
        while time.time() < deadline:
            time.sleep(0.1)
            started = {pid for pids in plays_by_key(plays).values() for pid in pids} if plays.exists() else set()
            try:
                with engine.connect() as con:
                    saved = con.execute(text("SELECT COUNT(*) FROM episodes WHERE status = 'done'")).scalar_one()
            except Exception:
                continue
            if {p.pid for p in procs} <= started and saved >= done:
                return
    finally:
        engine.dispose()
    ended = {p.pid: (p.returncode, (p.stderr.read() if p.stderr else "")[-1500:]) for p in procs
             if p.poll() is not None}
    raise AssertionError(f"the processes did not all start playing in time: {saved} saved; started "
                         f"{sorted(started)} of {sorted(p.pid for p in procs)}; ended early: {ended}")


def finish(proc: subprocess.Popen[str]) -> dict:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_three_processes_one_killed_every_episode_saved_once(store_url, tmp_path) -> None:
    plays = tmp_path / "plays.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEXICOORD_CLAIM_SECONDS": "3"}
    procs = [start(store_url, plays, 0.4, env) for _ in range(3)]
    wait_until(store_url, plays, procs, done=8)
    victim = procs[0]
    victim.send_signal(signal.SIGKILL)
    victim.wait(30)
    summaries = [finish(p) for p in procs[1:]]

    store = Store(store_url)
    episodes = store.episodes("killme")
    assert len(episodes) == N and len({e.key for e in episodes}) == N
    assert all(e.status == "done" and e.attempt == 1 for e in episodes)
    assert all(len(store.events(e.id)) == 5 for e in episodes), "every saved episode has all its events"
    assert store.run("killme").status == "finished"

    by_key = plays_by_key(plays)
    assert set(by_key) == {e.key for e in episodes}
    again = {k for k, pids in by_key.items() if len(pids) > 1}
    assert all(by_key[k][0] == victim.pid and len(by_key[k]) == 2 for k in again), \
        "only episodes the killed process was playing are played again, once"
    assert 1 <= len(again) <= 4, "the killed process's claims (two in play, two saving at most) expired and were replayed"
    survivors = {p.pid for p in procs[1:]}
    assert all(set(by_key[k][1:]) <= survivors for k in again)
    assert all(s["failed"] == 0 for s in summaries)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_process_stopped_with_ctrl_c_or_sigterm_hands_its_episodes_over_at_once(store_url, tmp_path,
                                                                                  sig: signal.Signals) -> None:
    """Claims last 300 s here: the other process finishes in time only because the stopped one gave them back
    (SIGTERM: a SLURM array task preempted, a Kubernetes pod evicted)."""
    plays = tmp_path / "plays.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEXICOORD_CLAIM_SECONDS": "300"}
    first, second = start(store_url, plays, 0.4, env), start(store_url, plays, 0.4, env)
    wait_until(store_url, plays, [first, second], done=6)
    first.send_signal(sig)
    first.wait(30)
    assert first.returncode != 0
    summary = finish(second)
    store = Store(store_url)
    episodes = store.episodes("killme")
    assert len(episodes) == N and all(e.status == "done" for e in episodes)
    assert store.run("killme").status == "finished", "the process that finished last marks the run"
    assert summary["done"] < N
    assert summary["skipped"] + summary["done"] + summary["by_others"] == N, "the summary counts the other's work"
    by_key = plays_by_key(plays)
    assert all(len(pids) <= 2 for pids in by_key.values())


def test_two_processes_on_a_near_free_run_both_exit_within_seconds_of_its_last_episode(store_url, tmp_path) -> None:
    """Episodes cost next to nothing, so saving is the work: neither process may sit on claims it took ahead,
    or wait for the other's to expire (the default 60 s lease), once the last episode is saved."""
    plays, n = tmp_path / "plays.log", 600
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LEXICOORD_CLAIM_SECONDS", None)
    procs = [start(store_url, plays, 0.001, env, n=n) for _ in range(2)]
    exits: dict[int, float] = {}

    def wait(proc: subprocess.Popen[str]) -> None:
        proc.communicate(timeout=300)
        exits[proc.pid] = time.time()

    threads = [threading.Thread(target=wait, args=(p,)) for p in procs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(p.returncode == 0 for p in procs)
    episodes = Store(store_url).episodes("killme")
    assert len(episodes) == n and all(e.status == "done" for e in episodes)
    by_key = plays_by_key(plays)
    players = {pid for pids in by_key.values() for pid in pids}
    assert players == {p.pid for p in procs}, "both processes played"
    last = max(e.finished_at for e in episodes)
    late = {pid: round(at - last, 1) for pid, at in exits.items()}
    assert all(seconds <= 5 for seconds in late.values()), f"seconds from the last save to each exit: {late}"
