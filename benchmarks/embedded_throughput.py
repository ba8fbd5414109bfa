"""Embedded model throughput: raw llama-cpp-python beside lexicoord, one stream and several calls at once.

Every configuration generates the same prompts at temperature 0 with the same
seed and the same max_tokens. The figure is total completion tokens per wall
second; any overhead of ours shows as the gap to the raw figure. lexicoord
serves calls at once on several llama.cpp contexts over the same mapped weights
(``-o contexts=N``); the same done by hand with raw llama-cpp-python is printed
beside it. Raw figures come from a fresh process each (see
``raw_in_fresh_process``). With the RAM prefix cache (lexicoord's default) a
few replies differ by a token or so from raw ones, because a restored prefix
and a prompt evaluated whole round differently; ``--prompt-cache off`` gives
the raw token counts. The target: through the runner, total tokens/s at
concurrency 4 at least 1.5x the best single stream (raw or ours, on every thread), in the same sittings. The machine may be shared, so each
figure is the median of ``--repeat`` sittings.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from typing import Any

import machine
from pydantic import BaseModel

from lexicoord.core import EpisodeContext, Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.models import get_model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers import local
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.seats.llm import LLMSeat

TOPICS = ["rivers", "banks", "robots", "factories", "bats", "pitchers", "light", "paper", "safety lines", "cranes",
          "bowls", "bridges"]
SETTINGS = {"temperature": 0.0, "max_tokens": 64, "seed": 1}
SPEC = "local/smollm2-135m"


def prompt(topic: str) -> str:
    return f"Write three sentences about {topic}."


def messages(topic: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt(topic)}]


class Tokens(BaseModel):
    tokens: int | None


class OneCall(Protocol):
    name = "bench-one-call"
    outcome_model = Tokens

    async def play(self, ctx: EpisodeContext) -> Tokens:
        seat = ctx.seat(ctx.spec.lineup[0])
        assert isinstance(seat, LLMSeat)
        out = await seat.ask(prompt(ctx.item["topic"]), **SETTINGS)
        return Tokens(tokens=out.usage.completion_tokens)


def raw_llama(threads: int) -> Any:
    from llama_cpp import Llama

    return Llama(model_path=str(local.resolve_path("smollm2-135m")), n_ctx=local.DEFAULT_N_CTX, n_threads=threads,
                 verbose=False)


def raw(n: int) -> tuple[int, float]:
    """Plain llama-cpp-python, one Llama with every core, one call after another on the calling thread."""
    llama = raw_llama(os.cpu_count() or 1)
    llama.create_chat_completion(messages=messages("warm up"), max_tokens=4)
    tokens, started = 0, time.perf_counter()
    for topic in TOPICS[:n]:
        tokens += llama.create_chat_completion(messages=messages(topic), **SETTINGS)["usage"]["completion_tokens"]
    wall = time.perf_counter() - started
    llama.close()
    return tokens, wall


def raw_in_worker_thread(n: int) -> tuple[int, float]:
    """The same on a worker thread: where any program that keeps an event loop free must run it."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(raw, n).result()


