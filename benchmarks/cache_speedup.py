"""The response cache: a repeated run's wall time against the first.

Plays the coordination game (three embedded-model agents) on a few built-in
sentences, then the same grid again under a new run name with the same base
seed: every request is identical, so every reply comes from the cache.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

import machine

from lexicoord.core.spec import AgentSpec
from lexicoord.models.cache import ResponseCache
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.runs.summary import RunSummary
from lexicoord.tasks.ambiguous import builtin_items

ITEMS = [i.as_task() for i in builtin_items() if i.id in {"bank-01", "bat-01", "release-01", "light-01"}]
LINEUP = [AgentSpec(name=f"a{i}", model="local/smollm2-135m", options={"temperature": 0.7}) for i in (1, 2, 3)]


def run_once(store: Store, cache: ResponseCache, run_id: str) -> tuple[RunSummary, float]:
    runner = Runner(store, CoordinationGame(), models=ModelPool(cache=cache), concurrency=2, seed=11)
    started = time.perf_counter()
    settings = [{"clarification_bound": 1}]
    summary = asyncio.run(runner.run(run_id, grid(ITEMS, [LINEUP], settings=settings)))
    return summary, time.perf_counter() - started


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["LEXICOORD_HOME"] = home
        store, cache = Store(os.path.join(home, "c.db")), ResponseCache(os.path.join(home, "cache.db"))
        first, first_wall = run_once(store, cache, "first")
        second, second_wall = run_once(store, cache, "second")
    print(f"{len(ITEMS)} coordination games x 3 embedded-model agents, clarification bound 1")
    print(f"first run:  {first_wall:7.2f} s, {first.model_calls} calls, {first.cached_calls} from cache")
    print(f"second run: {second_wall:7.3f} s, {second.model_calls} calls, {second.cached_calls} from cache")
    print(f"speed-up: {first_wall / second_wall:.0f}x")


if __name__ == "__main__":
    machine.run(main)
