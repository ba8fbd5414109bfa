"""A run's observer hears it start, every episode end as saved, and the run end, interrupted or not."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from lexicoord.core.events import Event
from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.progress import RunObserver
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.runs.summary import RunSummary
from tests.runs.toy import Toy, lineup


class Heard(RunObserver):
    def __init__(self) -> None:
        self.heard: list[tuple] = []

    def started(self, run_id: str, total: int, skipped: int) -> None:
        self.heard.append(("started", run_id, total, skipped))

    def episode_ended(self, record: EpisodeRecord, events: Sequence[Event], summary: RunSummary) -> None:
        self.heard.append(("episode", record.item_id, record.status, len(events), summary.done, summary.failed))

    def ended(self, summary: RunSummary) -> None:
        self.heard.append(("ended", summary.done, summary.failed, summary.skipped, summary.interrupted))

    def episodes(self) -> list[tuple]:
        return [h for h in self.heard if h[0] == "episode"]


async def test_the_observer_hears_the_start_each_episode_as_saved_and_the_end(tmp_path) -> None:
    store = Store(str(tmp_path / "o.db"))
    items = [{"id": "a"}, {"id": "b", "fail": True}, {"id": "c"}]
    first = Heard()
    await Runner(store, Toy(), models=ModelPool(cache=False), concurrency=1).run("o", grid(items, [lineup()]),
                                                                                 observer=first)
    assert first.heard[0] == ("started", "o", 3, 0)
    # One at a time, so in grid order; the summary as it stood once each was saved; every event of each.
    assert first.episodes() == [("episode", "a", "done", 5, 1, 0), ("episode", "b", "failed", 1, 1, 1),
                                ("episode", "c", "done", 5, 2, 1)]
    assert first.heard[-1] == ("ended", 2, 1, 0, False) and len(first.heard) == 5

    again = Heard()
    await Runner(store, Toy(), models=ModelPool(cache=False)).run("o", grid(items, [lineup()]), observer=again)
    assert again.heard == [("started", "o", 3, 2), ("episode", "b", "failed", 1, 0, 1), ("ended", 0, 1, 2, False)]


async def test_an_interrupted_run_tells_its_observer_every_saved_episode_and_the_interrupt(tmp_path) -> None:
    heard = Heard()
    runner = Runner(Store(str(tmp_path / "i.db")), Toy(), models=ModelPool(cache=False, latency=0.05), concurrency=2)
    task = asyncio.create_task(runner.run("i", grid([{"id": str(i)} for i in range(40)], [lineup()]), observer=heard))
    while len(heard.episodes()) < 3:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = runner.store.run("i").done
    assert heard.heard[-1] == ("ended", saved, 0, 0, True)
    assert len(heard.episodes()) == saved < 40, "every saved episode heard, none twice"


async def test_without_an_observer_a_run_is_silent(tmp_path, capsys) -> None:
    await Runner(Store(str(tmp_path / "q.db")), Toy(), models=ModelPool(cache=False)).run("q", grid([{"id": "a"}], [lineup()]))
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
