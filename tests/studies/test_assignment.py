"""Balanced randomisation of conditions: counts within one of each other, shares by weight, order from the seed."""

from __future__ import annotations

from collections import Counter

import pytest

from lexicoord.studies.assignment import block, deal

THREE = [("a", 1), ("b", 1), ("c", 1)]


def dealt(conditions: list[tuple[str, int]], seed: int, n: int, closed: tuple[str, ...] = ()) -> list[str]:
    out, position = [], 0
    for _ in range(n):
        found = deal(conditions, seed, position, closed)
        assert found is not None
        name, position = found
        out.append(name)
    return out


@pytest.mark.parametrize("seed", [0, 1, 7, 2026, 10**9])
def test_equal_weights_keep_every_count_within_one_of_the_others_at_every_step(seed: int) -> None:
    names = dealt(THREE, seed, 300)
    for n in range(1, len(names) + 1):
        counts = Counter(names[:n])
        assert max(counts.values()) - min(counts.get(c, 0) for c, _ in THREE) <= 1, (seed, n, counts)


def test_weights_give_shares_in_proportion_after_each_whole_block() -> None:
    weighted = [("lexicon", 2), ("plain", 1)]
    names = dealt(weighted, 5, 30)
    for blocks in range(1, 11):
        counts = Counter(names[:3 * blocks])
        assert counts == {"lexicon": 2 * blocks, "plain": blocks}


def test_the_order_is_random_by_the_seed_and_the_same_for_the_same_seed() -> None:
    assert dealt(THREE, 3, 60) == dealt(THREE, 3, 60), "a restart (or a replication) deals the same sequence"
    orders = {tuple(block(THREE, seed, 0)) for seed in range(40)}
    assert len(orders) == 6, "every order of three conditions comes up across seeds"
    assert len({tuple(block(THREE, 3, b)) for b in range(20)}) > 1, "each block is shuffled anew"


def test_a_closed_condition_is_skipped_and_the_others_stay_balanced() -> None:
    names = dealt(THREE, 11, 90, closed=("b",))
    counts = Counter(names)
    assert "b" not in counts and abs(counts["a"] - counts["c"]) <= 1
    assert deal(THREE, 11, 0, closed=("a", "b", "c")) is None
