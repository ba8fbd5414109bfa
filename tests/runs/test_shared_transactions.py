"""Writes that share transactions: whatever arrives while one is under way goes into the next one together, each
caller hears its own result once committed, and a write the database refuses costs only its own caller."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lexicoord.runs.schema import RunRow
from lexicoord.runs.shared_transactions import SharedTransactions
from lexicoord.runs.store import Store


class Counted(Store):
    """A store that counts its write transactions, and whose first one can be held open."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.transactions = 0
        self.hold: threading.Event | None = None
        self.holding = threading.Event()

    @contextlib.contextmanager
    def writing(self, *, rewrites: bool = False) -> Iterator[Session]:
        self.transactions += 1
        with super().writing(rewrites=rewrites) as s:
            yield s
            if self.hold is not None:
                self.holding.set()
                assert self.hold.wait(10), "the test never let the first transaction end"
                self.hold = None


def add_run(run_id: str) -> Callable[[Session], str]:
    def write(s: Session) -> str:
        s.add(RunRow(id=run_id, protocol="coordination", status="open", config={}, created_at=0.0, updated_at=0.0))
        s.flush()
        return f"made {run_id}"
    return write


def runs(store: Store) -> list[str]:
    with store.session() as s:
        return sorted(s.scalars(select(RunRow.id)))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Counted]:
    made = Counted(str(tmp_path / "s.db"))
    yield made
    made.close()


async def test_writes_that_come_while_one_commits_share_the_next_transaction(store: Counted) -> None:
    writes = SharedTransactions(store, "test-writes")
    store.hold = threading.Event()
    first = asyncio.create_task(writes.write(add_run("r0")))
    await asyncio.to_thread(store.holding.wait, 10)  # r0's transaction is under way, held open
    later = [asyncio.create_task(writes.write(add_run(f"r{i}"))) for i in range(1, 9)]
    await asyncio.sleep(0.05)
    assert not any(t.done() for t in later), "nothing is told before its transaction commits"
    store.hold.set()
    assert [await first, *await asyncio.gather(*later)] == [f"made r{i}" for i in range(9)]
    assert store.transactions == 2, "r0 alone, then the eight that came meanwhile together"
    assert runs(store) == [f"r{i}" for i in range(9)]
    await writes.aclose()


async def test_a_refused_write_costs_only_its_own_caller_and_the_others_are_kept_once(store: Counted) -> None:
    writes = SharedTransactions(store, "test-writes")
    await writes.write(add_run("taken"))
    store.hold = threading.Event()
    first = asyncio.create_task(writes.write(add_run("a")))
    await asyncio.to_thread(store.holding.wait, 10)
    names = ["b", "taken", "c", "d"]  # "taken" is refused: its key is there already
    later = [asyncio.create_task(writes.write(add_run(n))) for n in names]
    await asyncio.sleep(0.05)
    store.hold.set()
    assert await first == "made a"
    results = await asyncio.gather(*later, return_exceptions=True)
    assert [r for n, r in zip(names, results, strict=True) if n != "taken"] == ["made b", "made c", "made d"]
    assert isinstance(results[1], IntegrityError), results[1]
    assert runs(store) == ["a", "b", "c", "d", "taken"], "each kept once, though the shared try was undone"
    await writes.aclose()


async def test_one_callers_writes_land_in_its_order_and_a_caller_that_left_still_has_its_write(
        store: Counted) -> None:
    writes = SharedTransactions(store, "test-writes")
    seen: list[str] = []

    def note(what: str) -> Callable[[Session], None]:
        def write(s: Session) -> None:
            seen.append(what)
        return write

    async def caller(name: str) -> None:
        for step in range(3):
            await writes.write(note(f"{name}{step}"))

    await asyncio.gather(*(caller(n) for n in "xyz"))
    for name in "xyz":
        assert [s for s in seen if s.startswith(name)] == [f"{name}0", f"{name}1", f"{name}2"]
    store.hold = threading.Event()
    busy = asyncio.create_task(writes.write(add_run("busy")))
    await asyncio.to_thread(store.holding.wait, 10)
    gone = asyncio.create_task(writes.write(add_run("gone")))
    await asyncio.sleep(0.05)
    gone.cancel()  # its caller stops waiting: the write was asked, and is made
    store.hold.set()
    await busy
    with pytest.raises(asyncio.CancelledError):
        await gone
    await writes.write(add_run("after"))
    assert runs(store) == ["after", "busy", "gone"]
    await writes.aclose()


