"""Rooms in the store: enough to reopen every open room, and replay its game in progress, after a restart.

A room's game is an episode of the room's run, so its moves go to the store's one journal
(:meth:`Store.add_episode_moves`) under that episode's key: the key of the spec the room saved as its
current game, the key the finished game is stored under. The events of a game in progress go to the
store as they happen (:meth:`Store.keep_live`, as a spectator sees them), so the run viewer shows it.

Moves and live events are written by one worker thread with group commit: whatever every room sends
while a commit is under way goes into the next transaction together, so under load the cost of a commit
is shared and no move waits behind more than one. Slow work (saving a finished game, computing
statistics) runs on a second thread, so it never holds up the moves of other rooms; a slow call starts
only once everything queued before it is written, so the save that ends a game comes after its live
events.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import select, update

from lexicoord.runs.group_commit import GroupCommit
from lexicoord.runs.schema import RoomRow, RunRow
from lexicoord.runs.store import LiveWrite, Move, Store
from lexicoord.web.adapters.base import CurrentGame
from lexicoord.web.room_state import RoomState

log = logging.getLogger(__name__)
T = TypeVar("T")
#: The status of a room that has closed (an open room's is "open").
CLOSED = "closed"


class SavedRoom(BaseModel):
    id: str
    code: str
    run_id: str
    status: str
    config: dict[str, Any]
    state: dict[str, Any]
    moves: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


class RoomSummary(BaseModel):
    """One room as an operator lists it."""

    id: str
    code: str
    run_id: str
    status: str
    created_at: float
    updated_at: float
    people: int
    leader: str | None


def _summary(row: RoomRow) -> RoomSummary:
    state = row.state or {}
    return RoomSummary(id=row.id, code=row.code, run_id=row.run_id, status=row.status, created_at=row.created_at,
                       updated_at=row.updated_at, people=len(state.get("people", [])), leader=state.get("leader"))


#: Ids per query when asking which of a server's rooms were closed (well under any database's limit).
_CHUNK = 500


def game_key(state: dict[str, Any], game: int) -> str:
    """The episode key of a room's game ``game``, from the room's saved state: its current game's spec key.

    A room saves its current game (number, spec, seed) before playing it, and stores it, once ended, under
    that spec's key. A game that is not the current one is never played again; its moves (should any be
    written) are kept under ``room-game-<number>``, which no spec's key (24 hex digits) can be.
    """
    current = _current(state)
    if current is not None and current.number == game:
        return current.spec.key
    return f"room-game-{game}"


def _current(state: dict[str, Any]) -> CurrentGame | None:
    """The game a room's saved state names current (number, spec, seed), if any."""
    try:
        return RoomState.model_validate(state).played.current
    except ValidationError:
        return None


@dataclass
class _MoveJob:
    """A journal entry to write, and who awaits its commit."""

    room_id: str
    game: int
    player: str
    idx: int
    data: dict[str, Any]
    done: asyncio.Future[None]


@dataclass
class _Barrier:
    """A place in the write queue: resolved once everything queued before it is written."""

    done: asyncio.Future[None]


#: What waits in the write queue, in order: moves, a live game's events, barriers.
_Job = _MoveJob | LiveWrite | _Barrier


def _settle(moves: list[_MoveJob], failure: Exception | None) -> None:
    """Tell the waiters of written moves that they are committed, or why not."""
    for job in moves:
        if job.done.done():
            continue
        if failure is None:
            job.done.set_result(None)
        else:
            job.done.set_exception(failure)


class RoomStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lexicoord-rooms")
        self._slow = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lexicoord-rooms-slow")
        self._queue: list[_Job] = []
        self._writing = False
        #: Each room game's episode: ``(room id, game)`` to ``(run id, key)``, read once from the room's state.
        self._games: dict[tuple[str, int], tuple[str, str]] = {}
        self._states = GroupCommit(lambda states: self._do(self._save_states, states), "rooms' states")

    async def _do(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._slow.shutdown(wait=True)

    # writes ---------------------------------------------------------------------------------------
    def _create(self, room_id: str, code: str, run_id: str, config: dict[str, Any], state: dict[str, Any]) -> None:
        now = time.time()
        with self.store.writing() as s:
            s.add(RoomRow(id=room_id, code=code, run_id=run_id, status="open", created_at=now, updated_at=now,
                          config=config, state=state))

    async def create(self, room_id: str, code: str, run_id: str, config: dict[str, Any], state: dict[str, Any]) -> None:
        await self._do(self._create, room_id, code, run_id, config, state)

    def _save_states(self, states: dict[str, dict[str, Any]]) -> None:
        """Every room's newest state in one statement and one transaction."""
        now = time.time()
        rows = [{"id": room_id, "state": state, "updated_at": now} for room_id, state in states.items()]
        with self.store.writing() as s:
            s.execute(update(RoomRow), rows)  # by primary key, as one executemany

    async def save_state(self, room_id: str, state: Callable[[], dict[str, Any]]) -> None:
        """Save the room's state, as ``state()`` gives it when the transaction is made, returning once it is
        committed. Rooms saving in the same moment share a transaction (:mod:`lexicoord.runs.group_commit`):
        a hundred groups' rooms opening in the same second cost a few transactions, not five each."""
        await self._states.save({room_id: state})

    def _episode(self, room_id: str, game: int) -> tuple[str, str]:
        """The run and episode key of a room's game (the room saved the game as current before playing it)."""
        found = self._games.get((room_id, game))
        if found is None:
            with self.store.session() as s:
                row = s.get(RoomRow, room_id)
            if row is None:
                raise LookupError(f"No room {room_id} in the store.")
            found = self._games[(room_id, game)] = (row.run_id, game_key(row.state or {}, game))
        return found

    def _add_moves(self, jobs: list[_MoveJob]) -> None:
        self.store.add_episode_moves([Move(*self._episode(j.room_id, j.game), j.player, j.idx, j.data) for j in jobs])

    async def add_move(self, room_id: str, game: int, player: str, idx: int, data: dict[str, Any]) -> None:
        """Returns once the move is committed (with whatever other moves were waiting)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._enqueue(_MoveJob(room_id, game, player, idx, data, done))
        await done

    def keep_live(self, write: LiveWrite) -> None:
        """Queue events of a game in progress for the store (never awaited: the game does not wait for them)."""
        self._enqueue(write)

    def _enqueue(self, job: _Job) -> None:
        self._queue.append(job)
        if not self._writing:
            self._writing = True
            asyncio.create_task(self._write())

    async def _write(self) -> None:
        """Write the queue, whatever waits in it, in one call on the worker thread: its moves in one transaction
        and then its live events in another (two tables, each kept in order). Splitting a batch wherever moves
        and events alternate (the rooms' do, under load) cost a trip to the thread per piece, each waiting for
        the event loop to let it run, with the moves queued behind them all. The moves' waiters hear as soon as
        the moves are committed, not once the events are written too."""
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                moves = [j for j in batch if isinstance(j, _MoveJob)]
                live = [j for j in batch if isinstance(j, LiveWrite)]

                def committed(failure: Exception | None, moves: list[_MoveJob] = moves) -> None:
                    loop.call_soon_threadsafe(_settle, moves, failure)

                try:
                    await self._do(self._write_batch, moves, live, committed)
                except Exception as exc:  # the thread could not be reached: every waiter hears why
                    _settle(moves, exc)
                for job in batch:
                    if isinstance(job, _Barrier) and not job.done.done():
                        job.done.set_result(None)
        finally:
            self._writing = False

    def _write_batch(self, moves: list[_MoveJob], live: list[LiveWrite],
                     committed: Callable[[Exception | None], None]) -> None:
        """On the worker thread: the moves (``committed`` is told how that went), then the live events."""
        if moves:
            try:
                self._add_moves(moves)
            except Exception as exc:  # every waiter of the batch hears why
                committed(exc)
            else:
                committed(None)
        if live:
            try:
                self.store.keep_live(live)
            except Exception:  # the game goes on: its journal replays it, and its end stores every event
                log.exception("events of a game in progress could not be kept")

    async def flushed(self) -> None:
        """Returns once everything queued so far is written (or has failed)."""
        if not self._queue and not self._writing:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._enqueue(_Barrier(done))
        await done

    def _clear_moves(self, room_id: str, game: int) -> None:
        self.store.clear_episode_moves(*self._episode(room_id, game))
        self._games.pop((room_id, game), None)

    async def clear_moves(self, room_id: str, game: int) -> None:
        await self._do(self._clear_moves, room_id, game)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a slow store call (saving a game, reading a run) off the moves' thread, once everything queued
        before it is written (so a game's end is stored after its live events)."""
        await self.flushed()
        return await asyncio.get_running_loop().run_in_executor(self._slow, fn, *args)

    # closing ---------------------------------------------------------------------------------------
    def close_room(self, room_id: str) -> None:
        """Mark a room closed: it is never reopened, and its run (with every stored game) stays.

        A study's room shares its run with every other group's room, so closing it leaves the run open and
        forgets only this room's own game cut short, never another group's game under way."""
        now = time.time()
        with self.store.writing() as s:
            row = s.get(RoomRow, room_id)
            if row is None:
                return
            if row.status != CLOSED:
                row.status, row.updated_at = CLOSED, now
            if (row.state or {}).get("creator") is not None:
                # The creator's network counts against its share of rooms only while the room is open.
                row.state = {**row.state, "creator": None}
            # A study's room forgets only its own game in progress, if any (its other games are stored).
            own: list[str] | None = None
            if (row.state or {}).get("managed"):
                current = _current(row.state)
                own = [current.spec.key] if current else []
            # Again when a server lets go of a room closed from the command line: a game it ended on the
            # way out has just marked the run open.
            run = s.get(RunRow, row.run_id)
            if own is None and run is not None and run.status != CLOSED:
                run.status, run.updated_at = CLOSED, now
        # A game cut short by the closing is never played again: the viewer stops showing it as under way.
        self.store.drop_live(row.run_id, keys=own)

    def close_codes(self, codes: list[str]) -> list[RoomSummary]:
        """Close the open rooms with these codes (for the operator's command); the rooms as they were."""
        with self.store.session() as s:
            rows = list(s.scalars(select(RoomRow).where(RoomRow.code.in_(codes), RoomRow.status != CLOSED)))
        for row in rows:
            self.close_room(row.id)
        return [_summary(r) for r in rows]

    def closed_among(self, room_ids: list[str]) -> set[str]:
        """Which of these rooms the store has closed (a server asks, to let go of rooms an operator closed)."""
        out: set[str] = set()
        with self.store.session() as s:
            for i in range(0, len(room_ids), _CHUNK):
                chunk = room_ids[i:i + _CHUNK]
                out.update(s.scalars(select(RoomRow.id).where(RoomRow.id.in_(chunk), RoomRow.status == CLOSED)))
        return out

    # reads ----------------------------------------------------------------------------------------
    def listing(self, include_closed: bool = False) -> list[RoomSummary]:
        """Every open room (and closed ones too when asked), oldest first."""
        with self.store.session() as s:
            query = select(RoomRow).order_by(RoomRow.created_at)
            if not include_closed:
                query = query.where(RoomRow.status != CLOSED)
            return [_summary(r) for r in s.scalars(query)]

    def open_rooms(self) -> list[SavedRoom]:
        with self.store.session() as s:
            rows = list(s.scalars(select(RoomRow).where(RoomRow.status == "open").order_by(RoomRow.created_at)))
        out = []
        for r in rows:
            saved = SavedRoom(id=r.id, code=r.code, run_id=r.run_id, status=r.status, config=r.config, state=r.state)
            # The journal of the game in play, whatever the protocol: the one its saved state names current.
            current = _current(r.state or {})
            if current is not None:
                saved.moves = self.store.episode_moves(r.run_id, game_key(r.state or {}, current.number))
            out.append(saved)
        return out
