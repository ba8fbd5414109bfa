"""One run shared by 1, 2 and 4 processes on one PostgreSQL store, and what a claim costs.

Each process is a separate runner (this script with ``--worker``) on the same run name. Episodes are
runner_overhead.py's: three scripted seats answer at once after a fixed latency, two rounds, so an
episode takes 2 x ``latency`` seconds of model time. Ideal wall time with P processes of concurrency C
is episodes x 2 x latency / (P x C); the figure is the measured wall time over it. Wall time is read
from the store (first episode started to last episode saved), so process start-up is not counted; the
time from launching the processes to the last exit is printed beside it, with the start-up (launch to the
first episode) and the time from the last episode's end to the last exit (a process that waits on claims nobody
renews shows there). Two runs: near-free model calls (the store is the work) and 0.2 s calls.

The claim overhead is the mean time of one claim (the ``UPDATE ... FOR UPDATE SKIP LOCKED`` that
takes the next episode) on a run of as many episodes, on the same server, from one process.

Without ``--db`` a throwaway PostgreSQL cluster is started (Debian's server, a loopback port, a
temporary folder) and removed at the end.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import NamedTuple

import machine
from runner_overhead import ROUNDS, TwoRounds  # this folder's episodes: 3 seats, 2 rounds, answers at once

from lexicoord import event_loop
from lexicoord.core.spec import AgentSpec
from lexicoord.models.pool import ModelPool
from lexicoord.runs.claims import Claims
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

ROOT = Path(__file__).resolve().parents[1]
RUN = "shared"


def episodes(n: int) -> list:
    lineup = [AgentSpec(name=f"a{i}", model="scripted/first") for i in range(3)]
    return grid([{"id": f"i{k}"} for k in range(n)], [lineup])


def worker(url: str, n: int, latency: float, concurrency: int) -> None:
    runner = Runner(Store(url), TwoRounds(), models=ModelPool(cache=False, latency=latency), concurrency=concurrency)
    summary = event_loop.run(runner.run(RUN, episodes(n)))  # as `lexicoord run` plays
    print(summary.done)


def new_database(admin_url: str) -> str:
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:10]}"
    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


class Shared(NamedTuple):
    """One sitting of P processes on one run."""

    inner: float  # first episode started to last episode saved, read from the store
    outer: float  # launch to the last process's exit
    startup: float  # launch to the first episode started
    tail: float  # the run's last episode ended to the last process's exit
    saved: int


def shared(admin_url: str, processes: int, n: int, latency: float, concurrency: int) -> Shared:
    url = new_database(admin_url)
    Store(url).close()  # migrated once, before the processes race
    launched = time.time()
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", url, str(n), str(latency), str(concurrency)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    exits: list[float] = []
    errors: list[str] = []

    def wait(p: subprocess.Popen[str]) -> None:
        _, err = p.communicate(timeout=900)
        exits.append(time.time())
        if p.returncode != 0:
            errors.append(err[-2000:])

    threads = [threading.Thread(target=wait, args=(p,)) for p in procs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"a worker failed: {errors[0]}")
    store = Store(url)
    saved = store.episodes(RUN)
    store.close()
    first, last = min(e.started_at for e in saved), max(e.finished_at for e in saved)
    return Shared(inner=last - first, outer=max(exits) - launched, startup=first - launched, tail=max(exits) - last,
                  saved=len(saved))


def claim_cost(admin_url: str, n: int) -> float:
    """Mean seconds per claim over a run of ``n`` episodes, one process taking them all."""
    store = Store(new_database(admin_url))
    store.open_run(RUN, "bench", {}, n)
    claims = Claims(store, RUN)
    claims.offer([(f"k{i}", i) for i in range(n)])
    started = time.perf_counter()
    taken = 0
    while claims.take():
        taken += 1
    elapsed = time.perf_counter() - started
    store.close()
    assert taken == n
    return elapsed / n


#: The goal: P processes play a model-bound run within this factor of the ideal for P processes.
GOAL = 1.2


def report(admin_url: str, args: argparse.Namespace) -> None:
    print(f"one PostgreSQL run shared by 1, 2 and 4 processes, concurrency {args.concurrency} each; median of "
          f"{args.repeat}. Goal (model-bound run): wall <= {GOAL} x the ideal for P processes, "
          "episodes x model time / (P x concurrency); launch-to-last-exit printed beside it")
    for latency, n in ((args.fast_latency, args.fast_episodes), (args.latency, args.episodes)):
        model_bound = n * ROUNDS * latency / args.concurrency >= 1.0
        print(f"\n{n} episodes of {ROUNDS * latency:.3f} s model time"
              + ("" if model_bound else " (near-free: the store is the work; no ideal to judge against)"))
        print(f"{'processes':>9} {'episodes/s':>11} {'wall s':>8} {'ideal s':>8} {'wall/ideal':>10} "
              f"{'launch-to-exit s':>17} {'start-up s':>10} {'last episode to exit s':>23} {'verdict':>8}")
        for processes in (1, 2, 4):
            sittings = [shared(admin_url, processes, n, latency, args.concurrency) for _ in range(args.repeat)]
            assert all(r.saved == n for r in sittings), "every episode saved once"
            inner = statistics.median(r.inner for r in sittings)
            outer = statistics.median(r.outer for r in sittings)
            startup = statistics.median(r.startup for r in sittings)
            tail = max(r.tail for r in sittings)
            ideal = n * ROUNDS * latency / (processes * args.concurrency)
            ratio = f"{inner / ideal:.3f}" if model_bound else "-"
            verdict = ("ok" if inner <= GOAL * ideal else "OVER") if model_bound else "-"
            print(f"{processes:>9} {n / inner:>11.2f} {inner:>8.2f} {ideal:>8.2f} {ratio:>10} {outer:>17.2f} "
                  f"{startup:>10.2f} {tail:>23.2f} {verdict:>8}")
    cost = statistics.median(claim_cost(admin_url, args.episodes) for _ in range(args.repeat))
    print(f"\nclaim overhead: {cost * 1000:.2f} ms per episode (one claim, {args.episodes} episodes, one process)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="a PostgreSQL URL whose user may create databases (default: a throwaway cluster)")
    parser.add_argument("--episodes", type=int, default=240, help="episodes of the run at --latency")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call (two rounds an episode)")
    parser.add_argument("--fast-episodes", type=int, default=2000, help="episodes of the run at --fast-latency")
    parser.add_argument("--fast-latency", type=float, default=0.0005, help="near-free model calls")
    parser.add_argument("--concurrency", type=int, default=8, help="episodes at once in each process")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration; the median is the figure")
    parser.add_argument("--worker", nargs=4, metavar=("URL", "N", "LATENCY", "CONCURRENCY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        url, n, latency, concurrency = args.worker
        worker(url, int(n), float(latency), int(concurrency))
        return
    if args.db:
        report(args.db, args)
        return
    sys.path.insert(0, str(ROOT))
    from tests.postgres import running

    with running() as server:
        report(server.url(), args)


if __name__ == "__main__":
    machine.run(main)
