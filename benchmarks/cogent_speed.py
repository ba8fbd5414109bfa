"""COGENT's speed, in two parts (``--part overhead``, ``--part embedded`` or both):

- **overhead**: 500 GSM8K-like items x SINGLE, VANILLA and COGENT through the real protocol and runner, with a
  scripted model that sleeps a fixed latency per call and coins two terms per pass (so candidates, shares and
  uses are all recorded). A COGENT episode's calls are sequential, so the ideal wall time is
  (all calls x latency) / concurrency; the ratio above 1 is what the runner, the events and the store cost
  (with the collector tuned as ``cogent run`` tunes it). Goal: <= 1.02. The same schedule in plain asyncio
  (sleeps only) is printed beside it: the floor no runner can beat.
- **embedded**: items per minute for each variant on the embedded model (SmolLM2-135M, greedy, the paper's
  R, K, R_c = 3, 2, 2), with llama.cpp prompt-prefix reuse in RAM and with it off. COGENT's coining passes
  re-read the task and the agent's latest response, so reuse should pay there most. The model's accuracy on
  GSM8K is near zero; that is a fact about a 135M model, not a finding, and it is not printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import machine

from lexicoord import event_loop
from lexicoord.collector import tune_for_long_runs
from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.cogent import CogentSettings, CogentStudy
from lexicoord.protocols.cogent.rules import calls
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

VARIANTS = ("single", "vanilla", "cogent")
CALLS = {v: calls(CogentSettings(variant=v)) for v in VARIANTS}


#: ``--extra-cpu-us``: CPU the scripted model burns per call on top, to see how the ratio answers to per-call work.
EXTRA_CPU = [0.0]


def reply(messages: Any, config: Any) -> str:
    if EXTRA_CPU[0]:
        end = time.perf_counter() + EXTRA_CPU[0]
        while time.perf_counter() < end:
            pass
    agent = current_agent.get() or "A"
    prompt = messages[-1].content
    if "[PRIVATE NOTE" in prompt:
        return (f"[PART 1] The {agent.lower()}eggleft count is 9; {agent.lower()}unitprice is 2.\n[PART 2]\n"
                f"{agent.lower()}eggleft = eggs left to sell\n{agent.lower()}unitprice = the price of one egg\n")
    return f"{agent} uses aeggleft and bunitprice: 9 x 2.\n#### 18"


class Wakes:
    """When each call's wait for its model ended, against when it was due: how late the event loop woke each chain
    of calls (``--explain``). One list of (due, late) per task: a worker's episodes are one chain of calls."""

    def __init__(self) -> None:
        self.by_task: dict[object, list[tuple[float, float]]] = {}
        self.begin = self.end = 0.0  # the run's (or floor's) start and end, on the same clock

    async def sleep(self, seconds: float) -> None:
        due = time.perf_counter() + seconds
        await asyncio.sleep(seconds)
        self.by_task.setdefault(asyncio.current_task(), []).append((due, time.perf_counter() - due))

    def parts(self, latency: float) -> dict[str, float]:
        """The wall time of the chain that finished last, in parts that add up to it exactly: before its first wait,
        its waits as asked, how late they woke, its own work between them, and after its last wake to the run's
        end. Only this chain's parts are the wall's: the others ended sooner."""
        chain = max(self.by_task.values(), key=lambda c: c[-1][0] + c[-1][1])
        woke = [due + late for due, late in chain]
        started = [due - latency for due, _ in chain]
        return {
            "before its first call": started[0] - self.begin,
            "its waits as asked": latency * len(chain),
            "woke late": sum(late for _, late in chain),
            "its own work between calls": sum(s - w for w, s in zip(woke, started[1:])),
            "after its last call": self.end - woke[-1],
        }

    def report(self, name: str, chains: int) -> None:
        late = sorted(x for chain in self.by_task.values() for _, x in chain)
        if not late:
            return
        at = lambda q: late[min(len(late) - 1, int(q * len(late)))] * 1e3  # noqa: E731
        # A burst: a 50 ms stretch in which at least half the chains woke more than 5 ms late (chains, not waits:
        # at a short latency one chain waits several times in a stretch).
        windows: dict[int, list[tuple[object, float]]] = {}
        for task, chain in self.by_task.items():
            for due, x in chain:
                if x > 0.005:
                    windows.setdefault(int(due / 0.05), []).append((task, x))
        burst = sum(sum(x for _, x in v) for v in windows.values() if len({t for t, _ in v}) >= chains / 2)
        print(f"[explain] {name}: {len(late)} waits woke late by mean {statistics.mean(late) * 1e3:.2f} ms "
              f"(p50 {at(0.5):.2f}, p90 {at(0.9):.2f}, p99 {at(0.99):.2f}); per chain {sum(late) / chains:.3f} s; "
              f"{100 * burst / max(sum(late), 1e-9):.0f}% of it in bursts where half the chains or more woke late together")


