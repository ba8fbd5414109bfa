"""Intervals for a mean: a seeded percentile bootstrap, so the same values always give the same interval.

Rates have Wilson's interval (:func:`lexicoord.analysis.paper.rate`); a mean of values that are not all 0 or 1
(tokens, seconds, AmbiK's partial success, a set's overlap) has this one. The method is named wherever it is
printed: "bootstrap 95% CI, 2,000 resamples, seed 0".
"""

from __future__ import annotations

from collections.abc import Sequence

RESAMPLES = 2000
SEED = 0
METHOD = f"percentile bootstrap, {RESAMPLES:,} resamples, seed {SEED}"


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
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)
