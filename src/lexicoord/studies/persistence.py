"""A study's state and its participants in the store, written with group commit.

Every change to a participant is written before the page is told of it, so a restart (or a crash) resumes
each participant exactly where they were. Hundreds of participants may move in the same second; each
write waits for at most one transaction in progress, and whatever arrives meanwhile goes into the next one
together (the newest version of each participant), so the cost of a commit is shared.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from sqlalchemy import Table, select, update
from sqlalchemy.dialects import postgresql, sqlite

from lexicoord.runs.schema import ParticipantRow, StudyRow
from lexicoord.runs.store import Store
from lexicoord.studies.participant import Participant

log = logging.getLogger(__name__)


class StudyStore:
    def __init__(self, store: Store, study_id: str) -> None:
        self.store = store
        self.study_id = study_id
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="study-store")
        self._people: dict[str, dict[str, Any]] = {}
        self._state: Callable[[], dict[str, Any]] | None = None
        self._waiters: list[asyncio.Future[None]] = []
        self._worker: asyncio.Task[None] | None = None

    # reading (at start) ------------------------------------------------------------------------------
    def load(self) -> tuple[dict[str, Any] | None, list[Participant]]:
        """The study's saved state (None for a new study) and every participant saved."""
        with self.store.session() as s:
            row = s.get(StudyRow, self.study_id)
            people = s.scalars(select(ParticipantRow).where(ParticipantRow.study_id == self.study_id)).all()
            return (row.state if row else None), [Participant.model_validate(p.data) for p in people]

    def open(self, config: dict[str, Any], state: dict[str, Any], replace: bool = False) -> dict[str, Any] | None:
        """Make the study's row if it has none; the file's values it was served with before (None: a new
        study), which ``replace`` swaps for ``config``."""
        now = time.time()
        with self.store.writing() as s:
            row = s.get(StudyRow, self.study_id)
            if row is None:
                s.add(StudyRow(id=self.study_id, created_at=now, updated_at=now, config=config, state=state))
                return None
            before = dict(row.config)
            if replace and before != config:
                row.config, row.updated_at = config, now
            return before

    # writing ------------------------------------------------------------------------------------------
    async def save(self, people: Sequence[Participant] = (), state: Callable[[], dict[str, Any]] | None = None) -> None:
        """Write ``people`` (and the study's state, as ``state()`` gives it when the transaction is made: many
        changes to it in one moment cost one copy), returning once it is committed."""
        for p in people:
            self._people[p.pid] = p.model_dump(mode="json")
        if state is not None:
            self._state = state
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(done)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        await done

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiters:
            people, waiters = self._people, self._waiters
            state = self._state() if self._state is not None else None  # on the loop, where it changes
            self._people, self._state, self._waiters = {}, None, []
            try:
                await loop.run_in_executor(self._thread, self._write, people, state)
            except Exception as exc:  # told to every waiter: the page hears the change was not kept
                log.exception("study %s: could not save", self.study_id)
                for w in waiters:
                    if not w.done():
                        w.set_exception(exc)
                continue
            for w in waiters:
                if not w.done():
                    w.set_result(None)

    def _write(self, people: dict[str, dict[str, Any]], state: dict[str, Any] | None) -> None:
        """One transaction: every participant upserted in one statement (``ON CONFLICT DO UPDATE``, which
        SQLite and PostgreSQL both have), the study's state beside them."""
        now = time.time()
        rows = [{"study_id": self.study_id, "pid": pid, "stage": d["stage"], "outcome": d.get("outcome"),
                 "updated_at": now, "data": d} for pid, d in people.items()]
        with self.store.writing() as s:
            if rows:
                insert = postgresql.insert if s.get_bind().dialect.name == "postgresql" else sqlite.insert
                statement = insert(ParticipantRow)
                s.execute(statement.on_conflict_do_update(
                    index_elements=["study_id", "pid"],
                    set_={c: statement.excluded[c] for c in ("stage", "outcome", "updated_at", "data")}), rows)
            if state is not None:
                s.execute(update(cast(Table, StudyRow.__table__)).where(StudyRow.__table__.c.id == self.study_id)
                          .values(state=state, updated_at=now))

    async def flushed(self) -> None:
        """Once everything asked so far is written (before the server stops)."""
        if self._worker is not None and not self._worker.done():
            await asyncio.shield(self._worker)

    def close(self) -> None:
        self._thread.shutdown(wait=True)