class TimedProvider(ScriptedProvider):
    """The scripted model, its latency waited in :class:`Wakes` (the same ``asyncio.sleep``)."""

    def __init__(self, wakes: Wakes, latency: float) -> None:
        super().__init__("bench", reply)
        self.wakes, self.wait = wakes, latency

    async def generate(self, messages: Any, config: Any) -> Any:
        await self.wakes.sleep(self.wait)
        return await super().generate(messages, config)


async def overhead_once(items: int, latency: float, concurrency: int, home: str,
                        wakes: Wakes | None = None) -> tuple[float, int, int]:
    pool = ModelPool(cache=False)
    model = ScriptedProvider("bench", reply, latency=latency) if wakes is None else TimedProvider(wakes, latency)
    pool.add(Model(model), "scripted/bench")
    store = Store(os.path.join(home, "bench.db"))
    duo = [AgentSpec(name=n, model="scripted/bench") for n in ("A", "B")]
    tasks = [{"id": f"q{i}", "question": f"Question {i}: 16 eggs, 7 used, $2 each?", "answer": "18"}
             for i in range(items)]
    episodes = []
    for variant in sorted(VARIANTS, key=CALLS.__getitem__, reverse=True):  # as `cogent run` orders them
        episodes += grid(tasks, [duo[:1] if variant == "single" else duo],
                         settings=[{"variant": variant, "task": "gsm8k"}])
    runner = Runner(store, CogentStudy(), models=pool, concurrency=concurrency)
    started = time.perf_counter()
    summary = await runner.run("bench", episodes)
    ended = time.perf_counter()
    if wakes is not None:
        wakes.begin, wakes.end = started, ended
    return ended - started, summary.done, summary.model_calls


