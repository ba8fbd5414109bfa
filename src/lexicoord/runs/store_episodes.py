"""Reading a run's ended episodes and their events whole: what reports, exports and resumes read.

Kept apart from the run viewer's pages (:mod:`lexicoord.runs.store_pages`) because these readers want results:
games still in play are never among them, and second saves (conflicts) only when asked for.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from typing import TextIO

from sqlalchemy import select, tuple_

from lexicoord.core.events import Event, event_from_dict
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.schema import EpisodeRow, EventRow
from lexicoord.runs.store_rows import record_of
from lexicoord.runs.store_runs import Runs
from lexicoord.runs.tables import CONFLICT, PLAYING


class Episodes(Runs):
    """A store's reader of ended episodes (on its runs: an export starts with its run)."""

    def finished_keys(self, run_id: str, include_failed: bool = False) -> set[str]:
        statuses = ["done", "failed"] if include_failed else ["done"]
        with self.session() as s:
            return set(
                s.scalars(select(EpisodeRow.key).where(EpisodeRow.run_id == run_id, EpisodeRow.status.in_(statuses)))
            )

    def episodes(self, run_id: str, keys: Collection[str] | None = None,
                 conflicts: bool = False) -> list[EpisodeRecord]:
        """The run's ended episodes (a live game in progress is the run viewer's to show, not a result); with
        ``keys``, only those; with ``conflicts``, second saves kept beside the first (status ``conflict``) too."""
        if keys is not None and not keys:
            return []
        with self.session() as s:
            query = select(EpisodeRow).where(EpisodeRow.run_id == run_id, EpisodeRow.status.not_in(_hidden(conflicts)))
            if keys is not None:
                query = query.where(EpisodeRow.key.in_(list(keys)))
            return [record_of(r) for r in s.scalars(query.order_by(EpisodeRow.position))]

    def events(self, episode_id: int) -> list[Event]:
        with self.session() as s:
            rows = s.scalars(select(EventRow.data).where(EventRow.episode_id == episode_id).order_by(EventRow.seq))
            return [event_from_dict(d) for d in rows]

    def iter_run_events(self, run_id: str, page: int = 200, types: Sequence[str] | None = None,
                        keys: Collection[str] | None = None,
                        conflicts: bool = False) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
        """The run's ended episodes in grid order, each with its events, read ``page`` episodes at a time.

        Two queries a page (the episodes after the last one read, then all their events), not one per
        episode; only a page is held, so a report of a million events reads it in the memory of a page.
        ``types``: only events of these types (a statistic that reads choices need not parse every prompt);
        ``keys``: only these episodes (one study room's games in a run every group shares); ``conflicts``:
        second saves kept beside the first (never a result: a report counts them apart).
        """
        if keys is not None and not keys:
            return
        after: tuple[int, int] | None = None
        while True:
            with self.session() as s:
                query = select(EpisodeRow).where(EpisodeRow.run_id == run_id,
                                                 EpisodeRow.status.not_in(_hidden(conflicts)))
                if keys is not None:
                    query = query.where(EpisodeRow.key.in_(list(keys)))
                if after is not None:
                    query = query.where(tuple_(EpisodeRow.position, EpisodeRow.id) > tuple_(*after))
                records = [record_of(r) for r in s.scalars(query.order_by(EpisodeRow.position, EpisodeRow.id)
                                                          .limit(page))]
                if not records:
                    return
                ids = [r.id for r in records]
                by_episode: dict[int, list[Event]] = {i: [] for i in ids if i is not None}
                wanted = select(EventRow.episode_id, EventRow.data).where(EventRow.episode_id.in_(ids))
                if types is not None:
                    wanted = wanted.where(EventRow.type.in_(list(types)))
                for episode_id, data in s.execute(wanted.order_by(EventRow.episode_id, EventRow.seq)):
                    by_episode[episode_id].append(event_from_dict(data))
            for record in records:
                assert record.id is not None
                yield record, by_episode.pop(record.id)
            last = records[-1]
            assert last.id is not None
            after = (last.position, last.id)

    def export_jsonl(self, run_id: str, out: TextIO) -> int:
        """One line for the run, then per episode one line for it and one per event. Returns lines written."""
        run = self.run(run_id)
        out.write(json.dumps({"record": "run", **run.model_dump(mode="json")}, ensure_ascii=False) + "\n")
        lines = 1
        for episode, events in self.iter_run_events(run.id, conflicts=True):
            out.write(json.dumps({"record": "episode", **episode.model_dump(mode="json")}, ensure_ascii=False) + "\n")
            lines += 1
            for e in events:
                payload = {"record": "event", "episode_id": episode.id, **e.model_dump(mode="json")}
                out.write(json.dumps(payload, ensure_ascii=False) + "\n")
                lines += 1
        return lines


def _hidden(conflicts: bool) -> tuple[str, ...]:
    """The statuses a reader of results leaves out: games still being played, and (unless asked) conflicts."""
    return (PLAYING,) if conflicts else (PLAYING, CONFLICT)
