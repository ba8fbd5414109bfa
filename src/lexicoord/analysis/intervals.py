"""95% intervals for what reports print: Wilson's for a rate, a seeded percentile bootstrap for a mean or a total;
and the exact McNemar test that compares two conditions on the same items.

A rate (k of n) has Wilson's score interval, in closed form (a line of arithmetic needs no SciPy). A mean of
values that are not all 0 or 1 (tokens, a compression rate, rounds, seconds, AmbiK's partial success) has a
percentile bootstrap over the units it averages (items, episodes, games), seeded, so that the same values
always give the same interval; a total over games (terms coined in five games) has the same bootstrap, scaled
by the number of games. The method is named wherever it is printed (:data:`METHOD`).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb, sqrt

from pydantic import BaseModel

RESAMPLES = 2000
SEED = 0
#: How a mean's or a total's interval is made, as the reports print it.
METHOD = f"percentile bootstrap, {RESAMPLES:,} resamples, seed {SEED}"
#: Values resampled at once at most (about 8 MB of indices), however many values a mean has.
CELLS = 1_000_000
#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


class Interval(BaseModel):
    """A 95% interval, in the unit of the value it brackets."""

    low: float
    high: float


def wilson(successes: int, n: int) -> Interval | None:
    """The 95% Wilson score interval of ``successes`` of ``n`` (``None`` for no denominator): the centre
    (k + z²/2)/(n + z²), the half-width z·sqrt(k(n-k)/n + z²/4)/(n + z²)."""
    if n <= 0:
        return None
    z2 = Z95 * Z95
    centre = (successes + z2 / 2) / (n + z2)
    half = Z95 * sqrt(successes * (n - successes) / n + z2 / 4) / (n + z2)
    return Interval(low=max(0.0, centre - half), high=min(1.0, centre + half))


def mean_interval(values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """The 95% percentile-bootstrap interval of the mean of ``values``; ``None`` for no values, the value itself
    twice for one (nothing to resample)."""
    if not values:
        return None
    if len(values) == 1 or min(values) == max(values):
        return float(values[0]), float(values[0])
    import numpy as np

    rng = np.random.default_rng(seed)
    data = np.asarray(values, dtype=float)
    # Resampled a block of rows at a time, so that memory stays about CELLS values whatever the number of values
    # (a run of 40,000 games would otherwise draw 80 million indices at once); the draws are the same.
    rows = max(1, CELLS // len(data))
    means = np.concatenate([data[rng.integers(0, len(data), size=(min(rows, resamples - start), len(data)))].mean(axis=1)
                            for start in range(0, resamples, rows)])
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def mean_ci(values: Sequence[float]) -> Interval | None:
    """:func:`mean_interval` as an :class:`Interval`."""
    ci = mean_interval(values)
    return None if ci is None else Interval(low=ci[0], high=ci[1])


def total_ci(values: Sequence[float]) -> Interval | None:
    """The 95% interval of a total over units (each game's count), by resampling the units: the number of units
    times the mean's interval."""
    ci = mean_interval(values)
    return None if ci is None else Interval(low=len(values) * ci[0], high=len(values) * ci[1])


def exact_mcnemar(first_only: int, second_only: int) -> float:
    """The two-sided exact McNemar p-value of two paired conditions: the discordant items as a fair coin,
    2 * P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2), at most 1 (SciPy's ``binomtest(b, b + c).pvalue``, in
    closed form: a sum of binomial coefficients needs no SciPy)."""
    n = first_only + second_only
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(first_only, second_only) + 1))
    return min(1.0, 2 * tail / float(2**n))
