"""A report's time and memory as the run grows: ``lexicoord report RUN`` in a fresh process, per run size.

A coordination run is played once through the real runner by three scripted agents that answer at random
(so games converge, fail and take every depth), then copied under new keys until it holds each size's
events (``--events``, 63,000 and 1,000,000 by default; the copies are real stored episodes). For each size
the command a user types is timed and its peak memory read (the child's own high-water resident set). Targets:
at most 5 s for 63,000 events, at most 120 MB whatever the size. The report's numbers are the tests' to
check; this script prints what they cost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine

from lexicoord.core.spec import AgentSpec
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items

#: Run as the child: the report command, then its own peak memory (see ``machine.peak_mb``) on stderr's last line.
CHILD = """
import sys
sys.path.insert(0, sys.argv[4])
import machine
from lexicoord.cli.app import main
sys.argv = ["lexicoord", "report", sys.argv[1], "--db", sys.argv[2], "--out", sys.argv[3]]
try:
    main()
finally:
    print("peak_mb", machine.peak_mb(), file=sys.stderr)
"""


def played(db: str, games: int) -> str:
    """A real coordination run of ``games`` games by scripted agents; its name."""
    items = [i.as_task() for i in builtin_items()]
    lineup = [AgentSpec(name=f"a{i}", model="scripted/random") for i in (1, 2, 3)]
    reps = -(-games // len(items))
    episodes = grid(items, [lineup], settings=[{"clarification_bound": 2}], repetitions=reps)[:games]
    runner = Runner(Store(db), CoordinationGame(), models=ModelPool(cache=False), concurrency=20)
    asyncio.run(runner.run("base", episodes))
    return "base"


def grown(db: str, base: str, name: str, events: int) -> int:
    """Copy ``base``'s episodes under new keys into run ``name`` until it holds ``events`` events; how many."""
    store = Store(db)
    rows = list(store.iter_run_events(base))
    store.open_run(name, "coordination", store.run(base).config, 0)
    total, copy, batch = 0, 0, []
    while total < events:
        for record, evs in rows:
            fresh = record.model_copy(update={"id": None, "run_id": name, "key": f"{record.key}-{copy}",
                                              "position": copy * len(rows) + record.position})
            batch.append((fresh, evs))
            total += len(evs)
            if len(batch) == 500 or total >= events:
                store.save_episodes(batch)
                batch = []
            if total >= events:
                break
        copy += 1
    store.close()
    return total


def measured(db: str, run: str, out: str) -> tuple[float, int]:
    """Wall seconds and peak resident memory (MB) of ``lexicoord report`` in a fresh process."""
    started = time.perf_counter()
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-c", CHILD, run, db, out, here], capture_output=True, text=True,
                          timeout=3600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the report failed: {done.stderr[-2000:]}")
    return wall, round(float(done.stderr.strip().splitlines()[-1].split()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, nargs="+", default=[63_000, 1_000_000], help="run sizes, in events")
    parser.add_argument("--games", type=int, default=300, help="games played for real, then copied")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["LEXICOORD_HOME"] = home
        db = str(Path(home) / "runs.db")
        started = time.perf_counter()
        base = played(db, args.games)
        print(f"played {args.games} coordination games with scripted agents in {time.perf_counter() - started:.1f} s")
        for size in args.events:
            name = f"run{size}"
            events = grown(db, base, name, size)
            episodes = len(Store(db).episodes(name))
            wall, mb = measured(db, name, str(Path(home) / "reports" / name))
            target = "  (target: <= 5 s)" if size <= 63_000 else ""
            print(f"{episodes:7d} episodes, {events:9d} events: report {wall:6.1f} s{target}, peak memory {mb} MB "
                  f"(target <= 120 MB); store {os.path.getsize(db) >> 20} MB")


if __name__ == "__main__":
    machine.run(main)
