"""The benchmarks' metrics over scored checks, each with its denominator and a 95% interval.

Definitions (rates in percent; the denominator is named in each):

- **success rate**: mean success over all checks (KnowNo: 0/1, Wilson interval; AmbiK: the share of intent
  elements named, a bootstrap interval of the mean). Refusals and errors count as failures.
- **help rate**: checks that asked the person / all checks (KnowNo's and AmbiK's help rate).
- **correct help rate**: checks that asked / ambiguous checks (AmbiK reports this on ambiguous tasks as its
  ambiguity detection; on unambiguous ones its "correct help" is not asking, i.e. 100 − false alarms).
- **false alarms**: checks that asked / unambiguous checks.
- **set-size correctness**: mean intersection-over-union of the conformal set and the benchmark's ambiguous set,
  over ambiguous checks that have both (AmbiK's SSC); **set size**: the conformal set's mean size over the
  checks that scored one (KnowNo's "Set Size").
- **question about the element**: first questions about the ambiguous element / ambiguous checks that asked, by
  the rule and, separately, by the judge model (its unreadable verdicts counted apart, never as yes).
- **errors**: checks that ended ``error`` / all checks; **model calls, tokens, seconds**: means per check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel

from lexicoord.analysis.intervals import mean_interval
from lexicoord.analysis.paper import Measure, rate
from lexicoord.gate.evaluation.scoring import Scored

ALL = "all"


def _mean(metric: str, cell: dict[str, str], values: Sequence[float], percent: bool = False) -> Measure | None:
    """A mean per check; in percent for a share, with Wilson's interval when every value is 0 or 1."""
    if not values:
        return None
    if percent and all(v in (0.0, 1.0) for v in values):
        return rate(metric, cell, int(sum(values)), len(values))
    scale = 100.0 if percent else 1.0
    ci = mean_interval(values)
    assert ci is not None
    return Measure(metric=metric, cell=cell, value=scale * sum(values) / len(values), low=scale * ci[0],
                   high=scale * ci[1], n=len(values))


def _share(metric: str, cell: dict[str, str], rows: Sequence[Scored], hit: Callable[[Scored], bool]) -> Measure | None:
    return rate(metric, cell, sum(1 for r in rows if hit(r)), len(rows))


class Cell(BaseModel):
    """The metrics of one policy on one slice of the data (``category`` ``all`` for the whole set)."""

    policy: str
    category: str
    checks: int
    ambiguous: int
    measures: dict[str, Measure]
    #: The measures that are means with a bootstrap interval (the others are rates over a count, Wilson's).
    means: list[str] = []
    #: Judge verdicts that could not be read, and the judge models that gave the verdicts.
    unreadable_judgements: int = 0
    judges: list[str] = []


def cell(policy: str, category: str, rows: Sequence[Scored]) -> Cell:
    key = {"policy": policy, "type": category}
    amb = [r for r in rows if r.ambiguous]
    clear = [r for r in rows if not r.ambiguous]
    asked_amb = [r for r in amb if r.asked and r.question]
    judged = [r for r in asked_amb if r.judge is not None]
    found: dict[str, Measure | None] = {
        "success_rate": _mean("success_rate", key, [r.success for r in rows], percent=True),
        "help_rate": _share("help_rate", key, rows, lambda r: r.asked),
        "correct_help_rate": _share("correct_help_rate", key, amb, lambda r: r.asked),
        "false_alarm_rate": _share("false_alarm_rate", key, clear, lambda r: r.asked),
        "set_size_correctness": _mean("set_size_correctness", key,
                                      [r.set_overlap for r in amb if r.set_overlap is not None], percent=True),
        "set_size": _mean("set_size", key, [float(r.set_size) for r in rows if r.set_size is not None]),
        "question_about_element_rule": _share("question_about_element_rule", key, asked_amb,
                                              lambda r: bool(r.about_rule)),
        "question_about_element_judge": _share("question_about_element_judge", key,
                                               [r for r in judged if r.about_judge is not None],
                                               lambda r: bool(r.about_judge)),
        "error_rate": _share("error_rate", key, rows, lambda r: r.status == "error"),
        "model_calls": _mean("model_calls", key, [float(r.model_calls) for r in rows]),
        "tokens": _mean("tokens", key, [float(r.tokens) for r in rows]),
        "seconds": _mean("seconds", key, [r.latency_s for r in rows]),
    }
    shares = {"success_rate": [r.success for r in rows],
              "set_size_correctness": [r.set_overlap for r in amb if r.set_overlap is not None]}
    means = ["set_size", "model_calls", "tokens", "seconds",
             *(k for k, v in shares.items() if not all(x in (0.0, 1.0) for x in v))]
    return Cell(policy=policy, category=category, checks=len(rows), ambiguous=len(amb), means=means,
                measures={k: m for k, m in found.items() if m is not None},
                unreadable_judgements=sum(1 for r in judged if r.about_judge is None),
                judges=sorted({r.judge for r in judged if r.judge}))


def cells(scored: Iterable[Scored]) -> list[Cell]:
    """Every policy on the whole set, then on each ambiguity type (policies and types in a fixed order)."""
    rows = list(scored)
    policies = list(dict.fromkeys(r.policy for r in rows))
    types = sorted({r.category for r in rows})
    out = [cell(p, ALL, [r for r in rows if r.policy == p]) for p in policies]
    for t in types:
        out += [cell(p, t, sub) for p in policies if (sub := [r for r in rows if r.policy == p and r.category == t])]
    return out
