"""The intervals reports print: Wilson's in closed form (checked against SciPy's), and the seeded bootstrap of a
mean or a total, reproducible and bracketing the value."""

from __future__ import annotations

import random

import pytest
from scipy.stats import binomtest

from lexicoord.analysis.intervals import mean_ci, mean_interval, total_ci, wilson
from lexicoord.analysis.paper import mean, total


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 20), (20, 20), (8, 10), (1, 3), (59, 60), (13, 97), (500, 1000)])
def test_wilson_in_closed_form_is_scipys(k: int, n: int) -> None:
    ours = wilson(k, n)
    theirs = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours is not None
    assert ours.low == pytest.approx(theirs.low, abs=1e-12) and ours.high == pytest.approx(theirs.high, abs=1e-12)
    assert wilson(0, 0) is None


def test_a_means_interval_is_the_same_every_time_and_brackets_the_mean() -> None:
    rng = random.Random(3)
    values = [rng.gauss(400, 80) for _ in range(50)]
    first, again = mean_interval(values), mean_interval(list(values))
    assert first == again and first is not None
    assert first[0] < sum(values) / len(values) < first[1]
    shuffled = values[:]
    random.Random(1).shuffle(shuffled)
    low, high = mean_interval(shuffled) or (0.0, 0.0)
    assert low < sum(values) / len(values) < high and high - low == pytest.approx(first[1] - first[0], rel=0.2)
    assert mean_ci([]) is None and mean_ci([2.0]) is not None and mean_ci([2.0]).low == 2.0  # type: ignore[union-attr]


def test_a_total_over_games_is_the_number_of_games_times_the_mean() -> None:
    per_game = [6.0, 4.0, 9.0, 5.0, 8.0]
    m, t = mean_ci(per_game), total_ci(per_game)
    assert m is not None and t is not None
    assert t.low == pytest.approx(5 * m.low) and t.high == pytest.approx(5 * m.high)
    assert t.low < sum(per_game) < t.high


def test_measures_of_a_mean_and_a_total_carry_their_denominator_and_interval() -> None:
    tokens = mean("tokens", {"variant": "cogent"}, [100.0, 140.0, 90.0, 130.0], "local/x")
    assert tokens is not None and tokens.value == 115.0 and tokens.n == 4 and tokens.model == "local/x"
    assert tokens.low is not None and tokens.high is not None and tokens.low < 115.0 < tokens.high
    terms = total("accepted_terms", {}, [6.0, 4.0, 9.0, 5.0, 8.0])
    assert terms is not None and terms.value == 32.0 and terms.n == 5
    assert mean("tokens", {}, []) is None and total("accepted_terms", {}, []) is None


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 1), (1, 0), (3, 3), (5, 0), (0, 12), (7, 2), (2, 7), (10, 11),
                                      (40, 25), (1, 60)])
def test_exact_mcnemar_in_closed_form_is_scipys(b: int, c: int) -> None:
    from lexicoord.analysis.intervals import exact_mcnemar

    theirs = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert exact_mcnemar(b, c) == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    assert exact_mcnemar(b, c) == exact_mcnemar(c, b), "the test is symmetric in the two conditions"


def test_a_large_means_interval_is_drawn_in_blocks_with_the_same_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays bounded whatever the number of values (a block of rows at a time), and the interval is the one
    a single draw of every index gives."""
    from lexicoord.analysis import intervals

    rng = random.Random(7)
    values = [rng.random() for _ in range(5000)]
    whole = mean_interval(values)
    monkeypatch.setattr(intervals, "CELLS", 7_919)  # blocks of one row, then an uneven last block
    assert mean_interval(values) == whole
