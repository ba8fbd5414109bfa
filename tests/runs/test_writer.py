"""The writer: ended episodes saved in batches, a failed batch saved again one by one, an unsavable one as failed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from sqlalchemy.exc import OperationalError

from lexicoord.core.events import Event, MessageEvent
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store
from lexicoord.runs.writer import Entry, Writer
from tests.runs.test_store import record


class Flaky(Store):
    """A store whose first ``failures`` saves fail as SQLite does when another writer holds it too long."""

    def __init__(self, url: str, failures: int) -> None:
        super().__init__(url)
        self.failures = failures
        self.batches: list[list[str]] = []

    def save_episodes(self, batch: Sequence[tuple[EpisodeRecord, Sequence[Event]]]) -> list[int]:
        self.batches.append([r.key for r, _ in batch])
        if self.failures:
            self.failures -= 1
            raise OperationalError("INSERT INTO episodes", {}, Exception("database is locked"))
        return super().save_episodes(batch)


def entry(key: str, content: object = "hi") -> Entry:
    said = MessageEvent(agent="a0", content="hi")
    if content != "hi":
        said = Event(type="custom", thing=content)
    return record("r", key), [said]


async def write(store: Store, entries: list[Entry]) -> list[Entry]:
    """Queue every entry before the writer first runs (one batch), close it, and return what it reported saved."""
    reported: list[Entry] = []

    async def saved(batch: list[Entry]) -> None:
        reported.extend(batch)

    writer = Writer(store, saved)
    for e in entries:
        writer.put(e)
    writer.start(on_failure=lambda: None)
    await writer.close()
    return reported


async def test_ended_episodes_queued_together_are_saved_in_one_transaction(tmp_path) -> None:
    store = Flaky(str(tmp_path / "w.db"), failures=0)
    store.open_run("r", "toy", {}, 3)
    reported = await write(store, [entry("k0"), entry("k1"), entry("k2")])
    assert store.batches == [["k0", "k1", "k2"]]
    assert [r.key for r, _ in reported] == ["k0", "k1", "k2"]
    assert [e.status for e in store.episodes("r")] == ["done"] * 3


async def test_a_batch_whose_save_fails_once_is_saved_again_episode_by_episode(tmp_path) -> None:
    store = Flaky(str(tmp_path / "w.db"), failures=1)
    store.open_run("r", "toy", {}, 3)
    reported = await write(store, [entry("k0"), entry("k1"), entry("k2")])
    assert store.batches == [["k0", "k1", "k2"], ["k0"], ["k1"], ["k2"]]
    assert [(r.key, r.status) for r, _ in reported] == [("k0", "done"), ("k1", "done"), ("k2", "done")]
    assert [e.status for e in store.episodes("r")] == ["done"] * 3, "a passing failure loses no episode"


async def test_an_episode_the_database_refuses_is_saved_as_failed_and_the_others_as_they_are(tmp_path) -> None:
    store = Store(str(tmp_path / "w.db"))
    store.open_run("r", "toy", {}, 3)
    reported = await write(store, [entry("k0"), entry("bad", content=object()), entry("k2")])
    assert [(r.key, r.status) for r, _ in reported] == [("k0", "done"), ("bad", "failed"), ("k2", "done")]
    bad = next(r for r, _ in reported if r.key == "bad")
    assert bad.error is not None and bad.error.startswith("the episode could not be saved:") and bad.outcome is None
    stored = {e.key: e for e in store.episodes("r")}
    assert stored["bad"].status == "failed" and stored["bad"].error == bad.error
    [error] = store.events(stored["bad"].id)
    assert error.type == "error" and error.error_type == "StoreError"
    assert [e.type for e in store.events(stored["k0"].id)] == ["message"]


async def test_when_saving_fails_for_good_the_writer_says_so_and_raises_the_reason(tmp_path) -> None:
    store = Flaky(str(tmp_path / "w.db"), failures=10**6)
    store.open_run("r", "toy", {}, 1)
    told = asyncio.Event()

    async def saved(batch: list[Entry]) -> None:
        raise AssertionError("nothing was saved")

    writer = Writer(store, saved)
    writer.start(on_failure=told.set)
    writer.put(entry("k0"))
    await asyncio.wait_for(told.wait(), 10)
    with pytest.raises(OperationalError, match="database is locked"):
        await writer.close()
    assert isinstance(writer.failure, OperationalError)
