"""A model's rate budget shared by every process of a run: one token bucket per model in the store.

The rule is :mod:`lexicoord.models.budget`'s (a burst of ten seconds' rate, one request taken per attempt, tokens
spent when the reply comes); here the bucket is a row that every process of the run draws on, so sixteen array
tasks together keep to the provider's limit rather than each to it. Taking a request is one statement that
refills the bucket by the time passed, by the database's clock (:mod:`lexicoord.runs.clock`), and takes one
request only if one is there: atomic on PostgreSQL (the row is locked while it is updated) and on SQLite (one
writer at a time), so two processes never take the same request. A process that finds the bucket empty reads
how long until it refills and sleeps that long, never busy-polling the database.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from sqlalchemy import ColumnElement, case, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import InstrumentedAttribute

from lexicoord.models.budget import Levels, RateLimit, wait_for
from lexicoord.runs.clock import db_now
from lexicoord.runs.schema import RateBucketRow
from lexicoord.runs.store import Store

#: The longest a process sleeps before asking the bucket again, whatever it said (a changed limit, a clock step).
MAX_NAP = 5.0


def _refilled(level: InstrumentedAttribute[float], rate: InstrumentedAttribute[float | None],
              cap: InstrumentedAttribute[float], now: ColumnElement[float]) -> ColumnElement[float]:
    """A bucket's level now: filled at its rate since it was read, up to its cap (no rate: left as it is)."""
    filled = level + rate * (now - RateBucketRow.at)
    return case((rate.is_(None), level), (filled > cap, cap), else_=filled)


@dataclass(frozen=True)
class Spent:
    """What every process of a run drew on one model's budget so far."""

    model: str
    requests: int
    tokens: int


class StoreBudget:
    """One model's budget in one run (a :class:`~lexicoord.models.budget.Budget`)."""

    def __init__(self, store: Store, run_id: str, model: str, limit: RateLimit) -> None:
        self.store, self.run_id, self.model, self.limit = store, run_id, model, limit
        self._opened = False

    def _where(self) -> ColumnElement[bool]:
        return (RateBucketRow.run_id == self.run_id) & (RateBucketRow.model == self.model)

    def open(self) -> None:
        """Make the bucket, full, if the run has none for the model yet; otherwise keep its levels and take this
        process's limits (the file may have changed them on a resume)."""
        limit = self.limit
        with self.store.writing() as s:
            now = s.scalar(select(db_now(self.store.engine.dialect.name)))
            row = {"run_id": self.run_id, "model": self.model, "requests_rate": limit.requests_rate(),
                   "requests_cap": limit.requests_capacity(), "requests": limit.requests_capacity(),
                   "tokens_rate": limit.tokens_rate(), "tokens_cap": limit.tokens_capacity(),
                   "tokens": limit.tokens_capacity(), "at": now, "spent_requests": 0, "spent_tokens": 0}
            dialect = postgresql if self.store.engine.dialect.name == "postgresql" else sqlite
            s.execute(dialect.insert(RateBucketRow).values(row).on_conflict_do_nothing())
            s.execute(update(RateBucketRow).where(self._where()).values(
                requests_rate=limit.requests_rate(), requests_cap=limit.requests_capacity(),
                tokens_rate=limit.tokens_rate(), tokens_cap=limit.tokens_capacity()))
        self._opened = True

    def try_take(self) -> float:
        """Take one request if the bucket allows it now: 0 when taken, else the seconds until it may."""
        if not self._opened:
            self.open()
        now = db_now(self.store.engine.dialect.name)
        requests = _refilled(RateBucketRow.requests, RateBucketRow.requests_rate, RateBucketRow.requests_cap, now)
        tokens = _refilled(RateBucketRow.tokens, RateBucketRow.tokens_rate, RateBucketRow.tokens_cap, now)
        may = (RateBucketRow.requests_rate.is_(None) | (requests >= 1.0)) & \
            (RateBucketRow.tokens_rate.is_(None) | (tokens > 0.0))
        with self.store.writing() as s:
            taken = s.execute(
                update(RateBucketRow).where(self._where(), may)
                .values(requests=requests - case((RateBucketRow.requests_rate.is_(None), literal(0.0)), else_=1.0),
                        tokens=tokens, at=now, spent_requests=RateBucketRow.spent_requests + 1)
                .returning(RateBucketRow.model)
            ).first()
            if taken is not None:
                return 0.0
            level = s.execute(select(requests, tokens).where(self._where())).one()
        wait = wait_for(Levels(float(level[0]), float(level[1]), 0.0), self.limit)
        return wait if wait > 0 else 1e-3  # refilled between the two statements: ask again at once

    async def acquire(self) -> None:
        while (wait := await asyncio.to_thread(self.try_take)) > 0:
            # Jittered, so that processes that found the bucket empty together do not all ask again together.
            await asyncio.sleep(min(MAX_NAP, wait) * random.uniform(1.0, 1.25))

    async def spend(self, tokens: int) -> None:
        if tokens <= 0:
            return
        await asyncio.to_thread(self._spend, tokens)

    def _spend(self, tokens: int) -> None:
        with self.store.writing() as s:
            s.execute(update(RateBucketRow).where(self._where()).values(
                tokens=RateBucketRow.tokens - case((RateBucketRow.tokens_rate.is_(None), literal(0.0)),
                                                   else_=float(tokens)),
                spent_tokens=RateBucketRow.spent_tokens + tokens))


def spent(store: Store, run_id: str) -> list[Spent]:
    """Every process's draws on each model budget of the run so far (none: the run has no budget)."""
    with store.session() as s:
        rows = s.execute(select(RateBucketRow.model, RateBucketRow.spent_requests, RateBucketRow.spent_tokens)
                         .where(RateBucketRow.run_id == run_id).order_by(RateBucketRow.model)).all()
    return [Spent(model, int(r), int(t)) for model, r, t in rows]


