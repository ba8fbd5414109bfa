"""Werewolf on the embedded model: calls, tokens and wall time per game for ORIGIN and COGENT, and the share of
wall time spent inside the model (the sum of model-call latencies over the game's wall time).

One game per condition with the same seed (the same deal), SmolLM2-135M in all 8 seats, the default rules
unless ``--max-days`` says otherwise, response cache off. The model's play is weak; this measures cost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

import machine

from lexicoord.core.spec import AgentSpec
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.werewolf import WerewolfGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-days", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=96, help="per speech")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    lineup = [AgentSpec(name=f"Player {i}", model="local/smollm2-135m") for i in range(1, 9)]
    print(f"[werewolf] 8 players on SmolLM2-135M, max_days {args.max_days}, speeches up to {args.max_tokens} tokens, "
          f"seed {args.seed}, concurrency 1")
    for condition in ("origin", "cogent"):
        with tempfile.TemporaryDirectory() as home:
            os.environ["LEXICOORD_HOME"] = home
            store = Store(os.path.join(home, "w.db"))
            runner = Runner(store, WerewolfGame(), models=ModelPool(cache=False), concurrency=1)
            settings = {"condition": condition, "max_days": args.max_days, "max_tokens": args.max_tokens}
            started = time.perf_counter()
            asyncio.run(runner.run("w", grid([{"id": "g", "seed": args.seed}], [lineup], settings=[settings])))
            wall = time.perf_counter() - started
            [(record, events)] = list(store.iter_run_events("w"))
            calls = [e for e in events if isinstance(e, ModelCallEvent)]
            inside = sum(c.latency for c in calls)
            by_phase: dict[str, int] = {}
            for c in calls:
                by_phase[c.phase or "?"] = by_phase.get(c.phase or "?", 0) + 1
            outcome = record.outcome or {}
            print(f"[werewolf] {condition:>6}: {outcome.get('winner')} after {outcome.get('days')} day(s); "
                  f"{len(calls)} calls ({', '.join(f'{k} {v}' for k, v in sorted(by_phase.items()))}); "
                  f"{record.prompt_tokens} prompt + {record.completion_tokens} completion tokens; "
                  f"wall {wall:.1f} s, {100 * inside / wall:.1f}% inside the model; "
                  f"{outcome.get('terms_public', 0)} public and {outcome.get('terms_wolf', 0)} wolf terms")


if __name__ == "__main__":
    machine.run(main)