async def test_writes_of_one_kind_are_handed_over_as_one_list_and_a_refused_one_is_tried_alone(
        store: Counted) -> None:
    writes = SharedTransactions(store, "test-writes")
    lists: list[list[str]] = []

    def add_runs(s: Session, names: list[str]) -> list[str]:
        lists.append(list(names))
        for name in names:
            add_run(name)(s)
        return [f"made {name}" for name in names]

    await writes.write(add_run("taken"))
    for names, refused in ((["a", "b", "c", "d"], None), (["e", "taken", "f"], "taken")):
        store.hold = threading.Event()
        first = asyncio.create_task(writes.write(add_run(f"first-{names[0]}")))
        await asyncio.to_thread(store.holding.wait, 10)
        lists.clear()
        together = [asyncio.create_task(writes.together(add_runs, n)) for n in names]
        alone = asyncio.create_task(writes.write(add_run(f"alone-{names[0]}")))
        await asyncio.sleep(0.05)
        store.hold.set()
        await first
        results = await asyncio.gather(*together, return_exceptions=True)
        assert await alone == f"made alone-{names[0]}"
        for name, result in zip(names, results, strict=True):
            if name == refused:
                assert isinstance(result, IntegrityError)
            else:
                assert result == f"made {name}"
        if refused is None:
            assert lists == [names], "one list, in the order they came"
        else:
            assert lists == [names, *([n] for n in names)], "the shared try, then each alone"
    assert runs(store) == sorted(["taken", "first-a", "a", "b", "c", "d", "alone-a",
                                  "first-e", "e", "f", "alone-e"])
    await writes.aclose()


async def test_closing_waits_for_every_write_asked_and_refuses_later_ones(store: Counted) -> None:
    writes = SharedTransactions(store, "test-writes")
    store.hold = threading.Event()
    asked = [asyncio.create_task(writes.write(add_run(f"q{i}"))) for i in range(5)]
    await asyncio.to_thread(store.holding.wait, 10)  # the first is committing, four more wait in the queue
    closing = asyncio.create_task(writes.aclose())
    await asyncio.sleep(0.05)
    assert not closing.done(), "closing waits for the writes already asked"
    store.hold.set()
    await closing
    assert [t.result() for t in asked] == [f"made q{i}" for i in range(5)]
    assert runs(store) == [f"q{i}" for i in range(5)]
    with pytest.raises(RuntimeError, match="writer test-writes is closed"):
        await writes.write(add_run("late"))
    assert runs(store) == [f"q{i}" for i in range(5)]


def _claim_at(db: str, owner: str, start: float) -> bool:
    """One process taking gate check ``g1`` through its own shared transactions, at ``start`` like the others."""
    import time

    from lexicoord.gate import records

    writes = SharedTransactions(Store(db), "claims")
    time.sleep(max(0.0, start - time.time()))
    return asyncio.run(writes.write(lambda s: records.claim(s, "g1", owner, 30.0)))


def test_processes_rewriting_one_row_at_once_never_both_win(store_url: str) -> None:
    """A write that reads a row and writes it back changed (a gate check's claim) is whole on SQLite too, where
    ``FOR UPDATE`` is ignored: of four processes claiming one check at the same moment, exactly one holds it."""
    import time
    from concurrent.futures import ProcessPoolExecutor

    from lexicoord.gate import records
    from lexicoord.gate.records import GateState
    from lexicoord.runs.schema import GateRow

    store = Store(store_url)
    now = time.time()
    with store.writing() as s:
        records.create(s, GateState(id="g1", run_id="gate", key=None, episode_key="e1", status="playing", token="t",
                                    created_at=now, updated_at=now, expires_at=None, request={}, verdict={}))
    with ProcessPoolExecutor(max_workers=4) as pool:
        start = time.time() + 1.5
        won = list(pool.map(_claim_at, [store_url] * 4, [f"p{n}" for n in range(4)], [start] * 4))
    assert won.count(True) == 1, won
    with store.session() as s:
        owner = s.scalar(select(GateRow.owner).where(GateRow.id == "g1"))
    assert owner == f"p{won.index(True)}"
