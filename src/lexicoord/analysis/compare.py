"""Two runs of one protocol on shared items: paired differences, their tests, the items they disagree on, cost.

Each protocol says what an episode's outcome is (``ProtocolEntry.outcomes``: the item, the cell it belongs to
such as the variant and task, whether its answer was right, its rounds and tokens). Episodes pair when both
runs have the same item in the same cell; only pairs are compared, so a difference is never one of item mix.

- Accuracy: exact McNemar on the pairs where both runs have a right or wrong answer (an invalid answer is
  wrong and counted); its p-value is the two-sided binomial test of the discordant pairs at one half. The
  difference in percentage points has a paired bootstrap 95% interval, as rounds and tokens do.
- Rounds and tokens: the mean paired difference (B - A) with a paired bootstrap 95% interval (2,000
  resamples, seeded, so a report is the same every time), and the Wilcoxon signed-rank test (zero
  differences dropped, as Wilcoxon's own procedure does).

Two conditions of one study are another design: different groups played them (between subjects), so nothing
pairs. :func:`compare_independent` compares every game of A with every game of B, per cell (a cell's column
whose values the two sides never share is what the conditions change, and is not matched on): accuracy by
Fisher's exact test (two-sided) with the difference's 95% interval from a bootstrap of each side on its own;
rounds and tokens by the Mann-Whitney U test (two-sided) with the same kind of interval for the difference of
means. The unit is the game; games a group played one after another are not independent of each other, which
the report says when any group played more than one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from lexicoord.analysis.intervals import exact_mcnemar
from lexicoord.core.events import Event
from lexicoord.errors import LexicoordError
from lexicoord.runs.records import EpisodeRecord

#: Resamples of the paired bootstrap, and its seed.
BOOTSTRAP = 2000
BOOTSTRAP_SEED = 0


class Outcome(BaseModel):
    """One finished episode as a comparison reads it."""

    item: str
    #: The columns the episode belongs to (variant and task, condition ...): episodes pair within a cell.
    cell: dict[str, str] = Field(default_factory=dict)
    #: Right or wrong (an invalid answer is wrong); ``None`` where the item has no right answer.
    correct: bool | None = None
    rounds: float | None = None
    tokens: float | None = None


OutcomeReader = Callable[[Iterable[tuple[EpisodeRecord, list[Event]]]], Iterable[Outcome]]


class Cost(BaseModel):
    episodes: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Row(BaseModel):
    """One measure over one cell's pairs."""

    measure: str
    cell: str
    pairs: int
    a: float | None
    b: float | None
    #: B - A (accuracy in percentage points), with its 95% interval where there is one.
    difference: float | None
    low: float | None = None
    high: float | None = None
    test: str
    p: float | None
    #: McNemar's discordant pairs: right in A only, right in B only.
    a_only: int | None = None
    b_only: int | None = None
    #: Games on each side (independent design; ``pairs`` is then their sum).
    n_a: int | None = None
    n_b: int | None = None


class Disagreement(BaseModel):
    item: str
    cell: str
    a: bool
    b: bool


class Comparison(BaseModel):
    a: str
    b: str
    protocol: str
    rows: list[Row]
    disagreements: list[Disagreement]
    cost: dict[str, Cost]
    #: Episodes of each run with no partner in the other (different items or cells), left out of every row.
    unpaired: dict[str, int]
    #: ``paired`` (two runs on shared items) or ``independent`` (two conditions of a study: other groups).
    design: str = "paired"


def _cell(cell: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(cell.items())) or "all"


def mcnemar(pairs: Sequence[tuple[bool, bool]]) -> tuple[int, int, float]:
    """Discordant pairs (right in A only, right in B only) and the exact two-sided p-value."""
    a_only = sum(1 for a, b in pairs if a and not b)
    b_only = sum(1 for a, b in pairs if b and not a)
    return a_only, b_only, exact_mcnemar(a_only, b_only)