def raw_contexts(n: int, contexts: int, streams: int) -> tuple[int, float]:
    """Plain llama-cpp-python done as lexicoord does it: ``contexts`` Llama objects of ``cores / contexts``
    threads, each driven by a thread of its own, ``streams`` calls at once, a call taking an idle one."""
    import threading

    llamas = [raw_llama(max(1, (os.cpu_count() or 1) // contexts)) for _ in range(contexts)]
    drivers = [ThreadPoolExecutor(max_workers=1) for _ in llamas]
    for llama, driver in zip(llamas, drivers):
        driver.submit(llama.create_chat_completion, messages=messages("warm up"), max_tokens=4).result()
    free, changed = list(range(contexts)), threading.Condition()

    def call(topic: str) -> int:
        with changed:
            changed.wait_for(lambda: bool(free))
            i = free.pop()
        try:
            result = drivers[i].submit(llamas[i].create_chat_completion, messages=messages(topic), **SETTINGS).result()
        finally:
            with changed:
                free.append(i)
                changed.notify()
        return int(result["usage"]["completion_tokens"])

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=streams) as pool:
        tokens = sum(pool.map(call, TOPICS[:n]))
    wall = time.perf_counter() - started
    for llama, driver in zip(llamas, drivers):
        driver.shutdown()
        llama.close()
    return tokens, wall


async def one_stream(n: int, contexts: int, reuse: str) -> tuple[int, float]:
    model = get_model(SPEC, cache=False, contexts=contexts, prompt_cache=reuse)
    await model.generate("warm up", max_tokens=4)
    tokens, started = 0, time.perf_counter()
    for topic in TOPICS[:n]:
        out = await model.generate(prompt(topic), **SETTINGS)
        tokens += out.usage.completion_tokens or 0
    return tokens, time.perf_counter() - started


async def warm(model: Any, calls: int) -> None:
    """``calls`` short calls at once: the contexts a run of that many calls at once will use, made."""
    await asyncio.gather(*(model.generate(f"warm up {i}", max_tokens=4) for i in range(calls)))


def through_runner(n: int, concurrency: int, contexts: int, reuse: str, home: str) -> tuple[int, float]:
    store = Store(os.path.join(home, f"c{concurrency}-{time.monotonic_ns()}.db"))
    pool = ModelPool(cache=False, contexts=contexts, prompt_cache=reuse)
    # Warmed as the raw configurations are: the weights loaded and a context made for each call the run will have
    # at once (raw's four contexts are each warmed before its clock starts; a long run makes them once).
    asyncio.run(warm(pool.get(SPEC), min(concurrency, contexts)))
    runner = Runner(store, OneCall(), models=pool, concurrency=concurrency)
    episodes = grid([{"id": t, "topic": t} for t in TOPICS[:n]], [[AgentSpec(name="a", model=SPEC)]])
    started = time.perf_counter()
    summary = asyncio.run(runner.run(f"c{concurrency}", episodes))
    return summary.completion_tokens, time.perf_counter() - started


RAW = {
    "one": lambda n, contexts: raw(n),
    "worker": lambda n, contexts: raw_in_worker_thread(n),
    "contexts": lambda n, contexts: raw_contexts(n, contexts, 4),
}


def raw_in_fresh_process(kind: str, n: int, contexts: int) -> tuple[int, float]:
    """A raw figure from a process of its own: once other threads of a process have run llama.cpp, libgomp
    stops spinning at its barriers and a context of two threads runs at half speed (measured: about 120
    tok/s fresh, 57 after four one-thread contexts had generated), which would flatter us."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, __file__, "--raw", kind, "--prompts", str(n), "--contexts", str(contexts)],
                         capture_output=True, text=True, check=True).stdout
    tokens, wall = json.loads(out.strip().splitlines()[-1])
    return int(tokens), float(wall)


def cold() -> None:
    """Forget every prefix this process's loaded models keep (their RAM cache and each context's last prompt)."""
    for loaded in local._loaded.values():
        loaded.reset()


def memory_mb() -> dict[str, int]:
    """Resident and proportional set size: RSS counts the mapped weights once per context that maps them,
    PSS once in all (the pages are shared), so PSS is what the contexts really cost."""
    figures = {}
    try:
        with open("/proc/self/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                key, value, *_ = line.split()
                if key in ("Rss:", "Pss:", "Pss_Anon:", "Pss_File:"):
                    figures[key[:-1]] = int(value) // 1024
    except OSError:  # not Linux
        pass
    return figures


def memory_of(contexts: int, reuse: str) -> None:
    """In a fresh process: lexicoord's model with ``contexts`` contexts after every prompt, 4 at once."""

    async def four_at_once() -> None:
        model = get_model(SPEC, cache=False, contexts=contexts, prompt_cache=reuse)
        await asyncio.gather(*(model.generate(prompt(topic), **SETTINGS) for topic in TOPICS))

    before = memory_mb()
    asyncio.run(four_at_once())
    print(json.dumps({"before": before, "after": memory_mb()}))


def measured_memory(contexts: int, reuse: str) -> str:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, __file__, "--memory-of", str(contexts), "--prompt-cache", reuse],
                         capture_output=True, text=True, check=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])["after"]
    return ", ".join(f"{key} {value} MB" for key, value in figures.items()) or "not measured (no /proc)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=len(TOPICS), help="prompts per configuration (at most 12)")
    parser.add_argument("--contexts", type=int, default=local.default_contexts(local.resolve_path("smollm2-135m")),
                        help="llama.cpp contexts for lexicoord and the raw several-contexts row (default: lexicoord's)")
    parser.add_argument("--repeat", type=int, default=3, help="sittings; every figure is the median")
    parser.add_argument("--prompt-cache", default="ram", choices=local.PROMPT_CACHE_MODES,
                        help="lexicoord's prompt-prefix reuse (default: ram, lexicoord's default)")
    parser.add_argument("--memory-of", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--raw", choices=sorted(RAW), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.raw:
        print(json.dumps(RAW[args.raw](min(args.prompts, len(TOPICS)), args.contexts)))
        return
    if args.memory_of:
        memory_of(args.memory_of, args.prompt_cache)
        return
    n, contexts, reuse = min(args.prompts, len(TOPICS)), args.contexts, args.prompt_cache
    configurations: list[tuple[str, Callable[[str], tuple[int, float]]]] = [
        ("raw llama-cpp-python, one stream", lambda _: raw_in_fresh_process("one", n, contexts)),
        ("raw llama-cpp-python, worker thread", lambda _: raw_in_fresh_process("worker", n, contexts)),
        (f"raw llama-cpp-python, {contexts} contexts, 4 at once",
         lambda _: raw_in_fresh_process("contexts", n, contexts)),
        ("lexicoord Model.generate, one stream", lambda _: asyncio.run(one_stream(n, contexts, reuse))),
    ] + [(f"lexicoord runner, concurrency {c}", lambda home, c=c: through_runner(n, c, contexts, reuse, home))
         for c in (1, 2, 4)]
    rates: dict[str, list[float]] = {name: [] for name, _ in configurations}
    tokens: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as home:
        os.environ["LEXICOORD_HOME"] = home
        for _ in range(args.repeat):
            for name, measure in configurations:
                cold()  # no configuration or sitting starts from the prefixes another left in the cache
                got, wall = measure(home)
                tokens[name] = got
                rates[name].append(got / wall)
                gc.collect()
    print(f"llama-cpp-python {version('llama-cpp-python')}, {os.cpu_count()} CPU threads; {n} prompts, "
          f"{SETTINGS['max_tokens']} max tokens, temperature 0, seed {SETTINGS['seed']}; lexicoord with up to "
          f"{contexts} contexts, made as calls at once need them, each call on cores / calls in flight threads, "
          f"prompt_cache={reuse}, the cache emptied before every configuration; median of {args.repeat} sitting(s)")
    median = {name: statistics.median(values) for name, values in rates.items()}
    base = median["raw llama-cpp-python, one stream"]
    for name, rate in median.items():
        spread = f"{min(rates[name]):.0f}-{max(rates[name]):.0f}"
        print(f"{name:46s} {tokens[name]:4d} tokens {rate:6.1f} tok/s (range {spread:>7s}) {rate / base:5.2f} x raw")
    four = median["lexicoord runner, concurrency 4"]
    singles = ("raw llama-cpp-python, one stream", "raw llama-cpp-python, worker thread",
               "lexicoord Model.generate, one stream", "lexicoord runner, concurrency 1")
    # The verdict is against the best single stream, every one of them on all the machine's threads, in the same
    # sittings (each sitting plays every configuration in turn): against the runner's own concurrency 1 alone, a
    # slow single stream would flatter the figure.
    best = max(singles, key=lambda name: median[name])
    verdict = "PASS" if four >= 1.5 * median[best] else "MISS"
    each = ", ".join(f"{a / max(rates[name][i] for name in singles):.2f}"
                     for i, a in enumerate(rates["lexicoord runner, concurrency 4"]))
    print(f"runner concurrency 4 / the best single stream ({best}, every thread): {four / median[best]:.2f}x total "
          f"tok/s (target >= 1.5x: {verdict}); per sitting, against that sitting's best single stream: {each}")
    one = median["lexicoord runner, concurrency 1"]
    print(f"runner concurrency 4 / runner concurrency 1: {four / one:.2f}x")
    ours = median["lexicoord Model.generate, one stream"]
    print(f"lexicoord one stream / raw one stream: {ours / base:.2f} (target: not slower, >= 1.00 within noise)")
    for count in sorted({1, contexts}):
        print(f"memory of a fresh process after these prompts on {count} context(s): {measured_memory(count, reuse)}")


if __name__ == "__main__":
    machine.run(main)
