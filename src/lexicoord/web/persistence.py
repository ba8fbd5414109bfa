"""Rooms in the store: enough to reopen every open room, and replay its game in progress, after a restart.

All writes go through one worker thread, so the event loop never waits on the
disk and SQLite never sees two writers from this process.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from sqlalchemy import delete, select

from lexicoord.runs.schema import RoomMoveRow, RoomRow
from lexicoord.runs.store import Store

T = TypeVar("T")


class SavedRoom(BaseModel):
    id: str
    code: str
    run_id: str
    status: str
    config: dict[str, Any]
    state: dict[str, Any]
    moves: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


class RoomStore:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lexicoord-rooms")

    async def _do(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

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

    def _add_move(self, room_id: str, game: int, player: str, idx: int, data: dict[str, Any]) -> None:
        with self.store.session() as s, s.begin():
            s.add(RoomMoveRow(room_id=room_id, game=game, player=player, idx=idx, data=data))

    async def add_move(self, room_id: str, game: int, player: str, idx: int, data: dict[str, Any]) -> None:
        await self._do(self._add_move, room_id, game, player, idx, data)

    def _clear_moves(self, room_id: str, game: int) -> None:
        with self.store.session() as s, s.begin():
            s.execute(delete(RoomMoveRow).where(RoomMoveRow.room_id == room_id, RoomMoveRow.game == game))

    async def clear_moves(self, room_id: str, game: int) -> None:
        await self._do(self._clear_moves, room_id, game)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a store call (saving an episode, reading a run) on the same worker thread."""
        return await self._do(fn, *args)

    # reads ----------------------------------------------------------------------------------------
    def open_rooms(self) -> list[SavedRoom]:
        with self.store.session() as s:
            rows = list(s.scalars(select(RoomRow).where(RoomRow.status == "open").order_by(RoomRow.created_at)))
            out = []
            for r in rows:
                saved = SavedRoom(id=r.id, code=r.code, run_id=r.run_id, status=r.status, config=r.config, state=r.state)
                game = (r.state.get("current") or {}).get("number")
                if game is not None:
                    moves = s.scalars(
                        select(RoomMoveRow).where(RoomMoveRow.room_id == r.id, RoomMoveRow.game == game)
                        .order_by(RoomMoveRow.player, RoomMoveRow.idx)
                    )
                    for m in moves:
                        saved.moves.setdefault(m.player, []).append(m.data)
                out.append(saved)
            return out
