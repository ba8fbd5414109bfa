"""A paper's published numbers beside a run's own, with the run's confidence interval.

An experiment file carries the numbers its paper published (``[[published]]``: the table or figure, the
measure, the cell, the value); they are stored with the run, and its report prints each one beside the run's
value for the same measure and cell, the run's 95% interval and whether the paper's value lies inside it.
The cell names the report's columns (variant, task, condition, type ...) and never the model: the point of
a reproduction is the paper's setup on another model, so every model of the run that has the cell is shown
(the paper's own model is written beside its number). Whether the paper's value lies inside the run's interval
is said only where the run's model is the paper's (:func:`same_model`): the same name, or a model the file's
``[paper_models]`` names as standing for it. Another model's value is shown without a verdict, since a
verdict there would read as a reproduction that never took place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from lexicoord.analysis.intervals import Interval, mean_ci, total_ci, wilson
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
    #: The run's models that stand for ``paper_model`` (the run's ``paper_models``), filled by :func:`stored`.
    _stand_ins: frozenset[str] = PrivateAttr(default_factory=frozenset)


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


def bounds(ci: Interval | None) -> dict[str, float]:
    """A :class:`Measure`'s ``low`` and ``high`` from an interval the statistics hold (none: no interval)."""
    return {} if ci is None else {"low": ci.low, "high": ci.high}


def _key(name: str) -> str:
    """A model's name as names are compared: without its provider, case and punctuation aside."""
    return "".join(ch for ch in name.rsplit("/", 1)[-1].casefold() if ch.isalnum())


def _names(paper_model: str) -> set[str]:
    """The keys a paper's model name goes by: whole, before its brackets and inside them ("GPT-3.5
    (text-davinci-003)", "Gemma2-9B (leader)")."""
    head, _, rest = paper_model.partition("(")
    return {_key(paper_model), _key(head), _key(rest.rstrip(")"))} - {""}


def stand_ins(paper_models: Any) -> dict[str, frozenset[str]]:
    """The file's ``[paper_models]`` (a paper's model name: the run model, or the list of run models, that stands
    for it) as paper-name key -> run models; empty entries (an unset ``${VAR:-}``) stand for nothing."""
    out: dict[str, frozenset[str]] = {}
    for paper, models in (paper_models or {}).items():
        given = [models] if isinstance(models, str) else list(models or [])
        out[_key(paper)] = out.get(_key(paper), frozenset()) | {m.strip() for m in given if str(m).strip()}
    return out


def stored(config: dict[str, Any]) -> list[Published]:
    """The published numbers a run's config holds (none: a run made from flags, or before numbers were stored),
    each knowing which of the run's models stand for its paper's model."""
    try:
        published = [Published.model_validate(p) for p in config.get("published") or []]
    except ValidationError:
        return []
    standing = stand_ins(config.get("paper_models"))
    for p in published:
        p._stand_ins = frozenset().union(*(standing.get(k, frozenset()) for k in _names(p.paper_model)))
    return published


HEAD = ["source", "measure", "cell", "paper", "this run [95% CI]", "out of", "paper inside the CI"]


def _num(x: float) -> str:
    """As papers print numbers: whole numbers whole, two decimals from 10 up, three below (0.031, 2.375)."""
    if x == int(x):
        return str(int(x))
    return f"{x:.{2 if abs(x) >= 10 else 3}f}".rstrip("0").rstrip(".")


def same_model(published: Published, measure: Measure) -> bool:
    """Whether a verdict on a published number may be given: the paper names no model (nothing to match), the run's
    model is one the file says stands for the paper's, or its name (without its provider) is the paper's, or the
    name before or inside its brackets, case and punctuation aside."""
    if not published.paper_model:
        return True
    if measure.model.strip() in published._stand_ins:
        return True
    return _key(measure.model) in _names(published.paper_model)


def comparison_rows(published: Sequence[Published], measures: Sequence[Measure]) -> list[list[str]]:
    """A row per published number and matching run figure; a number the run has no cell for says so. The verdict is
    given only where :func:`same_model` holds (another model's value is shown without one)."""
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
            if inside and not same_model(p, m):
                inside = "- (another model)"
            ours = _num(m.value) + ci + (f" ({m.model})" if m.model else "")
            rows.append([p.source, p.metric, cell, paper, ours, "" if m.n is None else str(m.n), inside])
    return rows


def comparison_table(published: Sequence[Published], measures: Sequence[Measure]) -> ReportTable | None:
    if not published:
        return None
    return ReportTable(title="the paper's published numbers beside this run", head=HEAD,
                       rows=comparison_rows(published, measures))


def rate(metric: str, cell: dict[str, str], k: int, n: int, model: str = "") -> Measure | None:
    """A rate in percent, with its Wilson 95% interval in percent (the papers print percentages)."""
    if not n:
        return None
    ci = wilson(k, n)
    assert ci is not None
    return Measure(metric=metric, cell=cell, model=model, value=100 * k / n, low=100 * ci.low, high=100 * ci.high, n=n)


def mean(metric: str, cell: dict[str, str], values: Sequence[float], model: str = "") -> Measure | None:
    """A mean over items, episodes or games, with its bootstrap 95% interval (:data:`~lexicoord.analysis.intervals.METHOD`)."""
    ci = mean_ci(values)
    if ci is None:
        return None
    return Measure(metric=metric, cell=cell, model=model, value=sum(values) / len(values), low=ci.low, high=ci.high,
                   n=len(values))


def total(metric: str, cell: dict[str, str], values: Sequence[float], model: str = "") -> Measure | None:
    """A total over games (one count per game), with its bootstrap 95% interval over the games."""
    ci = total_ci(values)
    if ci is None:
        return None
    return Measure(metric=metric, cell=cell, model=model, value=sum(values), low=ci.low, high=ci.high, n=len(values))
