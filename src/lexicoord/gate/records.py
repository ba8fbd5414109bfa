"""The gates' rows in the store: made once per check, updated as its verdict changes, read by any process."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from lexicoord.runs.schema import GateRow
from lexicoord.runs.store import Store


class GateState(BaseModel):
    """A row as the gate reads it."""

    id: str
    run_id: str
    key: str | None
    episode_key: str
    status: str
    token: str
    created_at: float
    updated_at: float
    expires_at: float | None
    request: dict[str, Any]
    verdict: dict[str, Any]


def _state(row: GateRow) -> GateState:
    return GateState(id=row.id, run_id=row.run_id, key=row.key, episode_key=row.episode_key, status=row.status,
                     token=row.token, created_at=row.created_at, updated_at=row.updated_at,
                     expires_at=row.expires_at, request=dict(row.request), verdict=dict(row.verdict))


def create(store: Store, state: GateState) -> GateState | None:
    """Make the row; ``None`` when the run already holds a check under the same key (another call won)."""
    try:
        with store.writing() as s:
            s.add(GateRow(**state.model_dump()))
    except IntegrityError:
        return None
    return state


def get(store: Store, gate_id: str) -> GateState | None:
    with store.session() as s:
        row = s.get(GateRow, gate_id)
        return _state(row) if row is not None else None


def by_key(store: Store, run_id: str, key: str) -> GateState | None:
    with store.session() as s:
        row = s.scalars(select(GateRow).where(GateRow.run_id == run_id, GateRow.key == key)).first()
        return _state(row) if row is not None else None


def update(store: Store, gate_id: str, status: str, verdict: dict[str, Any], expires_at: float | None) -> None:
    with store.writing() as s:
        row = s.get(GateRow, gate_id)
        if row is not None:
            row.status, row.verdict, row.expires_at, row.updated_at = status, verdict, expires_at, time.time()


def unsettled(store: Store, run_id: str) -> list[GateState]:
    """The run's checks still deciding or asking (a restarted server resumes them)."""
    with store.session() as s:
        rows = s.scalars(select(GateRow).where(GateRow.run_id == run_id, GateRow.status.in_(("pending", "ask"))))
        return [_state(r) for r in rows]
