"""The gates' rows in the store: made once per check, updated as its verdict changes, read by any process.

Each write is made in the caller's session, so a gate answering many callers at once shares its transactions
among them (:class:`~lexicoord.runs.shared_transactions.SharedTransactions`)."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy import update as sa_update
from sqlalchemy.orm import Session

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
    owner: str | None = None
    lease_until: float | None = None
    request: dict[str, Any]
    verdict: dict[str, Any]


def _state(row: GateRow) -> GateState:
    return GateState(id=row.id, run_id=row.run_id, key=row.key, episode_key=row.episode_key, status=row.status,
                     token=row.token, created_at=row.created_at, updated_at=row.updated_at,
                     expires_at=row.expires_at, owner=row.owner, lease_until=row.lease_until,
                     request=dict(row.request), verdict=dict(row.verdict))


def create(s: Session, state: GateState) -> GateState:
    """Make the row; ``IntegrityError`` when the run already holds a check under the same key (another call won)."""
    s.add(GateRow(**state.model_dump()))
    s.flush()
    return state


def get(store: Store, gate_id: str) -> GateState | None:
    with store.session() as s:
        row = s.get(GateRow, gate_id)
        return _state(row) if row is not None else None


def by_key(store: Store, run_id: str, key: str) -> GateState | None:
    with store.session() as s:
        row = s.scalars(select(GateRow).where(GateRow.run_id == run_id, GateRow.key == key)).first()
        return _state(row) if row is not None else None


FINAL = ("clear", "refuse", "error")


def update(s: Session, gate_id: str, status: str, verdict: dict[str, Any], expires_at: float | None,
           owner: str | None = None) -> bool:
    """Write the verdict as it stands; a check already final is never written over (a late write of an earlier
    state loses), and only its ``owner`` writes while it plays. A final write gives the claim up."""
    row = s.get(GateRow, gate_id, with_for_update=True)
    if row is None or row.status in FINAL or (owner is not None and row.owner not in (None, owner)):
        return False
    row.status, row.verdict, row.expires_at, row.updated_at = status, verdict, expires_at, time.time()
    if status in FINAL:
        row.owner = row.lease_until = None
    return True


def claim(s: Session, gate_id: str, owner: str, lease: float) -> bool:
    """Take the check to play it: it is unclaimed, ours, or its owner's lease has run out."""
    now = time.time()
    row = s.get(GateRow, gate_id, with_for_update=True)
    if row is None or row.status in FINAL:
        return False
    if row.owner not in (None, owner) and (row.lease_until or 0) > now:
        return False
    row.owner, row.lease_until = owner, now + lease
    return True


def renew(s: Session, gate_ids: list[str], owner: str, lease: float) -> None:
    """Hold the claims on the checks this process plays."""
    if gate_ids:
        s.execute(sa_update(GateRow).where(GateRow.id.in_(gate_ids), GateRow.owner == owner)
                  .values(lease_until=time.time() + lease))


def release(s: Session, gate_ids: list[str], owner: str) -> None:
    """Give the claims up (a process that stops), so another may go on with the checks at once."""
    if gate_ids:
        s.execute(sa_update(GateRow).where(GateRow.id.in_(gate_ids), GateRow.owner == owner)
                  .values(owner=None, lease_until=None))


def unsettled(store: Store, run_id: str) -> list[GateState]:
    """The run's checks still deciding or asking (a restarted server resumes them)."""
    with store.session() as s:
        rows = s.scalars(select(GateRow).where(GateRow.run_id == run_id, GateRow.status.in_(("pending", "ask"))))
        return [_state(r) for r in rows]
