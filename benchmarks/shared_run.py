"""One run shared by 1, 2 and 4 processes on one PostgreSQL store, and what a claim costs.

Each process is a separate runner (this script with ``--worker``) on the same run name. Episodes are
runner_overhead.py's: three scripted seats answer at once after a fixed latency, two rounds, so an
episode takes 2 x ``latency`` seconds of model time. Ideal wall time with P processes of concurrency C
is episodes x 2 x latency / (P x C); the figure is the measured wall time over it. Wall time is read
from the store (first episode started to last episode saved), so process start-up is not counted; the
time from launching the processes to the last exit is printed beside it.

The claim overhead is the mean time of one claim (the ``UPDATE ... FOR UPDATE SKIP LOCKED`` that
takes the next episode) on a run of as many episodes, on the same server, from one process.

Without ``--db`` a throwaway PostgreSQL cluster is started (Debian's server, a loopback port, a
temporary folder) and removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from runner_overhead import ROUNDS, TwoRounds  # this folder's episodes: 3 seats, 2 rounds, answers at once

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
    summary = asyncio.run(runner.run(RUN, episodes(n)))
    print(summary.done)


def new_database(admin_url: str) -> str:
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:10]}"
    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


def shared(admin_url: str, processes: int, n: int, latency: float, concurrency: int) -> tuple[float, float, int]:
    """(wall from the store, wall from launch to last exit, episodes saved) for one configuration."""
    url = new_database(admin_url)
    Store(url).close()  # migrated once, before the processes race
    launched = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", url, str(n), str(latency), str(concurrency)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        if p.returncode != 0:
            raise SystemExit(f"a worker failed: {err[-2000:]}")
    outer = time.perf_counter() - launched
    store = Store(url)
    saved = store.episodes(RUN)
    store.close()
    inner = max(e.finished_at for e in saved) - min(e.started_at for e in saved)
    return inner, outer, len(saved)


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


def report(admin_url: str, args: argparse.Namespace) -> None:
    print(f"{args.episodes} episodes of {ROUNDS * args.latency:.2f} s model time, concurrency {args.concurrency} per process, "
          f"one PostgreSQL run; median of {args.repeat}")
    print(f"{'processes':>9} {'episodes/s':>11} {'wall s':>8} {'ideal s':>8} {'wall/ideal':>10} {'launch-to-exit s':>17}")
    for processes in (1, 2, 4):
        results = [shared(admin_url, processes, args.episodes, args.latency, args.concurrency)
                   for _ in range(args.repeat)]
        assert all(saved == args.episodes for _, _, saved in results), "every episode saved once"
        inner = statistics.median(r[0] for r in results)
        outer = statistics.median(r[1] for r in results)
        ideal = args.episodes * ROUNDS * args.latency / (processes * args.concurrency)
        print(f"{processes:>9} {args.episodes / inner:>11.2f} {inner:>8.2f} {ideal:>8.2f} {inner / ideal:>10.2f} "
              f"{outer:>17.2f}")
    cost = statistics.median(claim_cost(admin_url, args.episodes) for _ in range(args.repeat))
    print(f"claim overhead: {cost * 1000:.2f} ms per episode (one claim, {args.episodes} episodes, one process)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="a PostgreSQL URL whose user may create databases (default: a throwaway cluster)")
    parser.add_argument("--episodes", type=int, default=120)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per model call (two rounds an episode)")
    parser.add_argument("--concurrency", type=int, default=4, help="episodes at once in each process")
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
    main()
