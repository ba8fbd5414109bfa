"""A run in its own process, for tests that kill it (SIGKILL, Ctrl-C) or start several on one run.

Usage: python -m tests.runs.kill_target STORE N_ITEMS LATENCY [PLAYS_LOG]. With PLAYS_LOG, every
episode this process starts playing appends "key pid" to that file, so a test can count plays.
"""

import asyncio
import os
import signal
import sys

from lexicoord.core import EpisodeContext
from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.runs.toy import Toy, ToyOutcome, lineup


class Logged(Toy):
    def __init__(self, plays: str) -> None:
        self.plays = plays

    async def play(self, ctx: EpisodeContext) -> ToyOutcome:
        with open(self.plays, "a") as fh:
            fh.write(f"{ctx.spec.key} {os.getpid()}\n")
        return await super().play(ctx)


def main(db: str, n_items: int, latency: float, plays: str | None = None) -> None:
    # Ctrl-C as a user's terminal delivers it: a test session may pass SIGINT down ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    protocol = Logged(plays) if plays else Toy()
    runner = Runner(Store(db), protocol, models=ModelPool(cache=False, latency=latency), concurrency=2)
    summary = asyncio.run(runner.run("killme", grid([{"id": f"i{k}"} for k in range(n_items)], [lineup()])))
    print(summary.model_dump_json())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), *sys.argv[4:5])
