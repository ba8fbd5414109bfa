"""The response cache: a repeated run's wall time against the first.

Runs the demo protocol (three embedded-model agents) over a few sentences,
then runs the same grid again under a new run name with the same base seed:
every request is identical, so every reply comes from the cache.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

from lexicoord.models.cache import ResponseCache
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.demo_choice import DEMO_ITEM, DemoChoice, demo_lineup
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner, RunSummary
from lexicoord.runs.store import Store

ITEMS = [
    DEMO_ITEM,
    {"id": "bat", "sentence": "He picked up the bat before the game started.", "word": "bat",
     "options": ["a club used in baseball or cricket", "a flying mammal"]},
    {"id": "release", "sentence": "When the light turns green, release the part.", "word": "release",
     "options": ["open the gripper and let the part go", "send the part on to the next station"]},
    {"id": "light", "sentence": "Carry the light box to the door.", "word": "light",
     "options": ["not heavy", "giving off light"]},
]


def run_once(store: Store, cache: ResponseCache, run_id: str) -> tuple[RunSummary, float]:
    runner = Runner(store, DemoChoice(), models=ModelPool(cache=cache), concurrency=3, seed=11, progress=False)
    started = time.perf_counter()
    summary = asyncio.run(runner.run(run_id, grid(ITEMS, [demo_lineup("local/smollm2-135m")])))
    return summary, time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["LEXICOORD_HOME"] = home
        store, cache = Store(os.path.join(home, "c.db")), ResponseCache(os.path.join(home, "cache.db"))
        first, first_wall = run_once(store, cache, "first")
        second, second_wall = run_once(store, cache, "second")
    print(f"{len(ITEMS)} episodes x 3 embedded-model agents")
    print(f"first run:  {first_wall:7.2f} s, {first.model_calls} calls, {first.cached_calls} from cache")
    print(f"second run: {second_wall:7.3f} s, {second.model_calls} calls, {second.cached_calls} from cache")
    print(f"speed-up: {first_wall / second_wall:.0f}x")


if __name__ == "__main__":
    main()
