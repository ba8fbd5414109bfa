"""Dealing vocabularies into N generated lines, so that coverage holds by construction.

Each vocabulary is dealt as a sequence of N items made of shuffled copies of it,
so its first copy alone holds every item once N reaches its size. Lines combine
the i-th item of every sequence; some combinations break a constraint (a
reference of the moved colour, "into" a block) and no line may repeat another.
Those are repaired by local search with two moves that never lose an item: swap
two positions of one sequence (its items stay the same), or replace an item by
another when the replaced one occurs elsewhere or the new one does not occur yet
(the number of distinct items never drops). So whatever the repair does, a
vocabulary of size k is fully used by every N >= k, for every seed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

Assignment = dict[str, str]
#: The lines a combination makes (an ambiguous instruction and its twin), or ``None`` when it breaks a constraint.
LineMaker = Callable[[Assignment], tuple[str, ...] | None]


def dealt(items: Sequence[str], n: int, rng: random.Random) -> list[str]:
    """N items of shuffled copies of ``items``: the first min(N, size) are all distinct."""
    out: list[str] = []
    while len(out) < n:
        out.extend(rng.sample(list(items), len(items)))
    return out[:n]


class Deal:
    """N combinations of the vocabularies whose lines are valid and pairwise distinct (and not in ``taken``)."""

    def __init__(self, vocabularies: Mapping[str, Sequence[str]], n: int, rng: random.Random,
                 make: LineMaker, taken: set[str]) -> None:
        self.vocab = {k: tuple(v) for k, v in vocabularies.items()}
        self.n, self.rng, self.make, self.taken = n, rng, make, taken
        self.seqs = {k: dealt(v, n, rng) for k, v in self.vocab.items()}
        self.uses = {k: Counter(s) for k, s in self.seqs.items()}
        self.lines: list[tuple[str, ...] | None] = [None] * n
        self.counts: Counter[str] = Counter()
        self.cost = 0
        for i in range(n):
            self._add(i)

    def at(self, i: int) -> Assignment:
        return {k: s[i] for k, s in self.seqs.items()}

    def _add(self, i: int) -> None:
        lines = self.make(self.at(i))
        self.lines[i] = lines
        if lines is None:
            self.cost += 1
            return
        for line in lines:
            self.cost += (self.counts[line] > 0) + (line in self.taken)
            self.counts[line] += 1

    def _remove(self, i: int) -> None:
        lines = self.lines[i]
        if lines is None:
            self.cost -= 1
            return
        for line in lines:
            self.counts[line] -= 1
            self.cost -= (self.counts[line] > 0) + (line in self.taken)

    def _bad(self, i: int) -> bool:
        lines = self.lines[i]
        return lines is None or any(self.counts[x] > 1 or x in self.taken for x in lines)

    def _move(self, i: int) -> bool:
        """Try one random move at position ``i``; keep it unless it makes things worse."""
        name = self.rng.choice(sorted(self.vocab))
        seq, uses = self.seqs[name], self.uses[name]
        j = self.rng.randrange(self.n)
        old_cost, old = self.cost, (seq[i], seq[j])
        swap = self.rng.random() < 0.5 or len(self.vocab[name]) == 1
        touched = [i, j] if swap else [i]
        if swap:
            if i == j:
                return False
            for p in touched:
                self._remove(p)
            seq[i], seq[j] = seq[j], seq[i]
        else:
            new = self.rng.choice(self.vocab[name])
            if new == seq[i] or not (uses[seq[i]] > 1 or uses[new] == 0):
                return False
            self._remove(i)
            uses[seq[i]] -= 1
            uses[new] += 1
            seq[i] = new
        for p in touched:
            self._add(p)
        if self.cost <= old_cost:
            return True
        for p in touched:
            self._remove(p)
        if swap:
            seq[i], seq[j] = old
        else:
            uses[seq[i]] -= 1
            uses[old[0]] += 1
            seq[i] = old[0]
        for p in touched:
            self._add(p)
        return False

    def solve(self, budget: int) -> list[Assignment] | None:
        """The repaired combinations, or ``None`` when ``budget`` moves did not repair them all."""
        moves = 0
        while self.cost > 0 and moves < budget:
            bad = [i for i in range(self.n) if self._bad(i)]
            self.rng.shuffle(bad)
            for i in bad:
                if self.cost == 0 or moves >= budget:
                    break
                if self._bad(i):
                    self._move(i)
                    moves += 1
        return [self.at(i) for i in range(self.n)] if self.cost == 0 else None