async def floor(items: int, latency: float, concurrency: int, wakes: Wakes | None = None) -> float:
    """The same schedule in plain asyncio (an episode is its calls' sleeps one after another, episodes in the
    runner's order, ``concurrency`` at once; no protocol, models, events or store): what no runner can beat."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for variant in sorted(VARIANTS, key=CALLS.__getitem__, reverse=True):
        for _ in range(items):
            queue.put_nowait(CALLS[variant])

    async def worker() -> None:
        while not queue.empty():
            for _ in range(queue.get_nowait()):
                await (asyncio.sleep(latency) if wakes is None else wakes.sleep(latency))

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    ended = time.perf_counter()
    if wakes is not None:
        wakes.begin, wakes.end = started, ended
    return ended - started


def overhead(args: argparse.Namespace) -> None:
    tune_for_long_runs()  # as `lexicoord cogent run` does
    walls = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as home:
            os.environ["LEXICOORD_HOME"] = home
            wall, done, calls = event_loop.run(overhead_once(args.items, args.latency, args.concurrency, home))
            walls.append(wall)
    ideal = args.items * sum(CALLS.values()) * args.latency / args.concurrency
    wall = statistics.median(walls)
    print(f"[overhead] {done} episodes ({args.items} items x {len(VARIANTS)} variants), {calls} model calls, "
          f"latency {args.latency}s, concurrency {args.concurrency}, on {event_loop.name()} as `cogent run` "
          f"({event_loop.VARIABLE} picks the loop)")
    print(f"[overhead] walls {', '.join(f'{w:.2f}' for w in walls)} s; median {wall:.2f} s; ideal {ideal:.2f} s; "
          f"ratio {wall / ideal:.3f} (goal <= 1.02)")
    bare = event_loop.run(floor(args.items, args.latency, args.concurrency))
    print(f"[overhead] plain-asyncio floor for the same schedule (same loop): {bare:.2f} s, ratio {bare / ideal:.3f}")
    if args.explain:
        explain(args, ideal)


def explain(args: argparse.Namespace, ideal: float) -> None:
    """Where the time over the ideal goes: each model call's wait ends some time after it was due, because the
    event loop was busy with other chains' work (or the machine's timers are late); in plain asyncio only the
    latter. Printed for one more run of each, side by side."""
    ours, bare = Wakes(), Wakes()
    with tempfile.TemporaryDirectory() as home:
        os.environ["LEXICOORD_HOME"] = home
        wall, _, _ = event_loop.run(overhead_once(args.items, args.latency, args.concurrency, home, ours))
    floor_wall = event_loop.run(floor(args.items, args.latency, args.concurrency, bare))
    print(f"[explain] this run: ratio {wall / ideal:.3f}; its floor: ratio {floor_wall / ideal:.3f}")
    ours.report("lexicoord", args.concurrency)
    bare.report("plain asyncio", args.concurrency)
    for name, wakes, total in (("lexicoord", ours, wall), ("plain asyncio", bare, floor_wall)):
        parts = wakes.parts(args.latency)
        print(f"[explain] {name}, the chain that ended last: "
              + "; ".join(f"{part} {seconds:.3f} s" for part, seconds in parts.items())
              + f"; together {sum(parts.values()):.3f} s of a wall of {total:.3f} s")


def embedded(args: argparse.Namespace) -> None:
    from lexicoord.tasks.benchmarks import GSM8K, seeded_slice

    data = Path(args.data)
    if not data.is_file():
        print(f"[embedded] not measured: no GSM8K file at {data} (pass --data PATH or set LEXICOORD_GSM8K; "
              "the public copy is described in ../shared/data/README)")
        return
    items = [GSM8K().as_task(i) for i in seeded_slice(GSM8K().load(str(data)), args.embedded_items, 0)]
    duo = [AgentSpec(name=n, model="local/smollm2-135m") for n in ("A", "B")]
    print(f"[embedded] {len(items)} GSM8K items, SmolLM2-135M, greedy, max_tokens {args.max_tokens}, "
          f"R, K, R_c = 3, 2, 2, concurrency 1")
    results: dict[str, dict[str, float]] = {}
    for cache in ("ram", "off"):
        for variant in args.variants:
            with tempfile.TemporaryDirectory() as home:
                os.environ["LEXICOORD_HOME"] = home
                pool = ModelPool(cache=False, prompt_cache=cache)
                settings = [{"variant": variant, "task": "gsm8k", "temperature": 0.0, "max_tokens": args.max_tokens}]
                episodes = grid(items, [duo[:1] if variant == "single" else duo], settings=settings)
                runner = Runner(Store(os.path.join(home, "e.db")), CogentStudy(), models=pool, concurrency=1)
                started = time.perf_counter()
                summary = event_loop.run(runner.run("e", episodes))
                wall = time.perf_counter() - started
                tokens = sum(c.usage.completion_tokens or 0 for e in runner.store.episodes("e")
                             for c in runner.store.events(e.id) if c.type == "model_call")  # type: ignore[attr-defined]
            per_min = summary.done / wall * 60
            results.setdefault(variant, {})[cache] = per_min
            print(f"[embedded] prefix reuse {cache:>3}: {variant:>7}: {summary.done} items in {wall:6.1f} s = "
                  f"{per_min:5.2f} items/min ({summary.model_calls} calls, {tokens} generated tokens)")
    for variant, r in results.items():
        print(f"[embedded] {variant:>7}: reuse on / off = {r['ram'] / r['off']:.2f}x items per minute")
    print(json.dumps({"embedded_items_per_minute": results}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=["overhead", "embedded", "both"], default="both")
    parser.add_argument("--items", type=int, default=500, help="overhead: items per variant")
    parser.add_argument("--latency", type=float, default=0.1, help="overhead: seconds per scripted call")
    parser.add_argument("--concurrency", type=int, default=50, help="overhead: episodes at once")
    parser.add_argument("--repeat", type=int, default=1, help="overhead: runs; the median is the figure")
    parser.add_argument("--explain", action="store_true",
                        help="overhead: one more run, and its floor, saying how late each call's wait woke")
    parser.add_argument("--extra-cpu-us", type=float, default=0.0,
                        help="overhead: CPU the scripted model burns per call on top (microseconds)")
    parser.add_argument("--embedded-items", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS), help="embedded: which")
    default_data = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k" / "test.jsonl"
    parser.add_argument("--data", default=os.environ.get("LEXICOORD_GSM8K", str(default_data)),
                        help="GSM8K test.jsonl (default ../shared/data/gsm8k/test.jsonl)")
    args = parser.parse_args()
    EXTRA_CPU[0] = args.extra_cpu_us / 1e6
    if args.part in ("overhead", "both"):
        overhead(args)
    if args.part in ("embedded", "both"):
        embedded(args)


if __name__ == "__main__":
    machine.run(main)
