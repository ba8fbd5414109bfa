"""Ambiguity debates on the embedded model: wall time with and without prompt-prefix reuse, and throughput.

Each phase runs the same debates (leader + two followers on ``local/smollm2-135m``, the paper's settings:
temperature 0.5, 350 max tokens, at most 5 rounds) through the real runner into a fresh store, with the
response cache off, so every call is generated:

- ``off``: every prompt is evaluated from its first token;
- ``context``: llama.cpp reuses the prefix shared with the call just before (its own behaviour);
- ``ram``: the evaluated state of every call is kept in RAM and the longest matching prefix is restored
  (the default): a follower's second-round prompt resumes its own first-round conversation, whichever
  agent spoke in between;

then ``context`` and ``ram`` again at concurrency 4, where calls of different debates interleave. Debates can take different numbers of rounds when rounding differs,
so the table gives the time per model call and the prompt tokens evaluated beside the time per debate.
For scale: the paper reports 22.5 to 28.1 s per debate for 7-9B models on a GPU.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean
from typing import Any

from lexicoord.agents.base import AgentSpec
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers import local
from lexicoord.protocols.debate import AmbiguityStudy, rotations
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.instructions import generated_instructions

MODEL = "local/smollm2-135m"


async def phase(name: str, mode: str, concurrency: int, tasks: list[dict[str, Any]], args: argparse.Namespace,
                home: Path) -> dict[str, Any]:
    for loaded in local._loaded.values():
        loaded.ram_cache = None  # every phase starts cold
        loaded.llama.reset()
    seats = [AgentSpec(name="smollm2", model=MODEL)]
    settings = {"condition": "debate", "rounds": args.rounds, "max_tokens": args.max_tokens, "temperature": 0.5}
    episodes = grid(tasks, rotations(seats), settings=[settings])
    pool = ModelPool(cache=False, prompt_cache=mode)
    store = Store(str(home / f"{name}.db"))
    runner = Runner(store, AmbiguityStudy(), models=pool, concurrency=concurrency, seed=args.seed, progress=False)
    started = time.perf_counter()
    summary = await runner.run(name, episodes, {"benchmark": name})
    wall = time.perf_counter() - started
    records = [r for r, _ in store.iter_run_events(name)]
    calls = [e for _, events in store.iter_run_events(name) for e in events if e.type == "model_call"]
    done = [r for r in records if r.status == "done"]
    return {
        "phase": name, "prompt_cache": mode, "concurrency": concurrency, "debates": len(done),
        "failed": summary.failed, "rounds": mean(r.outcome["rounds"] for r in done) if done else 0.0,
        "debate_s": mean(r.finished_at - r.started_at for r in done) if done else 0.0,
        "calls": len(calls), "call_s": sum(c.latency for c in calls) / max(1, len(calls)),
        "prompt_tokens": sum(c.usage.prompt_tokens or 0 for c in calls),
        "per_min": 60 * len(done) / wall if wall else 0.0, "wall_s": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-category", type=int, default=2, help="ambiguous instructions per type (x3 types)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=350)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--phases", nargs="+", default=["off", "context", "ram", "context-x4", "ram-x4"],
                        choices=["off", "context", "ram", "context-x4", "ram-x4"])
    args = parser.parse_args()
    tasks = [i.as_task() for i in generated_instructions(args.per_category, args.seed, unambiguous=False)]
    plan = {"off": ("off", 1), "context": ("context", 1), "ram": ("ram", 1), "context-x4": ("context", 4),
            "ram-x4": ("ram", 4)}
    rows = []
    with tempfile.TemporaryDirectory() as home:
        for name in args.phases:
            mode, conc = plan[name]
            rows.append(asyncio.run(phase(name, mode, conc, tasks, args, Path(home))))
            print(f"  {name} done ({rows[-1]['wall_s']:.0f} s)", file=sys.stderr)
    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"{len(tasks)} ambiguous instructions, one debate each ({MODEL} x 3 seats), "
          f"at most {args.rounds} rounds, {args.max_tokens} max tokens, temperature 0.5, response cache off")
    head = ["phase", "prompt_cache", "concurrency", "debates", "failed", "rounds", "debate_s", "calls", "call_s",
            "prompt_tokens", "per_min"]
    print(" ".join(f"{h:>13}" for h in head))
    for r in rows:
        print(" ".join(f"{r[h]:>13.2f}" if isinstance(r[h], float) else f"{r[h]:>13}" for h in head))
    base = next((r for r in rows if r["phase"] == "off"), None)
    for r in rows:
        if base and r is not base and r["debate_s"]:
            print(f"{r['phase']}: mean debate {r['debate_s']:.1f} s vs {base['debate_s']:.1f} s without reuse "
                  f"({base['debate_s'] / r['debate_s']:.2f}x); per call {base['call_s'] / r['call_s']:.2f}x")
    one = next((r for r in rows if r["phase"] == "ram"), None)
    four = next((r for r in rows if r["phase"] == "ram-x4"), None)
    if one and four:
        print(f"instructions per minute: {one['per_min']:.2f} at concurrency 1, {four['per_min']:.2f} at concurrency 4")


if __name__ == "__main__":
    main()
