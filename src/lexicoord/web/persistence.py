"""Rooms in the store: enough to reopen every open room, and replay its game in progress, after a restart.

Moves are written by one worker thread with group commit: the moves of every
room that arrive while a commit is under way go into the next transaction
together, so under load the cost of a commit is shared and no move waits
behind more than one. Slow work (saving a finished game, computing statistics)
runs on a second thread, so it never holds up the moves of other rooms.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from sqlalchemy import delete, func, select

from lexicoord.runs.schema import RoomMoveRow, RoomRow, RunRow
from lexicoord.runs.store import Store

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


class RoomStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lexicoord-rooms")
        self._slow = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lexicoord-rooms-slow")
        self._moves: list[tuple[RoomMoveRow, asyncio.Future[None]]] = []
        self._writing = False

    async def _do(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._slow.shutdown(wait=True)

    # writes ---------------------------------------------------------------------------------------
    def _create(self, room_id: str, code: str, run_id: str, config: dict[str, Any], state: dict[str, Any]) -> None:
        now = time.time()
        with self.store.session() as s, s.begin():
            s.add(RoomRow(id=room_id, code=code, run_id=run_id, status="open", created_at=now, updated_at=now,
                          config=config, state=state))

    async def create(self, room_id: str, code: str, run_id: str, config: dict[str, Any], state: dict[str, Any]) -> None:
        await self._do(self._create, room_id, code, run_id, config, state)

    def _save_state(self, room_id: str, state: dict[str, Any], status: str | None) -> None:
        with self.store.session() as s, s.begin():
            row = s.get(RoomRow, room_id)
            if row is not None:
                row.state, row.updated_at = state, time.time()
                if status:
                    row.status = status

    async def save_state(self, room_id: str, state: dict[str, Any], status: str | None = None) -> None:
        await self._do(self._save_state, room_id, state, status)

    def _add_moves(self, rows: list[RoomMoveRow]) -> None:
        with self.store.session() as s, s.begin():
            s.add_all(rows)

    async def add_move(self, room_id: str, game: int, player: str, idx: int, data: dict[str, Any]) -> None:
        """Returns once the move is committed (with whatever other moves were waiting)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._moves.append((RoomMoveRow(room_id=room_id, game=game, player=player, idx=idx, data=data), done))
        if not self._writing:
            self._writing = True
            asyncio.create_task(self._write_moves())
        await done

    async def _write_moves(self) -> None:
        try:
            while self._moves:
                batch, self._moves = self._moves, []
                try:
                    await self._do(self._add_moves, [row for row, _ in batch])
                except Exception as exc:  # every waiter of the batch hears why
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(exc)
                else:
                    for _, done in batch:
                        if not done.done():
                            done.set_result(None)
        finally:
            self._writing = False

    def _clear_moves(self, room_id: str, game: int) -> None:
        with self.store.session() as s, s.begin():
            s.execute(delete(RoomMoveRow).where(RoomMoveRow.room_id == room_id, RoomMoveRow.game == game))

    async def clear_moves(self, room_id: str, game: int) -> None:
        await self._do(self._clear_moves, room_id, game)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a slow store call (saving a game, reading a run) off the moves' thread."""
        return await asyncio.get_running_loop().run_in_executor(self._slow, fn, *args)

    # closing ---------------------------------------------------------------------------------------
    def close_room(self, room_id: str) -> None:
        """Mark a room closed: it is never reopened, and its run (with every stored game) stays."""
        now = time.time()
        with self.store.session() as s, s.begin():
            row = s.get(RoomRow, room_id)
            if row is None:
                return
            if row.status != CLOSED:
                row.status, row.updated_at = CLOSED, now
            if (row.state or {}).get("creator") is not None:
                # The creator's network counts against its share of rooms only while the room is open.
                row.state = {**row.state, "creator": None}
            # Again when a server lets go of a room closed from the command line: a game it ended on the
            # way out has just marked the run open.
            run = s.get(RunRow, row.run_id)
            if run is not None and run.status != CLOSED:
                run.status, run.updated_at = CLOSED, now

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
                # The journal holds only the game in play (a stored game's moves are cleared), whatever
                # the protocol: take the newest game's moves.
                game = s.scalar(select(func.max(RoomMoveRow.game)).where(RoomMoveRow.room_id == r.id))
                if game is not None:
                    moves = s.scalars(
                        select(RoomMoveRow).where(RoomMoveRow.room_id == r.id, RoomMoveRow.game == game)
                        .order_by(RoomMoveRow.player, RoomMoveRow.idx)
                    )
                    for m in moves:
                        saved.moves.setdefault(m.player, []).append(m.data)
                out.append(saved)
            return out
