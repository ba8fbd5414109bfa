"""The rooms' writer: whatever waits when a write starts goes to the worker thread in one trip, moves in one
transaction and live events in the next, a move's waiter hears once its move is committed, and what is queued
when the server stops is written before the store closes.

The store's two writes are replaced by recorders (the thread, the queue and the waiting are the real ones), so
the tests see what each trip to the thread carried and can hold the live events' write half-way.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.core.spec import EpisodeSpec
from lexicoord.runs.store import LiveGame, LiveWrite, Store
from lexicoord.web.app import create_app
from lexicoord.web.persistence import RoomStore
from tests.web.conftest import make_services


class Recorded:
    """What reached the worker thread: each write's items, in order, and on which thread."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, list[Any]]] = []
        self.threads: set[str] = set()
        #: A live write holding one of these tags waits until its event is set.
        self.held: dict[str, threading.Event] = {}
        self.fail_moves: Exception | None = None

    def hold(self, tag: str) -> threading.Event:
        gate = self.held[tag] = threading.Event()
        return gate

    def moves(self, jobs: list[Any]) -> None:
        self.threads.add(threading.current_thread().name)
        if self.fail_moves is not None:
            raise self.fail_moves
        self.writes.append(("moves", [j.player for j in jobs]))

    def live(self, writes: list[LiveWrite]) -> None:
        self.threads.add(threading.current_thread().name)
        tags = [w.events[0] for w in writes]
        for tag in tags:
            if tag in self.held:
                assert self.held[tag].wait(10), "the test never let the live events' write finish"
        self.writes.append(("live", tags))


@pytest.fixture
def rooms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RoomStore, Recorded]]:
    store = RoomStore(Store(str(tmp_path / "rooms.db")))
    recorded = Recorded()
    monkeypatch.setattr(store, "_add_moves", recorded.moves)
    monkeypatch.setattr(store.store, "keep_live", recorded.live)
    yield store, recorded
    for gate in recorded.held.values():
        gate.set()
    store.close()


GAME = LiveGame.of("run-1", EpisodeSpec(item_id="x"), 1)


def live(tag: str) -> LiveWrite:
    return LiveWrite(GAME, (tag,))  # type: ignore[arg-type]  # the recorder reads only the tag


async def test_moves_and_events_queued_together_reach_the_thread_in_one_trip(rooms: tuple[RoomStore, Recorded]
                                                                            ) -> None:
    store, recorded = rooms
    gate = recorded.hold("e0")
    store.keep_live(live("e0"))
    await asyncio.sleep(0)  # the writer is on the thread with e0: what follows waits for its next trip
    moves = [asyncio.ensure_future(store.add_move("r1", 1, "Ann", 0, {}))]
    await asyncio.sleep(0)
    store.keep_live(live("e1"))
    moves += [asyncio.ensure_future(store.add_move("r1", 1, name, 0, {})) for name in ("Bob", "Cid")]
    await asyncio.sleep(0)
    store.keep_live(live("e2"))
    store.keep_live(live("e3"))
    gate.set()
    await asyncio.wait_for(asyncio.gather(*moves), 10)
    await asyncio.wait_for(store.flushed(), 10)
    # Queued as Ann, e1, Bob, Cid, e2, e3, yet one transaction of moves and one of events on the next trip,
    # not one per alternation.
    assert recorded.writes == [("live", ["e0"]), ("moves", ["Ann", "Bob", "Cid"]), ("live", ["e1", "e2", "e3"])]
    [thread] = recorded.threads
    assert thread.startswith("lexicoord-rooms_"), thread


async def test_a_moves_waiter_hears_once_the_move_is_committed_not_once_the_events_are(
        rooms: tuple[RoomStore, Recorded]) -> None:
    store, recorded = rooms
    gate = recorded.hold("e1")  # the events' write of the move's batch will not finish until told
    move = asyncio.ensure_future(store.add_move("r1", 1, "Ann", 0, {}))
    store.keep_live(live("e1"))
    await asyncio.wait_for(move, 10)  # while the events' write is held
    assert recorded.writes == [("moves", ["Ann"])]
    flushed = asyncio.ensure_future(store.flushed())
    await asyncio.sleep(0.05)
    assert not flushed.done(), "a barrier waits for the events queued before it"
    gate.set()
    await asyncio.wait_for(flushed, 10)
    assert recorded.writes == [("moves", ["Ann"]), ("live", ["e1"])]


