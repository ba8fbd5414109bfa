"""Embedded model throughput: raw llama-cpp-python beside lexicoord, one stream and through the runner.

Every configuration generates the same prompts at temperature 0 with the same
seed, so completion lengths match and tokens/s compare like with like.
Completion tokens per wall second are reported; any overhead of ours shows as
the gap to the raw figure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

from lexicoord.core import EpisodeContext, Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.models import get_model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.local import resolve_path
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
        rows.append(("lexicoord Model.generate, one stream", *asyncio.run(one_stream(args.prompts))))
        for c in (1, 2, 4):
            rows.append((f"lexicoord runner, concurrency {c}", *through_runner(args.prompts, c, home)))
    print(f"{args.prompts} prompts, {SETTINGS['max_tokens']} max tokens, temperature 0, {os.cpu_count()} CPU threads")
    base = rows[0][1] / rows[0][2]
    for name, tokens, wall in rows:
        rate = tokens / wall
        print(f"{name:40s} {tokens:5d} tokens {wall:7.2f} s {rate:7.1f} tok/s ({rate / base:.2f} x raw)")


if __name__ == "__main__":
    main()
