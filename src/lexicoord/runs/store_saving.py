"""Saving ended episodes: each with all its events in one transaction, whole or not at all.

Kept apart because a save carries the store's rules for an episode met twice: a failed try is replaced by the
retry, a live game's row becomes the ended episode, and a second save of a finished episode stands if it says
the same or is kept beside the first as a conflict (logged as ``lexicoord.runs.store``) if it does not.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic_core import from_json
from sqlalchemy import delete, select, tuple_
from sqlalchemy.orm import Session

from lexicoord.core.events import Event, event_from_dict
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.schema import EpisodeRow, EventRow, MoveRow
from lexicoord.runs.store_engine import Database, dump_json
from lexicoord.runs.store_journal import settle_moves
from lexicoord.runs.store_rows import INSERT_EPISODES, INSERT_EVENTS, event_row
from lexicoord.runs.tables import CLAIMS, CONFLICT, EVENTS, PLAYING

#: The store's log, under the name its documentation gives (a second save with other content is an error there).
log = logging.getLogger("lexicoord.runs.store")


class Saving(Database):
    """A store's writer of ended episodes."""

    def save_episode(self, record: EpisodeRecord, events: Sequence[Event]) -> int:
        """Write an ended episode and its events atomically; a prior failed attempt is replaced."""
        return self.save_episodes([(record, events)])[0]

    def save_episodes(self, batch: Sequence[tuple[EpisodeRecord, Sequence[Event]]]) -> list[int]:
        """Write several ended episodes in one transaction (all or none); returns their ids."""
        with self.writing() as s:
            return self.save_episodes_in(s, batch)

    def save_episodes_in(self, s: Session, batch: Sequence[tuple[EpisodeRecord, Sequence[Event]]]) -> list[int]:
        """:meth:`save_episodes` in the caller's transaction (a server sharing one among its callers' writes)."""
        keys = [(record.run_id, record.key) for record, _ in batch]
        if len(set(keys)) < len(keys):  # the same episode twice: each save sees the one before
            return [self._write_episodes(s, [entry])[0] for entry in batch]
        return self._write_episodes(s, batch)

    def _write_episodes(self, s: Session, batch: Sequence[tuple[EpisodeRecord, Sequence[Event]]]) -> list[int]:
        """Each step is one statement for the whole batch, not one per episode: a save is a write that other
        processes' claims and saves queue behind, so its length is theirs too."""
        if not batch:
            return []
        keys = [(record.run_id, record.key) for record, _ in batch]
        # The episodes' claims (see runs/claims.py) go with the save, whoever saves them.
        # The deletes name tables, not mapped classes: this session holds no claim or event object to keep in step,
        # and the ORM's bulk-delete bookkeeping cost more than the statement (a live room saves one game at a time).
        s.execute(delete(CLAIMS).where(tuple_(CLAIMS.c.run_id, CLAIMS.c.key).in_(keys)))
        these = tuple_(EpisodeRow.run_id, EpisodeRow.key).in_(keys)
        priors = {(p.run_id, p.key): p for p in s.scalars(select(EpisodeRow).where(these))}
        playing = [k for k, p in priors.items() if p.status == PLAYING]
        if playing:
            # Locked, so that a write of a game's live events (keep_live) either ends before this save, and
            # its events are replaced below, or waits and then finds the game ended.
            locked = select(EpisodeRow).where(tuple_(EpisodeRow.run_id, EpisodeRow.key).in_(playing))
            for p in s.scalars(locked.with_for_update().execution_options(populate_existing=True)):
                priors[(p.run_id, p.key)] = p
        ids: dict[tuple[str, str], int] = {}
        attempts: dict[tuple[str, str], int] = {}
        kept: dict[tuple[str, str], EpisodeRow] = {}  # live games: the game as it was shown becomes the episode
        for key, prior in priors.items():
            if prior.status == "done":
                ids[key] = prior.id  # done meanwhile (another process on the same run): the first result stands
            elif prior.status == PLAYING:
                kept[key], attempts[key] = prior, prior.attempt
            else:
                attempts[key] = prior.attempt + 1
        batch = [self._second_save(s, record, events, priors[(record.run_id, record.key)])
                 if (record.run_id, record.key) in ids else (record, events) for record, events in batch]
        answer = [(record.run_id, record.key) for record, _ in batch]  # a conflict's id is its own row's
        replaced = [p.id for k, p in priors.items() if k not in ids]
        if replaced:
            s.execute(delete(EVENTS).where(EVENTS.c.episode_id.in_(replaced)))
            gone = [p.id for k, p in priors.items() if k not in ids and k not in kept]
            if gone:
                s.execute(delete(EpisodeRow).where(EpisodeRow.id.in_(gone)).execution_options(
                    synchronize_session=False))
        saving = [(record, events) for record, events in batch if (record.run_id, record.key) not in ids]
        settle_moves(s, [record for record, _ in saving])
        new: list[dict[str, Any]] = []
        for record, _ in saving:
            key = (record.run_id, record.key)
            data = record.model_dump(exclude={"id", "version"})
            data["attempt"] = attempts.get(key, 1)
            if key in kept:
                for name, value in data.items():
                    setattr(kept[key], name, value)
            else:
                new.append(data)
        if kept:
            s.flush()
            ids.update((key, row.id) for key, row in kept.items())
        if new:
            # One executemany; the ids are read back by key.
            s.execute(INSERT_EPISODES, new)
            made = tuple_(EpisodeRow.run_id, EpisodeRow.key).in_([(d["run_id"], d["key"]) for d in new])
            ids.update(((run_id, key), row_id) for run_id, key, row_id in
                       s.execute(select(EpisodeRow.run_id, EpisodeRow.key, EpisodeRow.id).where(made)))
        rows = [event_row(ids[(record.run_id, record.key)], e) for record, events in saving for e in events]
        if rows:
            s.execute(INSERT_EVENTS, rows)
        return [ids[key] for key in answer]

    def _second_save(self, s: Session, record: EpisodeRecord, events: Sequence[Event],
                  prior: EpisodeRow) -> tuple[EpisodeRecord, Sequence[Event]]:
        """A save that meets the same episode finished already. The same content (another process played it
        too, to the same end, saying the same) stands as it is. Other content is an error, logged and kept
        beside the first under ``KEY~N`` with status ``conflict``: nothing a save brings is lost. A failed try
        after the success is told in the log and not kept (it adds no result)."""
        if record.status != "done":
            log.warning("run %s: a failed try of episode %s came after it was done; the done one stands (%s)",
                        record.run_id, record.key, (record.error or "")[:200])
            return record, events
        theirs = from_json(dump_json({"spec": prior.spec, "outcome": prior.outcome}))
        ours = from_json(dump_json({"spec": record.spec, "outcome": record.outcome}))
        differs = [k for k in ("spec", "outcome") if ours[k] != theirs[k]]
        stored = s.scalars(select(EventRow.data).where(EventRow.episode_id == prior.id).order_by(EventRow.seq))
        if _said(event_from_dict(d) for d in stored) != _said(events):
            differs.append("record of what was said and done")
        if not differs:
            return record, events
        like = s.scalars(select(EpisodeRow.key).where(EpisodeRow.run_id == record.run_id,
                                                      EpisodeRow.key.like(f"{record.key}~%"))).all()
        key = f"{record.key}~{len(like) + 2}"
        log.error("run %s: episode %s was saved again with another %s than the one saved first; the first stands "
                  "and this one is kept as %s (status %s)", record.run_id, record.key, " and ".join(differs), key,
                  CONFLICT)
        # The episode is done: what its second player journalled is settled with it.
        s.execute(delete(MoveRow).where(MoveRow.run_id == record.run_id, MoveRow.key == record.key))
        return record.model_copy(update={
            "key": key, "status": CONFLICT,
            "error": f"saved after episode {record.key} of this run had ended with another {' and '.join(differs)}"}), \
            events


def _said(events: Iterable[Event]) -> list[dict[str, Any]]:
    """An episode's events as what was said and done, for telling two saves of it apart: without the moment each
    happened, and without the model calls (their timings differ on every play; what they answered is in the
    events that follow them)."""
    return [from_json(dump_json(e.model_dump(mode="json", exclude={"ts"}))) for e in events if e.type != "model_call"]