async def test_a_failed_commit_is_every_waiters_and_the_events_are_still_written(
        rooms: tuple[RoomStore, Recorded]) -> None:
    store, recorded = rooms
    recorded.fail_moves = RuntimeError("the disk is full")
    moves = [asyncio.ensure_future(store.add_move("r1", 1, name, 0, {})) for name in ("Ann", "Bob")]
    store.keep_live(live("e1"))
    results = await asyncio.wait_for(asyncio.gather(*moves, return_exceptions=True), 10)
    assert [str(r) for r in results] == ["the disk is full", "the disk is full"]
    await asyncio.wait_for(store.flushed(), 10)
    assert recorded.writes == [("live", ["e1"])]


def test_moves_queued_when_the_server_stops_are_written_before_the_store_closes(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A move the server accepted is journaled even if its game is stopped before the write comes round, so
    the next start replays it instead of asking the person again."""
    services = make_services(tmp_path / "rooms.db")
    recorded = Recorded()
    monkeypatch.setattr(services.rooms, "_add_moves", recorded.moves)
    monkeypatch.setattr(services.store, "keep_live", recorded.live)
    gate = recorded.hold("e0")
    with TestClient(create_app(services)) as client:
        async def queue_a_move_behind_a_write() -> None:
            services.rooms.keep_live(live("e0"))  # the writer is on the thread, held there
            await asyncio.sleep(0)
            move = asyncio.ensure_future(services.rooms.add_move("r1", 1, "Ann", 0, {}))
            await asyncio.sleep(0)
            move.cancel()  # as the game awaiting it is cancelled when the server stops

        client.portal.call(queue_a_move_behind_a_write)  # type: ignore[union-attr]
        threading.Timer(0.2, gate.set).start()  # the held write ends while the server is stopping
    assert recorded.writes == [("live", ["e0"]), ("moves", ["Ann"])]


async def test_room_states_saved_at_once_share_a_commit_and_each_room_keeps_its_newest(tmp_path: Path) -> None:
    """A hundred rooms opening in the same second: saves waiting behind a commit go into the next one together,
    each room's state read when that transaction is made; every waiter returns only once its state is written."""
    from lexicoord.runs.schema import RoomRow

    store = RoomStore(Store(str(tmp_path / "rooms.db")))
    try:
        for i in range(20):
            await store.create(f"r{i}", f"CODE{i}", "run-1", {}, {"n": -1})
        trips: list[list[str]] = []
        write = store._save_states

        def counted(states: dict[str, dict[str, Any]]) -> None:
            trips.append(sorted(states))
            write(states)

        store._save_states = counted  # type: ignore[method-assign]
        seen = {f"r{i}": 0 for i in range(20)}

        def reader(room: str) -> Any:
            return lambda: {"n": seen[room]}

        first = asyncio.ensure_future(store.save_state("r0", reader("r0")))
        await asyncio.sleep(0)  # the first commit is under way: what follows waits for the next
        rest = []
        for i in range(20):
            for n in (1, 2, 3):
                seen[f"r{i}"] = n
                rest.append(asyncio.ensure_future(store.save_state(f"r{i}", reader(f"r{i}"))))
        await asyncio.wait_for(asyncio.gather(first, *rest), 10)
        assert trips == [["r0"], sorted(seen)], trips  # 61 saves, 2 transactions
        with store.store.session() as s:
            states = {row.id: row.state for row in s.query(RoomRow)}
        assert states == {f"r{i}": {"n": 3} for i in range(20)}

        def broken(states: dict[str, dict[str, Any]]) -> None:
            raise RuntimeError("the disk is full")

        store._save_states = broken  # type: ignore[method-assign]
        failed = await asyncio.gather(*(store.save_state(f"r{i}", reader(f"r{i}")) for i in range(3)),
                                      return_exceptions=True)
        assert [str(f) for f in failed] == ["the disk is full"] * 3
    finally:
        store.close()
