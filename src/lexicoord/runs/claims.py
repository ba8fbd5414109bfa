"""Sharing one run's episodes among several processes, on one machine or many, through the store.

Every process started on a run puts the episodes it would play in the run's claim table (rows
already there stay as they are; the first few are put and taken first, see runs/scheduler.py), then takes
them one at a time. Taking is one statement: pick the
first free or expired row in grid order that has no saved result, skipping rows another process has
locked at that instant (PostgreSQL's ``FOR UPDATE SKIP LOCKED``; SQLite runs one writer at a time,
so the statement is atomic there without it), and stamp it with this process and an expiry. A
process renews its claims while it plays, and the transaction that saves an episode deletes its
row. So an episode is played by one process at a time; a process killed outright stops renewing,
its claims expire, and another process plays those episodes again from their journals.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from lexicoord.runs.clock import db_now
from lexicoord.runs.lease import DEFAULT_LEASE
from lexicoord.runs.schema import ClaimRow, EpisodeRow
from lexicoord.runs.store import Store
from lexicoord.runs.tables import CLAIMS


@dataclass(frozen=True)
class Remaining:
    """What is left of a run's work, seen by one process."""

    free: int  # nobody holds them, or their holder's claim expired
    held: int  # another process holds them now
    next_expiry_in: float  # seconds until the first held claim runs out, by the database's clock (0 if none)


class Claims:
    """One process's view of a run's claim table."""

    def __init__(self, store: Store, run_id: str, *, lease: float = DEFAULT_LEASE,
                 skip: Collection[str] = ("done",)) -> None:
        self.store = store
        self.run_id = run_id
        self.lease = lease
        #: Statuses of saved episodes that are not played again (``done``; also ``failed`` when failures are kept).
        self.skip = tuple(skip)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def _now(self) -> ColumnElement[float]:
        """Now, by the database's clock (see runs/clock.py): every machine's leases are stamped and read with it."""
        return db_now(self.store.engine.dialect.name)

    def _unfinished(self) -> ColumnElement[bool]:
        saved = select(EpisodeRow.id).where(EpisodeRow.run_id == ClaimRow.run_id, EpisodeRow.key == ClaimRow.key,
                                            EpisodeRow.status.in_(self.skip))
        return ~saved.exists()

    def offer(self, entries: Sequence[tuple[str, int]]) -> None:
        """Put ``(key, position)`` rows in the table; keys already there (another process's) stay as they are."""
        if not entries:
            return
        with self.store.writing() as s:
            present = set(s.scalars(select(ClaimRow.key).where(ClaimRow.run_id == self.run_id)))
            new = [{"run_id": self.run_id, "key": k, "position": p, "owner": None, "expires_at": 0.0}
                   for k, p in entries if k not in present]
            if not new:
                return
            # Another process may add the same rows between our read and this write: theirs stand. On the table,
            # not the ORM class: plain rows need none of the ORM's bulk machinery, which took most of the time.
            dialect = self.store.engine.dialect.name
            if dialect == "postgresql":
                s.execute(postgresql.insert(CLAIMS).on_conflict_do_nothing(), new)
            elif dialect == "sqlite":
                s.execute(sqlite.insert(CLAIMS).on_conflict_do_nothing(), new)
            else:
                s.execute(insert(CLAIMS), new)

    def take(self, exclude: Collection[str] = (), n: int = 1) -> list[str]:
        """Claim up to ``n`` of the next episodes nobody else is playing, in grid order (none: none free now).

        ``exclude``: keys this process cannot play (another process's grid offered them). Several at once
        when several of this process's workers are idle: one statement instead of one each.
        """
        now = self._now()
        pick = (
            select(ClaimRow.key)
            .where(ClaimRow.run_id == self.run_id, ClaimRow.expires_at < now, self._unfinished(),
                   ClaimRow.key.not_in(list(exclude)))
            .order_by(ClaimRow.position)
            .limit(max(1, n))
            .with_for_update(skip_locked=True)
            # Evaluated once: as a plain IN (subquery), PostgreSQL may run it again per row, each run
            # skipping the rows the last one took, and so claim every free row.
            .cte("picked")
            .prefix_with("MATERIALIZED")
        )
        statement = (
            update(ClaimRow)
            .where(ClaimRow.run_id == self.run_id, ClaimRow.key.in_(select(pick.c.key)), ClaimRow.expires_at < now)
            .values(owner=self.owner, expires_at=now + self.lease)
            .returning(ClaimRow.key, ClaimRow.position)
        )
        with self.store.writing() as s:
            taken = s.execute(statement).all()
        return [key for key, _ in sorted(taken, key=lambda row: row[1])]

    def renew(self, keys: Collection[str]) -> set[str]:
        """Extend this process's claims on ``keys``; the keys among them it no longer holds: taken by another
        process, given back, or saved (a save deletes the claim's row, whoever saved it). The caller tells its own
        saves from the rest."""
        if not keys:
            return set()
        with self.store.writing() as s:
            s.execute(
                update(ClaimRow)
                .where(ClaimRow.run_id == self.run_id, ClaimRow.owner == self.owner, ClaimRow.key.in_(list(keys)))
                .values(expires_at=self._now() + self.lease)
            )
            mine = set(s.scalars(select(ClaimRow.key).where(ClaimRow.run_id == self.run_id,
                                                            ClaimRow.owner == self.owner, ClaimRow.key.in_(list(keys)))))
            return set(keys) - mine

    def give_back(self, key: str) -> None:
        """Free one claim of this process at once."""
        with self.store.writing() as s:
            s.execute(update(ClaimRow).where(ClaimRow.run_id == self.run_id, ClaimRow.owner == self.owner,
                                             ClaimRow.key == key).values(owner=None, expires_at=0.0))

    def release(self) -> None:
        """Give back every claim of this process at once (an interrupt), so others need not wait for expiry."""
        with self.store.writing() as s:
            s.execute(update(ClaimRow).where(ClaimRow.run_id == self.run_id, ClaimRow.owner == self.owner)
                      .values(owner=None, expires_at=0.0))

    def remaining(self, exclude: Collection[str] = ()) -> Remaining:
        """Unfinished rows: free ones, those others hold, and when the first of those expires.

        Rows whose episode was saved meanwhile (a process that offered them just after another saved
        them) are deleted here, so they never keep a process waiting.
        """
        now = self._now()
        with self.store.writing() as s:
            stale = select(ClaimRow.key).where(ClaimRow.run_id == self.run_id, ~self._unfinished())
            s.execute(delete(ClaimRow).where(ClaimRow.run_id == self.run_id, ClaimRow.key.in_(stale)))
            free, held, first = s.execute(
                select(
                    func.count().filter(ClaimRow.expires_at < now),
                    func.count().filter(ClaimRow.expires_at >= now, ClaimRow.owner != self.owner),
                    func.min(ClaimRow.expires_at - now).filter(ClaimRow.expires_at >= now, ClaimRow.owner != self.owner),
                ).where(ClaimRow.run_id == self.run_id, ClaimRow.key.not_in(list(exclude)))
            ).one()
        return Remaining(free=int(free or 0), held=int(held or 0), next_expiry_in=float(first or 0.0))
