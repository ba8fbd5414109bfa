"""Runner overhead: scripted episodes whose model sleeps a fixed latency, against the ideal.

Each episode has 3 agents and 2 rounds; in each round the agents answer at
once, so an episode's model time is 2 x latency. Ideal wall time =
episodes x 2 x latency / concurrency. Everything else the runner does (events,
store writes, progress, scheduling) shows as the ratio above 1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time

import machine
from pydantic import BaseModel

from lexicoord import event_loop
from lexicoord.cli.progress import ProgressBar
from lexicoord.core import EpisodeContext, Protocol, Request
from lexicoord.core.events import ChoiceEvent, RoundClosedEvent
from lexicoord.core.spec import AgentSpec
from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

ROUNDS = 2


class Rounds(BaseModel):
    rounds: int


class TwoRounds(Protocol):
    name = "bench-two-rounds"
    outcome_model = Rounds

    async def play(self, ctx: EpisodeContext) -> Rounds:
        seats = [ctx.seat(s) for s in ctx.spec.lineup]
        request = Request(kind="choose", prompt="choose", choices=("x", "y"))
        for r in range(1, ROUNDS + 1):
            ctx.recorder.round = r
            answers = await asyncio.gather(*(s.answer(request) for s in seats))
            for seat, answer in zip(seats, answers):
                choice = answer.value["choice"] if answer.value else None
                ctx.emit(ChoiceEvent(agent=seat.name, choice=choice, options=["x", "y"], raw=answer.raw))
            ctx.emit(RoundClosedEvent(summary={"round": r}))
        return Rounds(rounds=ROUNDS)


async def floor(episodes: int, latency: float, concurrency: int) -> float:
    """The same schedule in bare asyncio (no models, events or store): what no runner can beat."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(episodes):
        queue.put_nowait(i)

    async def worker() -> None:
        while not queue.empty():
            queue.get_nowait()
            for _ in range(ROUNDS):
                await asyncio.gather(*(asyncio.sleep(latency) for _ in range(3)))

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


def save_cost(store: Store, run_id: str, batch: int) -> tuple[float, int]:
    """Microseconds of one thread's time per episode to save a run's episodes again into a fresh store, in
    batches of ``batch`` (the writer saves what ended together in one transaction); and the events each held."""
    entries = [(e.model_copy(update={"id": None}), store.events(e.id)) for e in store.episodes(run_id) if e.id]
    with tempfile.TemporaryDirectory() as home:
        fresh = Store(os.path.join(home, "save.db"))
        fresh.open_run(run_id, "bench", {}, len(entries))
        started = time.thread_time()
        for i in range(0, len(entries), batch):
            fresh.save_episodes(entries[i:i + batch])
        spent = time.thread_time() - started
        fresh.close()
    return spent / len(entries) * 1e6, round(sum(len(ev) for _, ev in entries) / len(entries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--progress", action="store_true", help="draw the terminal's progress bar too")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the median is the figure")
    args = parser.parse_args()

    walls = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as home:
            os.environ["LEXICOORD_HOME"] = home
            store = Store(os.path.join(home, "bench.db"))
            lineup = [AgentSpec(name=f"a{i}", model="scripted/first") for i in range(3)]
            episodes = grid([{"id": f"item-{i}"} for i in range(args.episodes)], [lineup])
            pool = ModelPool(cache=False, latency=args.latency)
            pool.get("scripted/first")  # provider plugins load once per process; not the runner's cost
            runner = Runner(store, TwoRounds(), models=pool, concurrency=args.concurrency)
            observer = ProgressBar() if args.progress else None
            started = time.perf_counter()
            summary = event_loop.run(runner.run("bench", episodes, observer=observer))
            walls.append(time.perf_counter() - started)
            events = sum(len(store.events(e.id)) for e in store.episodes("bench"))
            per_save, per_episode = save_cost(store, "bench", args.concurrency)
    wall = statistics.median(walls)
    bare = event_loop.run(floor(args.episodes, args.latency, args.concurrency))
    ideal = args.episodes * ROUNDS * args.latency / args.concurrency
    print(f"episodes={summary.done} failed={summary.failed} model_calls={summary.model_calls} events={events}")
    print(f"latency={args.latency}s concurrency={args.concurrency} loop={event_loop.name()}; walls {', '.join(f'{w:.3f}' for w in walls)} s")
    ratio = f"{wall / ideal:.3f}" if ideal else "n/a"
    print(f"median wall={wall:.3f}s ideal={ideal:.3f}s ratio={ratio} (target <= 1.04)")
    if ideal:
        print(f"bare-asyncio floor for the same schedule (same loop): {bare:.3f}s ratio={bare / ideal:.3f}")
    print(f"saving: {per_save:.0f} us of CPU per episode of {per_episode} events, in batches of {args.concurrency}"
          " (off the event loop, but it holds the interpreter's lock)")


if __name__ == "__main__":
    machine.run(main)
