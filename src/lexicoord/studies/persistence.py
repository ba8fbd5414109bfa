"""A study's state and its participants in the store, written with group commit
(:mod:`lexicoord.runs.group_commit`).

Every change to a participant is written before the page is told of it, so a restart (or a crash) resumes
each participant exactly where they were; the participants who move in the same moment share a transaction.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite

from lexicoord.runs.group_commit import GroupCommit
from lexicoord.runs.schema import ParticipantRow, StudyRow
from lexicoord.runs.store import Store
from lexicoord.runs.tables import STUDIES
from lexicoord.studies.participant import Participant

#: The key of the study's own state among a transaction's items (a participant's is ``p:<id>``).
STATE = "state"


def _dump(p: Participant) -> Callable[[], dict[str, Any]]:
    return lambda: p.model_dump(mode="json")


class StudyStore:
    def __init__(self, store: Store, study_id: str) -> None:
        self.store = store
        self.study_id = study_id
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="study-store")
        self._commits = GroupCommit(self._write_batch, f"study {study_id}")

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
        items: dict[str, Callable[[], Any]] = {f"p:{p.pid}": _dump(p) for p in people}
        if state is not None:
            items[STATE] = state
        await self._commits.save(items)

    async def _write_batch(self, items: dict[str, Any]) -> None:
        people = {key[2:]: value for key, value in items.items() if key != STATE}
        await asyncio.get_running_loop().run_in_executor(self._thread, self._write, people, items.get(STATE))

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
            if state is not None:  # on the table itself: the ORM's compile path costs more than the statement
                s.execute(update(STUDIES).where(STUDIES.c.id == self.study_id).values(state=state, updated_at=now))

    async def flushed(self) -> None:
        """Once everything asked so far is written (before the server stops)."""
        await self._commits.flushed()

    def close(self) -> None:
        self._thread.shutdown(wait=True)
