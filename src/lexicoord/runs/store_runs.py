"""Runs: creating one, reopening it to resume, and telling what state each is in.

Kept apart because a run's rules are about its config, not its episodes: a resume may not change what a run
plays (:func:`differences` says what changed), may grow what it declares growable, and a run left ``running``
by a process that died reads as interrupted.

Written in Core statements on :mod:`lexicoord.runs.tables`, not through the ORM: ``lexicoord runs list`` opens
:class:`Runs` alone and starts without importing the ORM (a sixth of its start-up).
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Connection, Row, func, insert, select, tuple_, update
from sqlalchemy.exc import IntegrityError

from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.runs.clock import db_now
from lexicoord.runs.lease import lease_from_env
from lexicoord.runs.names import check_run_name
from lexicoord.runs.records import RunInfo
from lexicoord.runs.store_engine import Database
from lexicoord.runs.tables import CLAIMS, CONFLICT, EPISODES, ROOMS, RUNS

#: The key of a run's config holding how it was executed (values may change on a resume; all are kept).
RUNTIME = "runtime"


#: Config keys that describe a run rather than make its episodes (the paper's numbers it is compared with, and which
#: of its models stand for the paper's): a resume replaces them and never refuses for them.
NOTES = ("published", "paper_models")


def _grew(before: Any, after: Any) -> bool:
    """Whether a growable config value only grew: a count rose or stayed, a list kept every entry it had. A
    mapping (a study's conditions) is the study's to judge: it refuses a change to a condition that has begun,
    and takes one to a condition no group has played."""
    if isinstance(after, dict) and (before is None or isinstance(before, dict)):
        return True
    if isinstance(before, bool) or isinstance(after, bool):
        return bool(before == after)
    if isinstance(before, int | float) and isinstance(after, int | float):
        return after >= before
    if isinstance(before, list) and isinstance(after, list):
        return all(b in after for b in before)
    return bool(before == after)


def differences(key: str, stored: Any, new: Any) -> list[tuple[str, Any, Any]]:
    """Each leaf of a setting that differs, with its stored and its new value (``settings.qhat``, not the whole
    ``settings`` table), so that a refused change says exactly what changed."""
    if isinstance(stored, dict) and isinstance(new, dict):
        return [d for k in sorted(set(stored) | set(new), key=str) if stored.get(k) != new.get(k)
                for d in differences(f"{key}.{k}", stored.get(k), new.get(k))]
    return [(key, stored, new)]


class Runs(Database):
    """A store's runs."""

    def open_run(self, run_id: str, protocol: str, config: dict[str, Any], total: int,
                 runtime: dict[str, Any] | None = None, grows: Collection[str] = ()) -> RunInfo:
        """Create the run, or reopen it to resume.

        Resuming with another protocol or other run settings is refused: the episodes
        already stored were made under the first ones, and one run must not mix them.
        The config keys in ``grows`` (how many items, which variants) may grow on a
        resume: a count may rise and a list gain entries, since that only adds episodes;
        the stored config then holds the grown values. ``runtime`` (how the run was
        executed, such as its concurrency) may differ on a resume: every value used is
        kept, in order, under the config's ``runtime`` key.
        """
        now = time.time()
        config = json.loads(json.dumps(config))  # as it will read back
        config.pop(RUNTIME, None)
        used = json.loads(json.dumps(runtime or {}))
        for attempt in range(2):
            try:
                self._open_run(run_id, protocol, config, total, used, now, frozenset(grows))
                break
            except IntegrityError:
                # Several processes started on one new run at once: one created it, the others reopen it.
                if attempt == 1:
                    raise ConfigError(f"Run '{run_id}' could not be created or reopened; try again.") from None
        return self.run(run_id)

    def _open_run(self, run_id: str, protocol: str, config: dict[str, Any], total: int, used: dict[str, Any],
                  now: float, grows: frozenset[str]) -> None:
        with self.writing(rewrites=True) as s:
            # Locked, so that processes reopening the run at once each add their runtime values.
            row = s.execute(select(RUNS).where(RUNS.c.id == run_id).with_for_update()).first()
            if row is None:
                check_run_name(run_id)  # a new name must be one that is safe as a key and a folder
                s.execute(insert(RUNS).values(
                    id=run_id, protocol=protocol, status="running", created_at=now, updated_at=now,
                    config={**config, RUNTIME: {k: [v] for k, v in used.items()}} if used else config,
                    total_episodes=total,
                ))
            else:
                if row.protocol != protocol:
                    raise ConfigError(
                        f"Run '{run_id}' exists with protocol '{row.protocol}', not '{protocol}'; "
                        "choose another run name."
                    )
                stored = {k: v for k, v in row.config.items() if k != RUNTIME}
                changed = sorted(k for k in set(stored) | set(config)
                                 if stored.get(k) != config.get(k) and k not in NOTES)
                shrunk = [k for k in changed if k in grows and not _grew(stored.get(k), config.get(k))]
                if shrunk:
                    was = ", ".join(f"{k}={stored.get(k)!r}" for k in shrunk)
                    raise ConfigError(
                        f"Run '{run_id}' already holds {was}; a run grows but never shrinks: give at least as "
                        "much, or choose another run name."
                    )
                changed = [k for k in changed if k not in grows]
                if changed:
                    said = "; ".join(f"{key} was {was!r} and is now {now!r}" for k in changed
                                     for key, was, now in differences(k, stored.get(k), config.get(k)))
                    raise ConfigError(
                        f"Run '{run_id}' was started with other settings: {said}; resume it with the same "
                        "settings or choose another run name."
                    )
                before = dict(row.config.get(RUNTIME) or {})
                for k, v in used.items():
                    before[k] = [*before.get(k, []), *([v] if v not in before.get(k, []) else [])]
                stored = {**stored, **{k: config[k] for k in (*grows, *NOTES) if k in config}}
                s.execute(update(RUNS).where(RUNS.c.id == run_id).values(
                    config={**stored, RUNTIME: before} if before else stored,
                    status="running", updated_at=now, total_episodes=total,
                ))

    def set_run_status(self, run_id: str, status: str) -> None:
        with self.writing() as s:
            s.execute(update(RUNS).where(RUNS.c.id == run_id).values(status=status, updated_at=time.time()))

    def _counts(self, c: Connection, run_ids: Sequence[str]) -> dict[tuple[str, str], int]:
        rows = c.execute(
            select(EPISODES.c.run_id, EPISODES.c.status, func.count())
            .where(EPISODES.c.run_id.in_(run_ids))
            .group_by(EPISODES.c.run_id, EPISODES.c.status)
        )
        return {(r, st): n for r, st, n in rows}

    def _alive(self, c: Connection, rows: Sequence[Row[Any]]) -> set[str]:
        """Of the ``running`` rows, those some process may still be playing.

        A process killed outright (a signal, a segmentation fault in a native library, a power cut) cannot
        say it stopped, so ``running`` is read as ``interrupted`` once nothing of the run is alive: no claim
        unexpired (a playing process renews its claims, see runs/claims.py), no change to the run within a
        lease, and no live room on it (rooms play without claims)."""
        running = [r.id for r in rows if r.status == "running"]
        if not running:
            return set()
        now, lease = time.time(), lease_from_env()
        held = set(c.scalars(select(CLAIMS.c.run_id).where(CLAIMS.c.run_id.in_(running),
                                                           CLAIMS.c.expires_at >= db_now(self.engine.dialect.name))
                             .distinct()))
        rooms = set(c.scalars(select(ROOMS.c.run_id).where(ROOMS.c.run_id.in_(running))))
        recent = {r.id for r in rows if r.status == "running" and now - r.updated_at < lease}
        return held | rooms | recent

    def _infos(self, c: Connection, rows: Sequence[Row[Any]]) -> list[RunInfo]:
        counts, alive = self._counts(c, [r.id for r in rows]), self._alive(c, rows)
        return [self._info(r, counts, alive) for r in rows]

    def _info(self, row: Row[Any], counts: dict[tuple[str, str], int], alive: set[str]) -> RunInfo:
        status = "interrupted" if row.status == "running" and row.id not in alive else row.status
        return RunInfo(
            id=row.id, protocol=row.protocol, status=status, created_at=row.created_at,
            updated_at=row.updated_at, config=row.config or {}, total_episodes=row.total_episodes,
            done=counts.get((row.id, "done"), 0), failed=counts.get((row.id, "failed"), 0),
            conflicts=counts.get((row.id, CONFLICT), 0),
        )

    def runs(self) -> list[RunInfo]:
        with self.engine.connect() as c:
            return self._infos(c, c.execute(select(RUNS).order_by(RUNS.c.created_at.desc())).all())

    def run(self, run_id: str) -> RunInfo:
        """The run named ``run_id`` or by a unique prefix of it."""
        with self.engine.connect() as c:
            row = c.execute(select(RUNS).where(RUNS.c.id == run_id)).first()
            if row is None:
                like = c.execute(select(RUNS).where(RUNS.c.id.startswith(run_id, autoescape=True))).all()
                if len(like) != 1:
                    hint = "several runs start with it" if like else "run 'lexicoord runs list' to see the runs"
                    raise LexicoordError(f"No run '{run_id}' in {self.url} ({hint}).")
                row = like[0]
            return self._infos(c, [row])[0]

    def run_page(self, limit: int, before: tuple[float, str] | None = None) -> list[RunInfo]:
        """Up to ``limit`` runs, newest first, older than ``before`` (its ``created_at`` and ``id``)."""
        with self.engine.connect() as c:
            query = select(RUNS).order_by(RUNS.c.created_at.desc(), RUNS.c.id.desc()).limit(limit)
            if before is not None:
                query = query.where(tuple_(RUNS.c.created_at, RUNS.c.id) < tuple_(*before))
            return self._infos(c, c.execute(query).all())

    def room_run_ids(self, run_ids: Sequence[str]) -> set[str]:
        """Which of ``run_ids`` are live rooms' runs (the others are campaigns)."""
        with self.engine.connect() as c:
            return set(c.scalars(select(ROOMS.c.run_id).where(ROOMS.c.run_id.in_(run_ids))))
