"""Coordination games per minute on the embedded model, and where the time goes.

Plays the same built-in items with three embedded-model agents at concurrency 1 and 4 (the three agents of
a game answer at once, so several contexts generate together even at concurrency 1). A generation's thread
time is split by where it is spent, measured around the calls on the threads that make them and summed over
the contexts:

- **inside llama.cpp**: the C library computing (``llama_decode``: prompt and every generated token);
- **C sampling and grammar**: ``llama_sampler_sample`` (the sampler chain, with the JSON grammar when the
  call asks for one), also inside the C library but not the model's arithmetic;
- **prefix cache copies**: saving and restoring llama.cpp's state for prompt-prefix reuse (``save_state``,
  ``load_state``: C copies driven from Python, with numpy);
- **llama-cpp-python's Python**: the rest of a generation (chat template, tokenising, logits handling,
  the loop around the C calls);
- **lexicoord alone**: the wall time when no generation is under way (prompts, parsing, events, the store,
  scheduling); lexicoord's work while a generation runs overlaps it and is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import llama_cpp
import machine

from lexicoord.core.spec import AgentSpec
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers import local
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items

PARTS = ("generation", "decode", "sample", "cache")
spent = dict.fromkeys(PARTS, 0.0)
calls = {"generations": 0}
#: Wall time with at least one generation under way: the rest is lexicoord's alone.
busy = {"seconds": 0.0, "in_flight": 0, "since": 0.0}
_lock = threading.Lock()


def timed(part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        if part == "generation":
            with _lock:
                busy["in_flight"] += 1
                if busy["in_flight"] == 1:
                    busy["since"] = started
        try:
            return fn(*args, **kwargs)
        finally:
            ended = time.perf_counter()
            with _lock:
                spent[part] += ended - started
                if part == "generation":
                    calls["generations"] += 1
                    busy["in_flight"] -= 1
                    if busy["in_flight"] == 0:
                        busy["seconds"] += ended - busy["since"]

    return wrapper


local.LocalProvider._complete = timed("generation", local.LocalProvider._complete)  # type: ignore[method-assign]
llama_cpp.llama_cpp.llama_decode = timed("decode", llama_cpp.llama_cpp.llama_decode)
llama_cpp.llama_cpp.llama_sampler_sample = timed("sample", llama_cpp.llama_cpp.llama_sampler_sample)
llama_cpp.Llama.save_state = timed("cache", llama_cpp.Llama.save_state)  # type: ignore[method-assign]
llama_cpp.Llama.load_state = timed("cache", llama_cpp.Llama.load_state)  # type: ignore[method-assign]


def reset() -> None:
    with _lock:
        spent.update(dict.fromkeys(PARTS, 0.0))
        calls["generations"] = 0
        busy.update(seconds=0.0, in_flight=0, since=0.0)


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
            pool = ModelPool(cache=False)
            asyncio.run(pool.get("local/smollm2-135m").generate("warm up", max_tokens=2))
            reset()
            runner = Runner(Store(os.path.join(home, f"c{concurrency}.db")), CoordinationGame(), models=pool,
                            concurrency=concurrency, seed=5)
            started = time.perf_counter()
            summary = asyncio.run(runner.run(f"c{concurrency}", grid(items, [lineup], settings=[{"clarification_bound": args.bound}])))
            wall = time.perf_counter() - started
            python = spent["generation"] - spent["decode"] - spent["sample"] - spent["cache"]
            print(f"concurrency {concurrency}: {summary.done} games in {wall:.1f} s = {summary.done / wall * 60:.1f} "
                  f"games/min; {calls['generations']} generations, {summary.completion_tokens} completion tokens")
            total = spent["generation"] or 1.0
            print(f"  generations: {spent['generation']:.1f} s of thread time (summed over the contexts generating at "
                  f"once), of which:")
            for label, seconds in (("inside llama.cpp (llama_decode)", spent["decode"]),
                                   ("C sampling and grammar", spent["sample"]),
                                   ("prefix cache copies", spent["cache"]),
                                   ("llama-cpp-python's Python", python)):
                print(f"    {label:34} {seconds:6.1f} s ({seconds / total:6.1%})")
            alone = wall - busy["seconds"]
            print(f"  wall time with no generation under way (lexicoord alone): {alone:.1f} s ({alone / wall:.1%})")

if __name__ == "__main__":
    machine.run(main)
