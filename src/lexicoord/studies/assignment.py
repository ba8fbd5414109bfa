"""Which condition a study's next group plays: balanced randomisation in blocks.

The groups are dealt conditions from a sequence of blocks. Each block holds every condition ``weight`` times, in
an order drawn from the study's seed and the block's number, so after each whole block the counts are exactly in
proportion to the weights, and within one they are never further from it than one block: with equal weights, any
two conditions' counts differ by one at most. The sequence depends on the seed alone, and the study keeps how far
it has dealt (``StudyState.assigned``), so a restart deals on where it stopped, and two studies with the same seed
and conditions deal the same sequence (a replication can say so).

A condition the experimenter closed is skipped where it comes up; the others keep their order and balance among
themselves.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Collection, Sequence


def block(conditions: Sequence[tuple[str, int]], seed: int, number: int) -> list[str]:
    """Block ``number`` (from 0): every condition ``weight`` times, shuffled by the seed and the block's number."""
    names = [name for name, weight in conditions for _ in range(weight)]
    digest = hashlib.sha256(f"lexicoord-conditions:{seed}:{number}".encode()).digest()
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(names)
    return names


def deal(conditions: Sequence[tuple[str, int]], seed: int, dealt: int,
         closed: Collection[str] = ()) -> tuple[str, int] | None:
    """The next open condition at or after position ``dealt`` of the sequence, and the position after it; None
    when every condition is closed."""
    size = sum(weight for _, weight in conditions)
    if size == 0 or all(name in closed for name, _ in conditions):
        return None
    position = dealt
    while True:
        name = block(conditions, seed, position // size)[position % size]
        position += 1
        if name not in closed:
            return name, position
