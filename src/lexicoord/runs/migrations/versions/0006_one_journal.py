"""One journal for every game still in play: ``room_moves`` and ``episode_moves`` become ``moves``.

A room's game is an episode of the room's run, so both journals fit one shape keyed by the episode,
``(run_id, key, player, idx)`` (see ``tables.py``). A campaign's entries keep their keys. A room's entry
``(room_id, game)`` goes to the room's run and the key the game is stored under: the key of the spec the
room saved as its current game when ``game`` is that game; else the key of the episode the run stored at
position ``game`` (a room stores game N there); else ``room-game-<N>`` (a game no room will play again,
kept so that nothing is lost). An entry of a room whose run is missing cannot be replayed or stored and is
not carried over (the foreign key on the run would refuse it).

The downgrade puts every entry back: a room's run's entries in ``room_moves`` under the game the same
rules name, the others in ``episode_moves``; and it removes the rows of live games in progress
(status ``playing``), which the older code does not know (their journals replay them).

Revision ID: 0006_one_journal
Revises: 0005_debate_name
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0006_one_journal"
down_revision = "0005_debate_name"
branch_labels = None
depends_on = None

#: The tables as this migration reads and writes them (not the models, which move on).
runs = sa.table("runs", sa.column("id", sa.String))
rooms = sa.table("rooms", sa.column("id", sa.String), sa.column("run_id", sa.String), sa.column("state", sa.JSON))
episodes = sa.table("episodes", sa.column("id", sa.Integer), sa.column("run_id", sa.String),
                    sa.column("key", sa.String), sa.column("position", sa.Integer), sa.column("status", sa.String))
events = sa.table("events", sa.column("episode_id", sa.Integer))
_COLUMNS = ("player", "idx", "data")


def _journal(name: str, *keys: sa.ColumnClause[Any]) -> sa.TableClause:
    return sa.table(name, *keys, sa.column("player", sa.String), sa.column("idx", sa.Integer),
                    sa.column("data", sa.JSON))


moves = _journal("moves", sa.column("run_id", sa.String), sa.column("key", sa.String))
room_moves = _journal("room_moves", sa.column("room_id", sa.String), sa.column("game", sa.Integer))
episode_moves = _journal("episode_moves", sa.column("run_id", sa.String), sa.column("key", sa.String))


def _spec_key(spec: dict[str, Any]) -> str:
    """A saved spec's key as the room that plays the game again computes it (from the spec read back)."""
    from lexicoord.core.spec import EpisodeSpec

    return EpisodeSpec.model_validate(spec).key


def _current(state: Any) -> tuple[int, str] | None:
    """The number and episode key of the game a room's saved state names current, if any (states saved
    before they were versioned keep the game's fields beside the people)."""
    if not isinstance(state, dict):
        return None
    game = state.get("game") if "version" in state or "game" in state else state
    current = game.get("current") if isinstance(game, dict) else None
    if not isinstance(current, dict) or not isinstance(current.get("number"), int):
        return None
    try:
        return current["number"], _spec_key(current.get("spec") or {})
    except ValueError:  # a spec that no longer reads: its game is never played again
        return None


class _Rooms:
    """Each room's run, and the games its journal may name, read once."""

    def __init__(self, bind: sa.Connection) -> None:
        self.run_of: dict[str, str] = {}
        self.room_of: dict[str, str] = {}
        self.current: dict[str, tuple[int, str]] = {}
        for room_id, run_id, state in bind.execute(sa.select(rooms.c.id, rooms.c.run_id, rooms.c.state)).all():
            self.run_of[room_id], self.room_of[run_id] = run_id, room_id
            found = _current(state)
            if found is not None:
                self.current[room_id] = found
        self.stored: dict[tuple[str, int], str] = {}
        self.stored_at: dict[tuple[str, str], int] = {}
        query = sa.select(episodes.c.run_id, episodes.c.key, episodes.c.position).where(
            episodes.c.run_id.in_(list(self.room_of)))
        for run_id, key, position in bind.execute(query).all():
            self.stored.setdefault((run_id, position), key)
            self.stored_at[(run_id, key)] = position

    def key(self, room_id: str, game: int) -> str:
        current = self.current.get(room_id)
        if current is not None and current[0] == game:
            return current[1]
        return self.stored.get((self.run_of[room_id], game), f"room-game-{game}")

    def game(self, run_id: str, key: str) -> int | None:
        room_id = self.room_of[run_id]
        current = self.current.get(room_id)
        if current is not None and current[1] == key:
            return current[0]
        if (run_id, key) in self.stored_at:
            return self.stored_at[(run_id, key)]
        if key.startswith("room-game-") and key[len("room-game-"):].isdigit():
            return int(key[len("room-game-"):])
        return None


def _create_old_tables() -> None:
    op.create_table(
        "room_moves",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("room_id", sa.String(32), sa.ForeignKey("rooms.id", ondelete="CASCADE"), nullable=False),
        sa.Column("game", sa.Integer, nullable=False),
        sa.Column("player", sa.String(128), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.UniqueConstraint("room_id", "game", "player", "idx"),
    )
    op.create_index("ix_room_moves_room_id", "room_moves", ["room_id"])
    op.create_table(
        "episode_moves",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(128), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("player", sa.String(128), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_id", "key", "player", "idx"),
    )
    op.create_index("ix_episode_moves_run_key", "episode_moves", ["run_id", "key"])


def upgrade() -> None:
    op.create_table(
        "moves",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(128), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("player", sa.String(128), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_id", "key", "player", "idx"),
    )
    bind = op.get_bind()
    carried = [dict(r._mapping) for r in bind.execute(
        sa.select(episode_moves.c.run_id, episode_moves.c.key, *(episode_moves.c[c] for c in _COLUMNS))).all()]
    known = _Rooms(bind)
    live_runs = set(bind.execute(sa.select(runs.c.id)).scalars())
    query = sa.select(room_moves.c.room_id, room_moves.c.game, *(room_moves.c[c] for c in _COLUMNS))
    for room_id, game, player, idx, data in bind.execute(query).all():
        run_id = known.run_of.get(room_id)
        if run_id in live_runs:
            carried.append({"run_id": run_id, "key": known.key(room_id, game), "player": player, "idx": idx,
                            "data": data})
    if carried:
        bind.execute(sa.insert(moves), carried)
    op.drop_index("ix_room_moves_room_id", "room_moves")
    op.drop_table("room_moves")
    op.drop_index("ix_episode_moves_run_key", "episode_moves")
    op.drop_table("episode_moves")


def downgrade() -> None:
    _create_old_tables()
    bind = op.get_bind()
    known = _Rooms(bind)
    to_rooms, to_episodes = [], []
    query = sa.select(moves.c.run_id, moves.c.key, *(moves.c[c] for c in _COLUMNS))
    for run_id, key, player, idx, data in bind.execute(query).all():
        game = known.game(run_id, key) if run_id in known.room_of else None
        if game is not None:
            to_rooms.append({"room_id": known.room_of[run_id], "game": game, "player": player, "idx": idx,
                             "data": data})
        else:
            to_episodes.append({"run_id": run_id, "key": key, "player": player, "idx": idx, "data": data})
    if to_rooms:
        bind.execute(sa.insert(room_moves), to_rooms)
    if to_episodes:
        bind.execute(sa.insert(episode_moves), to_episodes)
    op.drop_table("moves")
    playing = sa.select(episodes.c.id).where(episodes.c.status == "playing")
    bind.execute(sa.delete(events).where(events.c.episode_id.in_(playing)))
    bind.execute(sa.delete(episodes).where(episodes.c.status == "playing"))
