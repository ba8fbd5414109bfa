"""Embedded model throughput: raw llama-cpp-python beside lexicoord, one stream and through the runner.

Every configuration generates the same prompts at temperature 0 with the same
seed, so completion lengths match and tokens/s compare like with like.
Completion tokens per wall second are reported; any overhead of ours shows as
the gap to the raw figure. lexicoord serves calls at once on several llama.cpp
contexts (``-o contexts=N``, default one per core, at most 4); the same done by
hand with raw llama-cpp-python is printed beside it, and the runner's total
tokens/s at concurrency 4 over concurrency 1 is checked against 1.5x.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

from lexicoord.core import EpisodeContext, Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.models import get_model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.local import default_contexts, resolve_path
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.seats.llm import LLMSeat

TOPICS = ["rivers", "banks", "robots", "factories", "bats", "pitchers", "light", "paper", "safety lines", "cranes"]
SETTINGS = {"temperature": 0.0, "max_tokens": 64, "seed": 1}


def prompt(topic: str) -> str:
    return f"Write three sentences about {topic}."


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


def raw(n: int) -> tuple[int, float]:
    """Plain llama-cpp-python on the calling thread."""
    from llama_cpp import Llama

    llama = Llama(model_path=str(resolve_path("smollm2-135m")), n_ctx=4096, n_threads=os.cpu_count(), verbose=False)
    llama.create_chat_completion(messages=[{"role": "user", "content": "warm up"}], max_tokens=4)
    tokens, started = 0, time.perf_counter()
    for topic in TOPICS[:n]:
        result = llama.create_chat_completion(messages=[{"role": "user", "content": prompt(topic)}], **SETTINGS)
        tokens += result["usage"]["completion_tokens"]
    return tokens, time.perf_counter() - started


def raw_contexts(n: int, contexts: int, streams: int) -> tuple[int, float]:
    """Plain llama-cpp-python, ``contexts`` Llama objects of one thread each, ``streams`` calls at once."""
    from llama_cpp import Llama

    threads = max(1, (os.cpu_count() or 2) // contexts)
    llamas = [Llama(model_path=str(resolve_path("smollm2-135m")), n_ctx=4096, n_threads=threads, verbose=False)
              for _ in range(contexts)]
    for llama in llamas:
        llama.create_chat_completion(messages=[{"role": "user", "content": "warm up"}], max_tokens=4)
    drivers = [ThreadPoolExecutor(max_workers=1) for _ in llamas]

    def call(i: int) -> int:
        llama = llamas[i % contexts]
        result = drivers[i % contexts].submit(
            llama.create_chat_completion, messages=[{"role": "user", "content": prompt(TOPICS[i])}], **SETTINGS
        ).result()
        return int(result["usage"]["completion_tokens"])

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=streams) as pool:
        tokens = sum(pool.map(call, range(n)))
    return tokens, time.perf_counter() - started


def raw_in_worker_thread(n: int) -> tuple[int, float]:
    """The same, on a worker thread: where any program that keeps an event loop free must run it."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(raw, n).result()


async def one_stream(n: int) -> tuple[int, float]:
    model = get_model("local/smollm2-135m", cache=False)
    await model.generate("warm up", max_tokens=4)
    tokens, started = 0, time.perf_counter()
    for topic in TOPICS[:n]:
        out = await model.generate(prompt(topic), **SETTINGS)
        tokens += out.usage.completion_tokens or 0
    return tokens, time.perf_counter() - started


def through_runner(n: int, concurrency: int, home: str) -> tuple[int, float]:
    store = Store(os.path.join(home, f"c{concurrency}.db"))
    pool = ModelPool(cache=False)
    asyncio.run(pool.get("local/smollm2-135m").generate("warm up", max_tokens=4))
    runner = Runner(store, OneCall(), models=pool, concurrency=concurrency, progress=False)
    episodes = grid([{"id": t, "topic": t} for t in TOPICS[:n]], [[AgentSpec(name="a", model="local/smollm2-135m")]])
    started = time.perf_counter()
    summary = asyncio.run(runner.run(f"c{concurrency}", episodes))
    return summary.completion_tokens, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--prompts", type=int, default=len(TOPICS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["LEXICOORD_HOME"] = home
        rows = [("raw llama-cpp-python, one stream", *raw(args.prompts))]
        rows.append(("raw llama-cpp-python, worker thread", *raw_in_worker_thread(args.prompts)))
        contexts = default_contexts()
        rows.append((f"raw llama-cpp-python, {contexts} contexts, 4 at once",
                     *raw_contexts(args.prompts, contexts, 4)))
        rows.append(("lexicoord Model.generate, one stream", *asyncio.run(one_stream(args.prompts))))
        by_concurrency = {}
        for c in (1, 2, 4):
            by_concurrency[c] = through_runner(args.prompts, c, home)
            rows.append((f"lexicoord runner, concurrency {c}", *by_concurrency[c]))
    print(f"{args.prompts} prompts, {SETTINGS['max_tokens']} max tokens, temperature 0, {os.cpu_count()} CPU threads, "
          f"lexicoord's default {contexts} contexts")
    base = rows[0][1] / rows[0][2]
    for name, tokens, wall in rows:
        rate = tokens / wall
        print(f"{name:44s} {tokens:5d} tokens {wall:7.2f} s {rate:7.1f} tok/s ({rate / base:.2f} x raw)")
    one, four = (by_concurrency[c][0] / by_concurrency[c][1] for c in (1, 4))
    verdict = "PASS" if four >= 1.5 * one else "MISS"
    print(f"runner concurrency 4 / concurrency 1: {four / one:.2f}x total tok/s (target >= 1.5x: {verdict})")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
