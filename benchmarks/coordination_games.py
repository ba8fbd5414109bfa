"""Coordination games per minute on the embedded model, and where the wall time goes.

Plays the same built-in items with three embedded-model agents at concurrency
1 and 4. "In the model" is the time llama.cpp spends generating (measured
around each generation on its thread); everything else (prompts, parsing,
events, the store, scheduling) is the rest of the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

import machine

from lexicoord.core.spec import AgentSpec
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers import local
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items

inside = {"seconds": 0.0, "calls": 0}
_complete = local.LocalProvider._complete


def _timed(self, *args, **kwargs):
    started = time.perf_counter()
    try:
        return _complete(self, *args, **kwargs)
    finally:
        inside["seconds"] += time.perf_counter() - started
        inside["calls"] += 1


local.LocalProvider._complete = _timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--bound", type=int, default=1)
    args = parser.parse_args()
    items = [i.as_task() for i in builtin_items()[: args.games]]
    lineup = [AgentSpec(name=f"a{i}", model="local/smollm2-135m", options={"temperature": 0.7}) for i in (1, 2, 3)]
    print(f"{args.games} games, 3 embedded-model agents (SmolLM2-135M), clarification bound {args.bound}, no cache")
    with tempfile.TemporaryDirectory() as home:
        os.environ["LEXICOORD_HOME"] = home
        for concurrency in (1, 4):
            inside.update(seconds=0.0, calls=0)
            pool = ModelPool(cache=False)
            asyncio.run(pool.get("local/smollm2-135m").generate("warm up", max_tokens=2))
            inside.update(seconds=0.0, calls=0)
            runner = Runner(Store(os.path.join(home, f"c{concurrency}.db")), CoordinationGame(), models=pool,
                            concurrency=concurrency, seed=5)
            started = time.perf_counter()
            summary = asyncio.run(runner.run(f"c{concurrency}", grid(items, [lineup], settings=[{"clarification_bound": args.bound}])))
            wall = time.perf_counter() - started
            share = inside["seconds"] / wall
            print(
                f"concurrency {concurrency}: {summary.done} games in {wall:.1f} s = {summary.done / wall * 60:.1f} games/min;"
                f" {inside['calls']} generations, {summary.completion_tokens} completion tokens;"
                f" in the model {inside['seconds']:.1f} s ({share:.1%}), elsewhere {wall - inside['seconds']:.1f} s ({1 - share:.1%})"
            )


if __name__ == "__main__":
    machine.run(main)
