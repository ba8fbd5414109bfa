"""The scheduler: which episode each worker plays next, claimed through a real store ahead of need."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Collection, Sequence

import pytest

from lexicoord.models import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.runs.claims import Claims, Remaining
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.scheduler import Scheduler
from lexicoord.runs.store import Store
from tests.runs.test_store import record
from tests.runs.toy import Toy, lineup


class Slow(Claims):
    """Claims whose every take waits ``delay`` seconds first, as one waits behind a save on SQLite; counted."""

    def __init__(self, store: Store, run_id: str, delay: float = 0.0) -> None:
        super().__init__(store, run_id)
        self.delay = delay
        self.takes: list[int] = []
        self.counts = 0

    def take(self, exclude: Collection[str] = (), n: int = 1) -> list[str]:
        time.sleep(self.delay)
        taken = super().take(exclude, n)
        self.takes.append(len(taken))
        return taken

    def remaining(self, exclude: Collection[str] = ()) -> Remaining:
        self.counts += 1
        return super().remaining(exclude)


def opened(tmp_path, keys: list[str]) -> Store:
    store = Store(str(tmp_path / "s.db"))
    store.open_run("r", "toy", {}, len(keys))
    return store


async def test_episodes_that_end_together_start_the_next_without_waiting_for_a_claim(tmp_path) -> None:
    """Four workers whose episodes all last 0.5 s end together; a claim takes 0.3 s. After the first
    episodes no worker waits for one, and the process never holds more than twice its concurrency."""
    keys = [f"k{i:02d}" for i in range(16)]
    store = opened(tmp_path, keys)
    claims = Slow(store, "r", delay=0.3)
    scheduler = Scheduler(claims, set(keys), concurrency=4)
    todo = [(k, i) for i, k in enumerate(keys)]
    ended: dict[object, float] = {}
    gaps: list[float] = []
    held: list[int] = []
    played: list[str] = []

    async def play(key: str) -> None:
        worker = asyncio.current_task()
        if worker in ended:
            gaps.append(time.perf_counter() - ended[worker])
        played.append(key)
        held.append(await asyncio.to_thread(owned, store, claims))
        await asyncio.sleep(0.5)
        await asyncio.to_thread(store.save_episodes, [(record("r", key), [])])
        scheduler.saved(key)
        ended[worker] = time.perf_counter()

    await scheduler.play(todo, play, workers=4)
    assert sorted(played) == keys, "every episode played once"
    assert len(gaps) == 12 and max(gaps) < 0.25, f"a worker waited for a claim: {sorted(gaps)[-4:]}"
    assert max(held) <= 8, f"claims held at once: {max(held)}"


async def test_the_first_episodes_play_while_the_rest_are_offered(tmp_path) -> None:
    """A large grid's rows take a while to write; the first workers' worth is offered and claimed first, and the
    rest is offered while those play (the offer of the rest is held until an episode has started)."""
    keys = [f"k{i:02d}" for i in range(20)]
    store = opened(tmp_path, keys)
    started = threading.Event()
    offers: list[tuple[list[int], bool]] = []

    class Watched(Claims):
        def offer(self, entries: Sequence[tuple[str, int]]) -> None:
            first = any(position == 0 for _, position in entries)
            offers.append((sorted(p for _, p in entries), first or started.wait(10)))
            super().offer(entries)

    claims = Watched(store, "r")
    scheduler = Scheduler(claims, set(keys), concurrency=2)
    todo = [(k, i) for i, k in reversed(list(enumerate(keys)))]  # in any order: the first offered are the first
    played: list[str] = []

    async def play(key: str) -> None:
        started.set()
        played.append(key)
        await asyncio.to_thread(store.save_episodes, [(record("r", key), [])])
        scheduler.saved(key)

    await asyncio.wait_for(scheduler.play(todo, play, workers=2), 30)
    assert [positions for positions, _ in offers] == [[0, 1, 2, 3], list(range(4, 20))], "2 workers + 2 ahead first"
    assert offers[1][1], "the rest was offered only once an episode played"
    assert sorted(played) == keys and len(played) == len(keys), "every episode played once"
    assert played[:4] == keys[:4], "in grid order"


async def test_an_offer_of_the_rest_that_fails_stops_the_run_rather_than_ending_it_early(tmp_path) -> None:
    keys = [f"k{i}" for i in range(6)]
    store = opened(tmp_path, keys)

    class Refused(Claims):
        def offer(self, entries: Sequence[tuple[str, int]]) -> None:
            if not any(position == 0 for _, position in entries):
                raise RuntimeError("database is locked")
            super().offer(entries)

    scheduler = Scheduler(Refused(store, "r"), set(keys), concurrency=1)
    played: list[str] = []

    async def play(key: str) -> None:
        played.append(key)
        await asyncio.to_thread(store.save_episodes, [(record("r", key), [])])
        scheduler.saved(key)

    with pytest.raises(RuntimeError, match="database is locked"):
        await asyncio.wait_for(scheduler.play([(k, i) for i, k in enumerate(keys)], play, workers=1), 30)
    assert played == keys[:2], "the first worker's worth played; nothing reads as the whole run"


def owned(store: Store, claims: Claims) -> int:
    from sqlalchemy import func, select

    from lexicoord.runs.schema import ClaimRow

    with store.session() as s:
        return int(s.scalar(select(func.count()).where(ClaimRow.owner == claims.owner, ClaimRow.expires_at > 0)) or 0)


async def test_workers_that_run_out_together_ask_what_is_left_once_and_take_nothing_more(tmp_path) -> None:
    keys = [f"k{i}" for i in range(8)]
    store = opened(tmp_path, keys)
    claims = Slow(store, "r")
    scheduler = Scheduler(claims, set(keys), concurrency=8)
    todo = [(k, i) for i, k in enumerate(keys)]
    played: list[str] = []
    everyone = asyncio.Event()

    async def play(key: str) -> None:
        played.append(key)
        if len(played) == len(keys):
            everyone.set()
        await everyone.wait()  # all eight end in the same instant

    await asyncio.wait_for(scheduler.play(todo, play, workers=8), 30)
    assert sorted(played) == keys
    assert claims.counts == 1, f"eight idle workers asked the database {claims.counts} times what is left"
    assert claims.takes == [8], "once a take came back short, nobody asks for claims again before looking"


async def test_an_episode_another_process_offered_outside_this_grid_is_handed_back_unplayed(tmp_path) -> None:
    keys = ["k0", "k1", "k2"]
    store = opened(tmp_path, keys)
    other = Claims(store, "r")
    other.offer([("theirs", 0)])  # first in grid order: the first claim this process takes
    claims = Claims(store, "r")
    scheduler = Scheduler(claims, set(keys), concurrency=1)
    todo = [(k, i + 1) for i, k in enumerate(keys)]
    played: list[str] = []

    async def play(key: str) -> None:
        played.append(key)
        await asyncio.to_thread(store.save_episodes, [(record("r", key), [])])
        scheduler.saved(key)

    await asyncio.wait_for(scheduler.play(todo, play, workers=1), 30)
    assert played == keys
    assert other.take() == ["theirs"], "given back at once, free for the process whose grid has it"


async def test_claims_left_when_playing_stops_go_back_and_others_still_playing_are_seen(tmp_path) -> None:
    keys = [f"k{i}" for i in range(6)]
    store = opened(tmp_path, keys)
    claims = Claims(store, "r")
    scheduler = Scheduler(claims, set(keys), concurrency=2)
    todo = [(k, i) for i, k in enumerate(keys)]
    started = asyncio.Event()

    async def play(key: str) -> None:
        started.set()
        await asyncio.sleep(30)

    playing = asyncio.create_task(scheduler.play(todo, play, workers=2))
    await asyncio.wait_for(started.wait(), 10)
    playing.cancel()
    await asyncio.gather(playing, return_exceptions=True)
    assert not await scheduler.others_hold()
    assert await asyncio.to_thread(owned, store, claims) >= 2
    await scheduler.release()
    assert await asyncio.to_thread(owned, store, claims) == 0
    other = Claims(store, "r")
    assert other.take(n=10) == keys, "every claim went back at once, in play or taken ahead"
    assert await scheduler.others_hold(), "now another process holds the run"


async def test_a_process_alone_on_its_run_never_says_its_claims_went_elsewhere(tmp_path, caplog) -> None:
    """Saves delete claims while renewals run (a lease of 0.6 s renews every 0.15 s): an episode saved as its claim
    is renewed is not a claim lost to another process, and a process alone on its run never warns of one."""
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("slow", lambda messages, config: "ok", latency=0.01)), "scripted/slow")
    runner = Runner(Store(str(tmp_path / "r.db")), Toy(), models=pool, concurrency=8, lease=0.6)
    with caplog.at_level("WARNING", logger="lexicoord.runs.scheduler"):
        summary = await runner.run("r", grid([{"id": f"i{n}"} for n in range(400)], [lineup("scripted/slow")]))
    assert summary.done == 400 and len(runner.store.episodes("r")) == 400
    assert not [r for r in caplog.records if "claim" in r.getMessage()], caplog.text


async def test_a_claim_another_process_took_and_saved_is_reported_lost(tmp_path, caplog) -> None:
    """A stalled process's claims expire; another process takes one, plays it and saves it (deleting its row).
    That one is reported lost; the one this process played and is saving itself is not."""
    store = opened(tmp_path, ["k0", "k1"])
    mine, other = Claims(store, "r", lease=0.2), Claims(store, "r", lease=30)
    mine.offer([("k0", 0), ("k1", 1)])
    assert mine.take(n=2) == ["k0", "k1"]
    scheduler = Scheduler(mine, {"k0", "k1"}, concurrency=1)
    scheduler.holding |= {"k0", "k1"}
    scheduler.saving.add("k1")  # ended here, handed to be saved
    time.sleep(0.25)  # this process stalled: both claims expired
    assert other.take() == ["k0"]
    store.save_episode(record("r", "k0"), [])  # the other process's save
    store.save_episode(record("r", "k1"), [])  # this process's own save, not yet told to the scheduler
    with caplog.at_level("WARNING", logger="lexicoord.runs.scheduler"):
        renewing = asyncio.create_task(scheduler._renew())
        deadline = time.monotonic() + 10  # a renewal is due every 0.05 s; a busy machine may take longer
        while not claim_warnings(caplog) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        renewing.cancel()
    lost = claim_warnings(caplog)
    assert lost and all("1 claim(s) expired" in m for m in lost), lost


def claim_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "claim" in r.getMessage()]
