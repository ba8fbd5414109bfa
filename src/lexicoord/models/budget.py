"""A rate budget per model: the requests and tokens a minute a provider allows, spent by every call.

Providers limit an account, not a process: sixteen processes of one run, each polite on its own, together send
sixteen times what the account may. So the budget is a token bucket that every call of a model draws from
before it is sent. One process alone uses :class:`LocalBudget`; a run's processes share one bucket kept in the
store (:mod:`lexicoord.runs.rate_budget`), drawn from with the same rule.

The rule, the same in both:

- Each limit fills its bucket at ``limit / 60`` a second, up to a burst of :data:`BURST_SECONDS` of that rate
  (at least one request), and a bucket starts full. Ten seconds rather than a whole minute: providers measure
  their limits over windows shorter than the minute they quote, and a minute's worth sent at once is refused.
- A call (each attempt of it: a retry is a request too) takes one request; it waits while fewer than one is left.
- A call's tokens are known only when its reply comes, so they are spent then, and the bucket may go below
  zero; the next call waits until it is above zero again. A run therefore keeps to the token rate over any
  window longer than one reply, without guessing a reply's length before it is written.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

#: How many seconds of its rate a bucket holds at most: the largest burst a budget lets through at once.
BURST_SECONDS = 10.0


class RateLimit(BaseModel):
    """A provider's published limits for one model, as an experiment file's ``[rate_limits."MODEL"]`` gives them."""

    model_config = ConfigDict(extra="forbid")

    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)

    @property
    def limited(self) -> bool:
        return self.requests_per_minute is not None or self.tokens_per_minute is not None

    def requests_rate(self) -> float | None:
        """Requests a second, or ``None`` for no limit on requests."""
        return None if self.requests_per_minute is None else self.requests_per_minute / 60.0

    def tokens_rate(self) -> float | None:
        return None if self.tokens_per_minute is None else self.tokens_per_minute / 60.0

    def requests_capacity(self) -> float:
        rate = self.requests_rate()
        return 0.0 if rate is None else max(1.0, rate * BURST_SECONDS)

    def tokens_capacity(self) -> float:
        rate = self.tokens_rate()
        return 0.0 if rate is None else max(1.0, rate * BURST_SECONDS)


class Budget(Protocol):
    """What a :class:`~lexicoord.models.model.Model` draws on: one request before each attempt, the reply's
    tokens after it."""

    async def acquire(self) -> None:
        """Return when a request may be sent now (one request taken)."""

    async def spend(self, tokens: int) -> None:
        """Count a reply's tokens against the budget."""


@dataclass
class Levels:
    """What is left in a model's two buckets, and when that was read (seconds, one clock)."""

    requests: float
    tokens: float
    at: float


def refill(levels: Levels, limit: RateLimit, now: float) -> Levels:
    """The buckets at ``now``: each filled at its rate since ``levels.at``, up to its burst."""
    elapsed = max(0.0, now - levels.at)
    requests, tokens = levels.requests, levels.tokens
    if (rate := limit.requests_rate()) is not None:
        requests = min(limit.requests_capacity(), requests + rate * elapsed)
    if (rate := limit.tokens_rate()) is not None:
        tokens = min(limit.tokens_capacity(), tokens + rate * elapsed)
    return Levels(requests, tokens, max(now, levels.at))


def wait_for(levels: Levels, limit: RateLimit) -> float:
    """Seconds until a request may be taken from ``levels`` (already refilled): 0 when it may be now."""
    wait = 0.0
    if (rate := limit.requests_rate()) is not None and levels.requests < 1.0:
        wait = max(wait, (1.0 - levels.requests) / rate)
    if (rate := limit.tokens_rate()) is not None and levels.tokens <= 0.0:
        wait = max(wait, (-levels.tokens) / rate + 1e-3)
    return wait


class LocalBudget:
    """One process's bucket for one model (a run's processes share one in the store instead)."""

    def __init__(self, limit: RateLimit) -> None:
        self.limit = limit
        self.levels = Levels(limit.requests_capacity(), limit.tokens_capacity(), time.monotonic())
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:  # callers queue in order instead of all waking to the same free request
            while True:
                self.levels = refill(self.levels, self.limit, time.monotonic())
                wait = wait_for(self.levels, self.limit)
                if wait <= 0:
                    self.levels.requests -= 1.0
                    return
                await asyncio.sleep(wait)

    async def spend(self, tokens: int) -> None:
        self.levels.tokens -= max(0, tokens)