def paired_numbers(pairs: Sequence[tuple[float, float]]) -> tuple[float, float, float, float | None]:
    """Mean of B - A, its paired bootstrap 95% interval, and the Wilcoxon signed-rank p-value (``None`` when
    every difference is zero)."""
    import numpy as np
    from scipy.stats import wilcoxon

    diffs = np.array([b - a for a, b in pairs], dtype=float)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = diffs[rng.integers(0, len(diffs), size=(BOOTSTRAP, len(diffs)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    p = None if not np.any(diffs) else float(wilcoxon(diffs).pvalue)
    return float(diffs.mean()), float(low), float(high), p


@dataclass
class _Pair:
    a: Outcome
    b: Outcome


def compare(a_name: str, b_name: str, protocol: str, a: Iterable[Outcome], b: Iterable[Outcome],
            cost: dict[str, Cost]) -> Comparison:
    """Every measure per cell and over all cells, on the pairs the two runs share."""
    left = {(o.item, _cell(o.cell)): o for o in a}
    right = {(o.item, _cell(o.cell)): o for o in b}
    shared = sorted(set(left) & set(right))
    if not shared:
        raise LexicoordError(f"Runs '{a_name}' and '{b_name}' share no item in the same cell (variant, task or "
                             "condition), so nothing pairs; compare runs made on the same items.")
    by_cell: dict[str, list[_Pair]] = defaultdict(list)
    for key in shared:
        by_cell[key[1]].append(_Pair(left[key], right[key]))
    groups = list(by_cell.items())
    if len(groups) > 1:
        groups.append(("all cells", [p for ps in by_cell.values() for p in ps]))
    rows: list[Row] = []
    for cell, pairs in groups:
        judged = [(p.a.correct, p.b.correct) for p in pairs if p.a.correct is not None and p.b.correct is not None]
        if judged:
            a_only, b_only, p = mcnemar([(bool(x), bool(y)) for x, y in judged])
            acc_a = 100 * sum(1 for x, _ in judged if x) / len(judged)
            acc_b = 100 * sum(1 for _, y in judged if y) / len(judged)
            _, low, high, _ = paired_numbers([(100.0 * bool(x), 100.0 * bool(y)) for x, y in judged])
            rows.append(Row(measure="accuracy (%)", cell=cell, pairs=len(judged), a=acc_a, b=acc_b,
                            difference=acc_b - acc_a, low=low, high=high, test="exact McNemar; paired bootstrap CI",
                            p=p, a_only=a_only, b_only=b_only))
        for measure in ("rounds", "tokens"):
            values = [(getattr(p.a, measure), getattr(p.b, measure)) for p in pairs]
            both = [(float(x), float(y)) for x, y in values if x is not None and y is not None]
            if not both:
                continue
            mean, low, high, p_value = paired_numbers(both)
            rows.append(Row(measure=measure, cell=cell, pairs=len(both), a=sum(x for x, _ in both) / len(both),
                            b=sum(y for _, y in both) / len(both), difference=mean, low=low, high=high,
                            test="Wilcoxon signed-rank; paired bootstrap CI", p=p_value))
    disagreements = [Disagreement(item=item, cell=cell, a=bool(left[(item, cell)].correct),
                                  b=bool(right[(item, cell)].correct))
                     for item, cell in shared
                     if left[(item, cell)].correct is not None and right[(item, cell)].correct is not None
                     and left[(item, cell)].correct != right[(item, cell)].correct]
    return Comparison(a=a_name, b=b_name, protocol=protocol, rows=rows, disagreements=disagreements, cost=cost,
                      unpaired={a_name: len(left) - len(shared), b_name: len(right) - len(shared)})


def independent_numbers(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Mean of B minus mean of A, and its 95% interval from a bootstrap of each side on its own (seeded)."""
    import numpy as np

    xa, xb = np.array(a, dtype=float), np.array(b, dtype=float)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    ma = xa[rng.integers(0, len(xa), size=(BOOTSTRAP, len(xa)))].mean(axis=1)
    mb = xb[rng.integers(0, len(xb), size=(BOOTSTRAP, len(xb)))].mean(axis=1)
    low, high = np.percentile(mb - ma, [2.5, 97.5])
    return float(xb.mean() - xa.mean()), float(low), float(high)


def compare_independent(a_name: str, b_name: str, protocol: str, a: Iterable[Outcome], b: Iterable[Outcome],
                        cost: dict[str, Cost]) -> Comparison:
    """Every measure per cell and over all cells, games of A against games of B (no pairing). A cell's column in
    which the two sides share no value (what the conditions change, such as the debate's models) is left out of
    the match: the games are compared across it."""
    from scipy.stats import fisher_exact, mannwhitneyu

    a, b = list(a), list(b)
    # What a condition changes is often in the cell itself (the debate's configuration names its models, COGENT's
    # its variant): a column whose values the two sides never share is the treatment, not a cell to match on.
    columns = {k for o in (*a, *b) for k in o.cell}
    treatment = {k for k in columns
                 if not {o.cell.get(k) for o in a} & {o.cell.get(k) for o in b}}
    left: dict[str, list[Outcome]] = defaultdict(list)
    right: dict[str, list[Outcome]] = defaultdict(list)
    for o in a:
        left[_cell({k: v for k, v in o.cell.items() if k not in treatment})].append(o)
    for o in b:
        right[_cell({k: v for k, v in o.cell.items() if k not in treatment})].append(o)
    cells = sorted(set(left) & set(right))
    if not cells:
        raise LexicoordError(f"'{a_name}' and '{b_name}' have no game in the same cell (variant, task), so nothing "
                             "compares.")
    groups = [(c, left[c], right[c]) for c in cells]
    if len(groups) > 1:
        groups.append(("all cells", [o for c in cells for o in left[c]], [o for c in cells for o in right[c]]))
    rows: list[Row] = []
    for cell, xs, ys in groups:
        ja = [bool(o.correct) for o in xs if o.correct is not None]
        jb = [bool(o.correct) for o in ys if o.correct is not None]
        if ja and jb:
            table = [[sum(ja), len(ja) - sum(ja)], [sum(jb), len(jb) - sum(jb)]]
            p = float(fisher_exact(table).pvalue)
            diff, low, high = independent_numbers([100.0 * x for x in ja], [100.0 * y for y in jb])
            rows.append(Row(measure="accuracy (%)", cell=cell, pairs=len(ja) + len(jb), n_a=len(ja), n_b=len(jb),
                            a=100 * sum(ja) / len(ja), b=100 * sum(jb) / len(jb), difference=diff, low=low,
                            high=high, test="Fisher's exact (two-sided); bootstrap CI", p=p))
        for measure in ("rounds", "tokens"):
            va = [float(v) for o in xs if (v := getattr(o, measure)) is not None]
            vb = [float(v) for o in ys if (v := getattr(o, measure)) is not None]
            if not va or not vb:
                continue
            diff, low, high = independent_numbers(va, vb)
            same = len(set(va) | set(vb)) == 1
            p_value = None if same else float(mannwhitneyu(vb, va, alternative="two-sided").pvalue)
            rows.append(Row(measure=measure, cell=cell, pairs=len(va) + len(vb), n_a=len(va), n_b=len(vb),
                            a=sum(va) / len(va), b=sum(vb) / len(vb), difference=diff, low=low, high=high,
                            test="Mann-Whitney U (two-sided); bootstrap CI", p=p_value))
    unmatched = {a_name: sum(len(v) for c, v in left.items() if c not in cells),
                 b_name: sum(len(v) for c, v in right.items() if c not in cells)}
    return Comparison(a=a_name, b=b_name, protocol=protocol, rows=rows, disagreements=[], cost=cost,
                      unpaired=unmatched, design="independent")
