"""Reading page by page, for the run viewer: an episode, a page of a run's episodes, a page of an episode's events.

Kept apart because the viewer reads any episode (a live game too) a page at a time, after or before a key, and
filters by outcome and settings values in the database, never in memory, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, select, tuple_

from lexicoord.core.events import Event, event_from_dict
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.schema import EpisodeRow, EventRow
from lexicoord.runs.store_engine import Database
from lexicoord.runs.store_rows import record_of
from lexicoord.runs.tables import PLAYING

#: A value an episode filter compares with (a JSON scalar).
Scalar = str | int | float | bool | None


class Pages(Database):
    """A store's reader for the run viewer."""

    def episode(self, episode_id: int) -> EpisodeRecord | None:
        with self.session() as s:
            row = s.get(EpisodeRow, episode_id)
            return None if row is None else record_of(row)

    def episode_page(self, run_id: str, *, limit: int, after: tuple[int, int] | None = None,
                     before: tuple[int, int] | None = None, status: str | None = None,
                     outcome: Mapping[str, Scalar] | None = None, settings: Mapping[str, Scalar] | None = None,
                     ) -> list[EpisodeRecord]:
        """Up to ``limit`` episodes of a run in grid order, after (or before) a ``(position, id)``, that have
        ``status`` and the given outcome and settings values; filtered in the database, never in memory."""
        where = _episode_filters(run_id, status, outcome or {}, settings or {}, self.engine.dialect.name)
        key = tuple_(EpisodeRow.position, EpisodeRow.id)
        query = select(EpisodeRow).where(*where)
        if before is not None:
            query = query.where(key < tuple_(*before)).order_by(EpisodeRow.position.desc(), EpisodeRow.id.desc())
        else:
            if after is not None:
                query = query.where(key > tuple_(*after))
            query = query.order_by(EpisodeRow.position, EpisodeRow.id)
        with self.session() as s:
            rows = [record_of(r) for r in s.scalars(query.limit(limit))]
        return rows[::-1] if before is not None else rows

    def count_episodes(self, run_id: str, *, status: str | None = None, outcome: Mapping[str, Scalar] | None = None,
                       settings: Mapping[str, Scalar] | None = None) -> int:
        where = _episode_filters(run_id, status, outcome or {}, settings or {}, self.engine.dialect.name)
        with self.session() as s:
            return int(s.scalar(select(func.count()).select_from(EpisodeRow).where(*where)) or 0)

    def episode_shapes(self, run_id: str, limit: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The outcome and settings of a run's first ``limit`` episodes (not their items), to offer filters."""
        query = (select(EpisodeRow.outcome, EpisodeRow.spec["settings"]).where(EpisodeRow.run_id == run_id)
                 .order_by(EpisodeRow.position, EpisodeRow.id).limit(limit))
        with self.session() as s:
            return [(o if isinstance(o, dict) else {}, st if isinstance(st, dict) else {}) for o, st in s.execute(query)]

    def event_page(self, episode_id: int, *, limit: int, after: int | None = None, before: int | None = None,
                   types: Sequence[str] | None = None, upto: int | None = None) -> list[Event]:
        """Up to ``limit`` events of an episode in order, after (or before) a ``seq`` and up to ``upto``: one index
        range read (with ``types``, on the episode's events of those types alone)."""
        query = select(EventRow.data).where(EventRow.episode_id == episode_id)
        if types:
            query = query.where(EventRow.type.in_(types))
        if upto is not None:
            query = query.where(EventRow.seq <= upto)
        if before is not None:
            query = query.where(EventRow.seq < before).order_by(EventRow.seq.desc())
        else:
            if after is not None:
                query = query.where(EventRow.seq > after)
            query = query.order_by(EventRow.seq)
        with self.session() as s:
            events = [event_from_dict(d) for d in s.scalars(query.limit(limit))]
        return events[::-1] if before is not None else events

    def event_span(self, episode_id: int) -> tuple[int, int, int]:
        """An episode's event count and its first and last ``seq`` (0, -1, -1 with none).

        An ended episode is saved with every event, numbered from 0 without a gap, so its count is its last
        ``seq`` + 1, read from the index's two ends whatever the episode's size; only a game still in play (its
        public events alone, so with gaps) is counted row by row, and it is as long as a game so far."""
        mine = EventRow.episode_id == episode_id
        with self.session() as s:  # each end alone: one min() or max() per statement is an index lookup
            first = s.scalar(select(func.min(EventRow.seq)).where(mine))
            last = s.scalar(select(func.max(EventRow.seq)).where(mine))
            if first is None or last is None:
                return 0, -1, -1
            status = s.scalar(select(EpisodeRow.status).where(EpisodeRow.id == episode_id))
            if status == PLAYING:
                n = s.scalar(select(func.count()).where(mine)) or 0
            else:
                n = int(last) - int(first) + 1
        return int(n), int(first), int(last)


def _json_equals(value: Any, wanted: Scalar, dialect: str) -> ColumnElement[bool]:
    """A JSON field equal to ``wanted``, compared as its own type (so ``true`` is not the string "true").

    SQLite's json_extract already gives each JSON type its own SQL type. PostgreSQL's ``->>`` gives text
    for every type, so there the field's JSON type is checked first, and a cast is made only on a field of
    that type (a cast of "a" to a number would be an error, not a mismatch).
    """
    if wanted is None:
        return value.as_string().is_(None)  # type: ignore[no-any-return]
    if dialect == "postgresql":
        kind = func.json_typeof(value)
        if isinstance(wanted, bool):
            return case((kind == "boolean", value.as_boolean()), else_=None) == wanted
        if isinstance(wanted, int | float):
            return case((kind == "number", value.as_float()), else_=None) == float(wanted)
        return and_(kind == "string", value.as_string() == wanted)
    if isinstance(wanted, bool):
        return value.as_boolean() == wanted  # type: ignore[no-any-return]
    if isinstance(wanted, int | float):
        return value.as_float() == float(wanted)  # type: ignore[no-any-return]
    return value.as_string() == wanted  # type: ignore[no-any-return]


def _episode_filters(run_id: str, status: str | None, outcome: Mapping[str, Scalar],
                     settings: Mapping[str, Scalar], dialect: str) -> list[ColumnElement[bool]]:
    where: list[ColumnElement[bool]] = [EpisodeRow.run_id == run_id]
    if status is not None:
        where.append(EpisodeRow.status == status)
    where += [_json_equals(EpisodeRow.outcome[k], v, dialect) for k, v in outcome.items()]
    where += [_json_equals(EpisodeRow.spec[("settings", k)], v, dialect) for k, v in settings.items()]
    return where
