"""Live games: a room's game kept while it is played, as a spectator sees it.

Kept apart because a live game is written many times a second and shows only its public events: its row has
status ``playing``, no item and no seed, until the save of the ended episode turns it into that episode.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from lexicoord.core.events import Event
from lexicoord.core.spec import EpisodeSpec
from lexicoord.runs.schema import EpisodeRow, EventRow
from lexicoord.runs.store_engine import Database
from lexicoord.runs.store_rows import INSERT_EVENTS, event_row
from lexicoord.runs.tables import EPISODES, PLAYING


class LiveGame(NamedTuple):
    """A live game in progress: its run, its spec as played and its place in the run."""

    run_id: str
    key: str
    spec: EpisodeSpec
    position: int

    @classmethod
    def of(cls, run_id: str, spec: EpisodeSpec, position: int) -> LiveGame:
        return cls(run_id, spec.key, spec, position)


class LiveWrite(NamedTuple):
    """Events of a live game as they happen; ``start``: the game (re)starts, so its row is made anew."""

    game: LiveGame
    events: Sequence[Event]
    start: bool = False


class LiveGames(Database):
    """A store's games in progress."""

    def keep_live(self, writes: Sequence[LiveWrite]) -> None:
        """Keep what a spectator may see of live games in progress, in one transaction, so the run viewer
        shows a game while it is played.

        A game in progress is an episode row with status ``playing`` whose spec has no item and whose seed
        is not kept (a task's answer, a Werewolf deal are in the item and the seed), holding only its public
        events (those everyone at the table sees; a role, a wolves' channel and a model's prompt are not).
        A ``start`` write makes the row, or makes it anew when a restarted game is played again from its
        start. Writes for a game that has ended meanwhile are dropped: the saved episode stands.
        :meth:`~lexicoord.runs.store.Store.save_episode` turns the row into the ended episode, same id, with every event.
        """
        if not writes:
            return
        now = time.time()
        with self.writing() as s:
            ids: dict[tuple[str, str], int | None] = {}
            rows: list[dict[str, Any]] = []
            for w in writes:
                at = (w.game.run_id, w.game.key)
                if w.start or at not in ids:
                    if w.start and rows:  # a game played again from its start clears what came before
                        s.execute(INSERT_EVENTS, rows)
                        rows = []
                    ids[at] = self._live_row(s, w.game, w.start, now)
                episode_id = ids[at]
                if episode_id is not None:
                    rows += [event_row(episode_id, e) for e in w.events if e.audience.public]
            if rows:
                s.execute(INSERT_EVENTS, rows)

    def _live_row(self, s: Session, game: LiveGame, start: bool, now: float) -> int | None:
        """The id of ``game``'s ``playing`` row (made or made anew on ``start``); None once the game ended."""
        c = EPISODES.c
        where = (c.run_id == game.run_id, c.key == game.key)
        # An update first: it locks the row (and, on SQLite, the store) before anything is read, so the save
        # that ends the game is either wholly before this write or wholly after it.
        head = _live_head(game, now) if start else {"finished_at": now}
        s.execute(update(EPISODES).where(*where, c.status == PLAYING).values(**head))
        found = s.execute(select(c.id, c.status).where(*where)).first()
        if found is not None and found.status == PLAYING:
            if start:
                s.execute(delete(EventRow).where(EventRow.episode_id == found.id))
            return int(found.id)
        if not start or found is not None:
            return None
        row = EpisodeRow(run_id=game.run_id, key=game.key, **head)
        s.add(row)
        s.flush()
        return row.id

    def drop_live(self, run_id: str, keys: Sequence[str] | None = None) -> None:
        """Forget a run's games in progress (a room that closes with its game cut short never ends it); with
        ``keys``, only those games (a run that several rooms share keeps the others' games under way)."""
        if keys is not None and not keys:
            return
        with self.writing() as s:
            where = [EpisodeRow.run_id == run_id, EpisodeRow.status == PLAYING]
            if keys is not None:
                where.append(EpisodeRow.key.in_(list(keys)))
            playing = select(EpisodeRow.id).where(*where)
            s.execute(delete(EventRow).where(EventRow.episode_id.in_(playing)))
            s.execute(delete(EpisodeRow).where(*where))


def _live_head(game: LiveGame, now: float) -> dict[str, Any]:
    """A game in progress as its episode row shows it: no item and no seed (see :meth:`LiveGames.keep_live`)."""
    spec = {**game.spec.model_dump(mode="json"), "item": {}}
    return {"position": game.position, "item_id": game.spec.item_id, "repetition": game.spec.repetition, "seed": 0,
            "spec": spec, "status": PLAYING, "error": None, "outcome": None, "started_at": now, "finished_at": now,
            "attempt": 1, "model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
