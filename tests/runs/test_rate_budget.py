"""One rate budget per model per run, shared by every process of the run through the store.

Real processes on a real SQLite file and a real PostgreSQL server: however many processes draw on a model's
budget, together they never send more than its burst plus what its rate has added since.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from lexicoord.errors import ConfigError
from lexicoord.models.budget import RateLimit
from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.rate_budget import StoreBudget, spent
from lexicoord.runs.runner import Runner
from lexicoord.runs.schema import RateBucketRow
from lexicoord.runs.store import Store
from tests.runs.toy import Toy, lineup

ROOT = Path(__file__).resolve().parents[2]

DRAW = """
import asyncio, json, sys, time
from lexicoord.models.budget import RateLimit
from lexicoord.runs.rate_budget import StoreBudget
from lexicoord.runs.store import Store

url, n = sys.argv[1], int(sys.argv[2])
budget = StoreBudget(Store(url), "shared", "provider/model", RateLimit(requests_per_minute=600))
print("ready", flush=True)
sys.stdin.readline()  # every process starts drawing at the same moment

async def main():
    stamps = []
    for _ in range(n):
        await budget.acquire()
        stamps.append(time.time())
    print(json.dumps(stamps))

asyncio.run(main())
"""


def open_run(url: str, run_id: str = "shared") -> Store:
    store = Store(url)
    store.open_run(run_id, "toy", {}, 1, {}, ())
    return store


def test_four_processes_on_one_budget_never_exceed_its_burst_plus_its_rate(store_url: str) -> None:
    open_run(store_url)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", DRAW, store_url, "40"], cwd=ROOT, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready", p.stderr.read() if p.stderr else ""
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    stamps = sorted(t for p in procs for t in json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]))
    assert len(stamps) == 160 and all(p.returncode == 0 for p in procs)
    # Ten a second with a burst of a hundred: 160 requests take at least six seconds, whoever sends them.
    first = stamps[0]
    for i, t in enumerate(stamps):
        assert i + 1 <= 100 + 10 * (t - first) + 1.5, f"request {i + 1} went {t - first:.2f} s in: over the budget"
    assert stamps[-1] - first >= 5.5
    assert stamps[-1] - first < 20, "a process waited far longer than the budget asked"
    [drawn] = spent(Store(store_url), "shared")
    assert (drawn.model, drawn.requests) == ("provider/model", 160)


async def test_tokens_one_process_spent_make_another_wait(store_url: str) -> None:
    store = open_run(store_url)
    limit = RateLimit(tokens_per_minute=6000)  # a hundred a second, a burst of a thousand
    mine, theirs = StoreBudget(store, "shared", "m", limit), StoreBudget(Store(store_url), "shared", "m", limit)
    await mine.acquire()
    await mine.spend(1200)
    assert theirs.try_take() == pytest.approx(2.0, abs=0.3), "two hundred in debt at a hundred a second"
    assert [(d.requests, d.tokens) for d in spent(store, "shared")] == [(1, 1200)]


def test_a_second_process_keeps_the_levels_and_takes_the_files_limits(store_url: str) -> None:
    store = open_run(store_url)
    first = StoreBudget(store, "shared", "m", RateLimit(requests_per_minute=60))
    for _ in range(10):
        assert first.try_take() == 0.0
    assert first.try_take() > 0.5, "the burst of ten is spent"
    later = StoreBudget(Store(store_url), "shared", "m", RateLimit(requests_per_minute=120))
    later.open()
    assert 0 < later.try_take() <= 0.6, "the bucket stays as spent, refilled at the new rate"
    with store.session() as s:
        row = s.scalars(select(RateBucketRow)).one()
    assert row.requests_rate == pytest.approx(2.0) and row.requests_cap == pytest.approx(20.0)


async def test_a_run_draws_every_call_on_its_budget_and_counts_the_run_wide_rate(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    runner = Runner(store, Toy(), models=ModelPool(cache=False), concurrency=4,
                    rate_limits={"scripted/echo": RateLimit(requests_per_minute=6000, tokens_per_minute=10**6)})
    episodes = grid([{"id": f"i{k}"} for k in range(12)], [lineup("scripted/echo", 2)])
    summary = await runner.run("budgeted", episodes)
    assert summary.done == 12
    [drawn] = spent(store, "budgeted")
    assert drawn.requests == summary.model_calls == 24
    assert drawn.tokens == summary.prompt_tokens + summary.completion_tokens > 0
    assert summary.run_calls_per_minute is not None and summary.run_calls_per_minute > 0


async def test_a_limit_naming_a_model_the_run_does_not_use_is_refused_before_any_episode(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "r.db"))
    runner = Runner(store, Toy(), models=ModelPool(cache=False),
                    rate_limits={"openai/gpt-4o-mini ": RateLimit(requests_per_minute=500)})
    with pytest.raises(ConfigError, match=r"rate_limits names openai/gpt-4o-mini .*the run's models: scripted/echo"):
        await runner.run("typo", grid([{"id": "a"}], [lineup("scripted/echo", 1)]))
    assert store.runs() == [], "nothing was opened"


def test_unlimited_models_draw_nothing(tmp_path: Path) -> None:
    runner = Runner(Store(str(tmp_path / "r.db")), Toy(), rate_limits={"scripted/echo": RateLimit()})
    assert runner.rate_limits == {}
    asyncio.run(runner.run("free", grid([{"id": "a"}], [lineup("scripted/echo", 1)])))
    assert spent(runner.store, "free") == []
