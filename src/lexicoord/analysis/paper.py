"""A paper's published numbers beside a run's own, with the run's confidence interval.

An experiment file carries the numbers its paper published (``[[published]]``: the table or figure, the
measure, the cell, the value); they are stored with the run, and its report prints each one beside the run's
value for the same measure and cell, the run's 95% interval and whether the paper's value lies inside it.
The cell names the report's columns (variant, task, condition, type ...) and never the model: the point of
a reproduction is the paper's setup on another model, so every model of the run that has the cell is shown
(the paper's own model is written beside its number).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lexicoord.analysis.report import ReportTable


class Published(BaseModel):
    """A number a paper published, with where it comes from."""

    model_config = ConfigDict(extra="forbid")

    #: The table or figure it comes from, as the paper names it ("Table 1", "Figure 3", "Section 5").
    source: str
    #: The report's name for the measure (each protocol's page lists the ones it compares).
    metric: str
    #: The cell: values of the report's columns that pick it (variant, task, condition, type ...), never the model.
    cell: dict[str, str] = Field(default_factory=dict)
    value: float
    #: The model the paper measured it on, shown beside the value.
    paper_model: str = ""
    note: str = ""


class Measure(BaseModel):
    """One of a run's figures as the paper's numbers are compared with: same unit (percent for a rate)."""

    metric: str
    cell: dict[str, str]
    model: str = ""
    value: float
    #: The 95% interval (Wilson for a rate), when the measure has one.
    low: float | None = None
    high: float | None = None
    #: What the value is out of (games, items, episodes).
    n: int | None = None


def _same(a: str, b: str) -> bool:
    return a.strip().casefold() == b.strip().casefold()


def matching(published: Published, measures: Iterable[Measure]) -> list[Measure]:
    return [m for m in measures if m.metric == published.metric
            and all(k in m.cell and _same(m.cell[k], v) for k, v in published.cell.items())]


def stored(config: dict[str, Any]) -> list[Published]:
    """The published numbers a run's config holds (none: a run made from flags, or before numbers were stored)."""
    try:
        return [Published.model_validate(p) for p in config.get("published") or []]
    except ValidationError:
        return []


HEAD = ["source", "measure", "cell", "paper", "this run [95% CI]", "out of", "paper inside the CI"]


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def same_model(published: Published, measure: Measure) -> bool:
    """A verdict on a published number only where the run used the paper's model: the run's model name (without its
    provider) is the paper's, or the name before or inside its brackets ("GPT-3.5 (text-davinci-003)"), case and
    punctuation aside."""
    def key(name: str) -> str:
        return "".join(ch for ch in name.rsplit("/", 1)[-1].casefold() if ch.isalnum())

    name = published.paper_model
    head, _, rest = name.partition("(")
    names = {key(name), key(head), key(rest.rstrip(")"))} - {""}
    return key(measure.model) in names


def comparison_rows(published: Sequence[Published], measures: Sequence[Measure],
                    same_model: Callable[[Published, Measure], bool] | None = None) -> list[list[str]]:
    """A row per published number and matching run figure; a number the run has no cell for says so. With
    ``same_model``, the verdict is given only where it holds (another model's value is shown without one)."""
    rows = []
    for p in published:
        cell = ", ".join(f"{k}={v}" for k, v in p.cell.items()) or "all"
        paper = _num(p.value) + (f" ({p.paper_model})" if p.paper_model else "")
        found = matching(p, measures)
        if not found:
            rows.append([p.source, p.metric, cell, paper, "not in this run", "", ""])
        for m in found:
            ci = f" [{_num(m.low)}, {_num(m.high)}]" if m.low is not None and m.high is not None else ""
            inside = "" if m.low is None or m.high is None else ("yes" if m.low <= p.value <= m.high else "no")
            if same_model is not None and not same_model(p, m):
                inside = "- (another model)"
            ours = _num(m.value) + ci + (f" ({m.model})" if m.model else "")
            rows.append([p.source, p.metric, cell, paper, ours, "" if m.n is None else str(m.n), inside])
    return rows


def comparison_table(published: Sequence[Published], measures: Sequence[Measure],
                     same_model: Callable[[Published, Measure], bool] | None = None) -> ReportTable | None:
    if not published:
        return None
    return ReportTable(title="the paper's published numbers beside this run", head=HEAD,
                       rows=comparison_rows(published, measures, same_model))


def rate(metric: str, cell: dict[str, str], k: int, n: int, model: str = "") -> Measure | None:
    """A rate in percent, with its Wilson 95% interval in percent (the papers print percentages)."""
    if not n:
        return None
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return Measure(metric=metric, cell=cell, model=model, value=100 * k / n, low=100 * ci.low, high=100 * ci.high, n=n)
