"""The agreement gate's own cost, over the model calls it makes.

Models are scripted with a fixed latency (``--latency``, 0.2 s by default), so every second that is not a
model's is the gate's: its store writes (the check's row, each answer's journal entry, the episode), the
policy's bookkeeping and the event loop. Printed:

1. overhead: ``--checks`` sequential checks under ``single`` (one model call each): the wall time of each
   check minus its model time, median and p99, as a share of the model time (target <= 5 %);
2. ``adaptive`` against ``debate`` on instructions the models call clear: model calls and wall time per check
   (the adaptive trigger's point: one call instead of a debate's three or more);
3. ``--concurrent`` checks at once over HTTP against a real server on loopback (this script in a child
   process, ``lexicoord.gate.http`` under uvicorn): each check's wall time minus its model time, p50 / p99.

Models: ``scripted`` replies that say clear (never a stand-in for a model's judgement; the point is the cost).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLEAR = {"reasoning": "The scene has one mug.", "verdict": "clear", "question": ""}
AGREE = {"stance": "agree", "reasoning": "Yes.", "alternative": ""}


def _pool(latency: float) -> Any:
    from lexicoord.models import Model
    from lexicoord.models.pool import ModelPool
    from lexicoord.models.providers.scripted import ScriptedProvider

    def reply(messages: Any, config: Any) -> dict[str, str]:
        return AGREE if "stance" in str(config.json_schema) else CLEAR

    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("bench", reply, latency=latency)), "scripted/bench")
    return pool


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def overhead(checks: int, latency: float, db: str) -> None:
    from lexicoord.gate import Gate

    async with Gate("single", ["scripted/bench"], db=db, pool=_pool(latency)) as gate:
        await gate.check("Warm up: open the door.")
        extra = []
        for i in range(checks):
            started = time.perf_counter()
            v = await gate.check(f"Put mug {i} on the shelf.", context="A kitchen.")
            extra.append(time.perf_counter() - started - v.model_calls * latency)
    model = latency
    print(f"1. overhead of a single check ({checks} checks, one {latency:g} s model call each):")
    print(f"   median {statistics.median(extra) * 1000:.1f} ms ({statistics.median(extra) / model:.1%} of the model "
          f"time), p99 {_pct(extra, 0.99) * 1000:.1f} ms ({_pct(extra, 0.99) / model:.1%}); target <= 5 %")


async def adaptive_vs_debate(checks: int, latency: float, db: str) -> None:
    from lexicoord.gate import Gate

    print(f"2. on instructions the models call clear ({checks} checks each, {latency:g} s per call):")
    for policy in ("adaptive", "debate"):
        async with Gate(policy, ["scripted/bench"], db=db, pool=_pool(latency)) as gate:
            calls, walls = [], []
            for i in range(checks):
                started = time.perf_counter()
                v = await gate.check(f"Wipe table {i}.")
                walls.append(time.perf_counter() - started)
                calls.append(v.model_calls)
        print(f"   {policy:8s} {statistics.fmean(calls):.1f} model calls, {statistics.fmean(walls):.3f} s per check")


def serve(port: int, latency: float, db: str) -> None:
    """The child process: the gate's HTTP routes under uvicorn, on scripted models."""
    import uvicorn
    from fastapi import FastAPI

    from lexicoord.gate import Gate
    from lexicoord.gate.http import gate_routes

    app = FastAPI()
    gate = Gate("single", ["scripted/bench"], db=db, pool=_pool(latency))
    app.include_router(gate_routes(gate, key=None))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


async def over_http(concurrent: int, latency: float, db: str) -> None:
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--latency", str(latency), "--db", db])
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            for _ in range(200):
                try:
                    await client.get("/api/gate/none")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            await client.post("/api/gate/check", json={"instruction": "Warm up."})

            async def one(i: int) -> float:
                started = time.perf_counter()
                r = await client.post("/api/gate/check", json={"instruction": f"Put mug {i} on shelf {i}."})
                body = r.json()
                assert r.status_code == 200 and body["status"] == "clear", body
                return time.perf_counter() - started - body["model_calls"] * latency

            started = time.perf_counter()
            extra = await asyncio.gather(*(one(i) for i in range(concurrent)))
            wall = time.perf_counter() - started
    finally:
        child.terminate()
        child.wait(10)
    print(f"3. {concurrent} checks at once over HTTP (one {latency:g} s call each), wall {wall:.2f} s:")
    print(f"   overhead per check p50 {_pct(list(extra), 0.5) * 1000:.0f} ms, p99 {_pct(list(extra), 0.99) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=30, help="sequential checks per measure (default 30)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds every scripted model call takes")
    parser.add_argument("--concurrent", type=int, default=100, help="checks at once over HTTP (default 100)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency, args.db)
        return
    folder = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    os.environ.setdefault("LEXICOORD_HOME", str(folder))
    asyncio.run(overhead(args.checks, args.latency, str(folder / "a.db")))
    asyncio.run(adaptive_vs_debate(args.checks, args.latency, str(folder / "b.db")))
    asyncio.run(over_http(args.concurrent, args.latency, str(folder / "c.db")))


if __name__ == "__main__":
    main()
