"""The move journal: the answers of games still in play, for campaigns and rooms alike.

Kept apart because it outlives no episode: a crash or a restart replays it (:meth:`Journal.episode_moves`), and
saving the episode settles it (:func:`settle_moves`), so it is written many times a game and read only to recover.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import delete, insert, select, tuple_
from sqlalchemy.orm import Session

from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.schema import MoveRow
from lexicoord.runs.store_engine import Database


class Move(NamedTuple):
    """One journal entry: seat ``player``'s answer to its request ``idx`` in episode ``key`` of run ``run_id``."""

    run_id: str
    key: str
    player: str
    idx: int
    data: dict[str, Any]


class Journal(Database):
    """A store's journal of moves."""

    def add_episode_move(self, run_id: str, key: str, player: str, idx: int, data: dict[str, Any]) -> None:
        """Journal one answer of an unfinished episode; returns once it is committed."""
        self.add_episode_moves([Move(run_id, key, player, idx, data)])

    def add_episode_moves(self, moves: Sequence[Move]) -> None:
        """Journal several answers, of any episodes, in one transaction (all or none): a server's moves that
        arrive while a commit is under way share the next one."""
        if not moves:
            return
        with self.writing() as s:
            journal_moves(s, moves)

    def episode_moves(self, run_id: str, key: str) -> dict[str, list[dict[str, Any]]]:
        """An unfinished episode's journal, each player's answers in order (empty when there is none)."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self.session() as s:
            rows = s.execute(select(MoveRow.player, MoveRow.data).where(MoveRow.run_id == run_id, MoveRow.key == key)
                             .order_by(MoveRow.player, MoveRow.idx))
            for player, data in rows:
                out.setdefault(player, []).append(data)
        return out

    def clear_episode_moves(self, run_id: str, key: str) -> None:
        """Forget an episode's journal (a live room does once the game is stored, whatever its end)."""
        with self.writing() as s:
            clear_moves(s, run_id, key)


def journal_moves(s: Session, moves: Sequence[Move]) -> None:
    """Journal answers in the caller's transaction (a server sharing one among its callers' writes)."""
    if moves:
        s.execute(insert(MoveRow), [m._asdict() for m in moves])


def clear_moves(s: Session, run_id: str, key: str) -> None:
    """Forget an episode's journal in the caller's transaction."""
    s.execute(delete(MoveRow).where(MoveRow.run_id == run_id, MoveRow.key == key))


def settle_moves(s: Session, records: Sequence[EpisodeRecord]) -> None:
    """Saved episodes' journals: cleared when they are done; when one failed, only its failed moves go, so
    a retry replays what was answered and asks the rest again."""
    done = [(r.run_id, r.key) for r in records if r.status == "done"]
    failed = [(r.run_id, r.key) for r in records if r.status != "done"]
    if done:
        s.execute(delete(MoveRow).where(tuple_(MoveRow.run_id, MoveRow.key).in_(done)))
    if failed:
        rows = s.scalars(select(MoveRow).where(tuple_(MoveRow.run_id, MoveRow.key).in_(failed)))
        errors = [row.id for row in rows if "error" in row.data]
        if errors:
            s.execute(delete(MoveRow).where(MoveRow.id.in_(errors)))
