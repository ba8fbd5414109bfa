"""A model's rate budget: the bucket's rule, a process's own bucket, and a Model drawing on it per attempt."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import ValidationError

from lexicoord.models import Model
from lexicoord.models.budget import BURST_SECONDS, Levels, LocalBudget, RateLimit, refill, wait_for
from lexicoord.models.provider import Provider, TransientError
from lexicoord.models.types import ProviderResponse, Usage

RPM60 = RateLimit(requests_per_minute=60)  # one a second, a burst of ten
TPM600 = RateLimit(tokens_per_minute=600)  # ten tokens a second, a burst of a hundred


@pytest.mark.parametrize(("limit", "levels", "now", "expected"), [
    (RPM60, Levels(0.0, 0.0, 100.0), 100.0, Levels(0.0, 0.0, 100.0)),      # no time passed, nothing added
    (RPM60, Levels(0.0, 0.0, 100.0), 103.5, Levels(3.5, 0.0, 103.5)),      # one a second
    (RPM60, Levels(9.0, 0.0, 100.0), 160.0, Levels(10.0, 0.0, 160.0)),     # never past the burst
    (RPM60, Levels(2.0, 0.0, 100.0), 90.0, Levels(2.0, 0.0, 100.0)),       # a clock that steps back adds nothing
    (TPM600, Levels(0.0, -50.0, 0.0), 2.0, Levels(0.0, -30.0, 2.0)),       # a debt is paid back at the rate
    (TPM600, Levels(0.0, 95.0, 0.0), 60.0, Levels(0.0, 100.0, 60.0)),
])
def test_refill_fills_each_bucket_at_its_rate_up_to_its_burst(limit, levels, now, expected) -> None:
    assert refill(levels, limit, now) == expected


@pytest.mark.parametrize(("limit", "levels", "wait"), [
    (RPM60, Levels(1.0, 0.0, 0.0), 0.0),
    (RPM60, Levels(0.25, 0.0, 0.0), 0.75),
    (TPM600, Levels(0.0, 0.5, 0.0), 0.0),         # any tokens left: the call may go (its own tokens are spent after)
    (TPM600, Levels(0.0, -40.0, 0.0), 4.001),     # in debt: wait until it is paid back
    (RateLimit(requests_per_minute=60, tokens_per_minute=600), Levels(0.5, -20.0, 0.0), 2.001),  # the longer wait
    (RateLimit(), Levels(-5.0, -5.0, 0.0), 0.0),  # no limit: never waits
])
def test_wait_is_until_both_buckets_allow_a_request(limit, levels, wait) -> None:
    assert wait_for(levels, limit) == pytest.approx(wait)


@pytest.mark.parametrize("table", [
    {"requests_per_minute": 0}, {"tokens_per_minute": -5}, {"request_per_minute": 500}, {"rpm": 500},
])
def test_a_limit_that_is_not_positive_or_misspelled_is_refused(table) -> None:
    with pytest.raises(ValidationError):
        RateLimit.model_validate(table)


def test_a_burst_is_ten_seconds_of_the_rate_and_at_least_one_request() -> None:
    assert RateLimit(requests_per_minute=600).requests_capacity() == 10 * BURST_SECONDS
    assert RateLimit(requests_per_minute=1).requests_capacity() == 1.0
    assert RateLimit(tokens_per_minute=60_000).tokens_capacity() == 1000 * BURST_SECONDS


async def test_a_local_budget_lets_the_burst_through_then_keeps_to_the_rate() -> None:
    budget = LocalBudget(RateLimit(requests_per_minute=120))  # two a second, a burst of twenty
    started = time.monotonic()
    stamps = []
    for _ in range(24):
        await budget.acquire()
        stamps.append(time.monotonic() - started)
    assert stamps[19] < 0.5, "the burst goes at once"
    assert 1.8 < stamps[-1] < 4.0, stamps  # four more at two a second
    for i, t in enumerate(stamps):  # never more than the burst plus what the rate added by then
        assert i + 1 <= 20 + 2 * t + 1e-6


async def test_tokens_spent_put_the_next_call_in_debt_until_the_rate_pays_it_back() -> None:
    budget = LocalBudget(RateLimit(tokens_per_minute=6000))  # a hundred a second, a burst of a thousand
    await budget.acquire()
    await budget.spend(1150)  # a reply longer than what was left: 150 in debt
    started = time.monotonic()
    await budget.acquire()
    assert 1.3 < time.monotonic() - started < 3.0


class Counting:
    """A budget that counts what a Model draws (the rule itself is tested above)."""

    def __init__(self) -> None:
        self.requests = 0
        self.tokens: list[int] = []

    async def acquire(self) -> None:
        self.requests += 1

    async def spend(self, tokens: int) -> None:
        self.tokens.append(tokens)


async def test_every_attempt_draws_a_request_and_a_reply_spends_its_tokens() -> None:
    class Flaky(Provider):
        calls = 0

        async def generate(self, messages, config):
            self.calls += 1
            if self.calls == 1:
                raise TransientError("429 slow down", kind="http", retry_after=0.0)
            return ProviderResponse(text="ok", usage=Usage(prompt_tokens=12, completion_tokens=3))

    budget = Counting()
    model = Model(Flaky("flaky", "x"), budget=budget, backoff_initial=0.01)
    out = await model.generate("hi")
    assert out.text == "ok"
    assert budget.requests == 2, "the retry is a request the provider counts too"
    assert budget.tokens == [15]


async def test_waiting_on_the_budget_is_not_counted_against_the_calls_timeout() -> None:
    class Quick(Provider):
        async def generate(self, messages, config):
            await asyncio.sleep(0.05)
            return ProviderResponse(text="ok")

    model = Model(Quick("quick", "x"), budget=LocalBudget(RateLimit(requests_per_minute=60)), timeout=0.5)
    model.budget.levels.requests = 0.0  # type: ignore[union-attr]  # empty: the next request is a second away
    out = await model.generate("hi")
    assert out.text == "ok" and out.attempts == 1
