"""``lexicoord compare``'s output: the paired comparison of two stored runs as tables, a figure of both runs'
accuracy per cell overlaid, one HTML page, JSON and a CSV of the items they disagree on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from lexicoord.analysis.cells import write_csv
from lexicoord.analysis.compare import Comparison, Cost, compare, compare_independent
from lexicoord.analysis.figures import _pyplot, save_figure
from lexicoord.analysis.html import inline_svg, render
from lexicoord.analysis.report import Report, ReportTable, condition_of, place_of
from lexicoord.core.events import Event
from lexicoord.core.registry import get_protocol
from lexicoord.errors import LexicoordError
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import Store

HEAD = ["measure", "cell", "pairs", "A", "B", "B - A [95% CI]", "test", "p", "right in A only / B only"]
INDEPENDENT_HEAD = ["measure", "cell", "games A / B", "A", "B", "B - A [95% CI]", "test", "p", ""]


def _n(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def rows_of(c: Comparison) -> list[list[str]]:
    out = []
    for r in c.rows:
        ci = f" [{_n(r.low)}, {_n(r.high)}]" if r.low is not None and r.high is not None else ""
        discordant = "" if r.a_only is None else f"{r.a_only} / {r.b_only}"
        n = f"{r.n_a} / {r.n_b}" if r.n_a is not None else str(r.pairs)
        out.append([r.measure, r.cell, n, _n(r.a), _n(r.b), _n(r.difference) + ci, r.test,
                    _n(r.p, 4), discordant])
    return out


def cost_rows(c: Comparison) -> list[list[str]]:
    return [[name, str(k.episodes), f"{k.calls:,}", f"{k.prompt_tokens:,}", f"{k.completion_tokens:,}"]
            for name, k in c.cost.items()]


def accuracy_figure(c: Comparison, stem: Path) -> list[Path]:
    """Both runs' accuracy on the shared pairs of each cell, side by side."""
    plt = _pyplot()
    rows = [r for r in c.rows if r.measure.startswith("accuracy")]
    fig, ax = plt.subplots(figsize=(6, 3.4), dpi=150)
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r.a or 0 for r in rows], width=0.4, label=f"A: {c.a}", color="#3b6ea8")
    ax.bar([x + 0.2 for x in xs], [r.b or 0 for r in rows], width=0.4, label=f"B: {c.b}", color="#d08a2c")
    ax.set_xticks(list(xs), [f"{r.cell}\n({r.pairs} pairs)" for r in rows], fontsize=7)
    ax.set_ylabel("accuracy on shared pairs (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7, frameon=False)
    ax.set_title("Accuracy of both runs on the items they share", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, stem)


class Side(NamedTuple):
    """One side of a comparison: a run, or one condition of a study's run (``RUN@CONDITION``)."""

    run: RunInfo
    condition: str | None

    @property
    def name(self) -> str:
        return f"{self.run.id}@{self.condition}" if self.condition else self.run.id


def side(store: Store, ref: str) -> Side:
    """``RUN`` or ``RUN@CONDITION`` (a run name has no ``@``), the run by its name or a unique prefix."""
    name, _, condition = ref.partition("@")
    run = store.run(name)
    if not condition:
        return Side(run, None)
    known = sorted(run.config.get("conditions") or {})
    if condition not in known:
        said = f"its conditions are {', '.join(known)}" if known else "it is not a study with conditions"
        raise LexicoordError(f"Run '{run.id}' has no condition '{condition}': {said}.")
    return Side(run, condition)


def compare_runs(store: Store, a_ref: str, b_ref: str, out_dir: Path) -> Report:
    """Two stored runs of one protocol, compared on the items they share; or two conditions of a study
    (``RUN@CONDITION``), compared as independent groups."""
    sa, sb = side(store, a_ref), side(store, b_ref)
    a, b = sa.run, sb.run
    if a.protocol != b.protocol:
        raise LexicoordError(f"Run '{a.id}' is a {a.protocol} run and '{b.id}' a {b.protocol} run; only runs of "
                             "one protocol compare.")
    if sa.name == sb.name:
        raise LexicoordError(f"'{sa.name}' is compared with itself; name two runs, or two conditions of a study.")
    independent = sa.condition is not None or sb.condition is not None
    reader = get_protocol(a.protocol).outcomes_reader()
    cost: dict[str, Cost] = {}
    outcomes = []
    repeated = 0  # groups that played several of the games compared (independent design)
    for one in (sa, sb):
        spent = cost.setdefault(one.name, Cost())
        games_of: dict[str, int] = {}

        def counted(run_id: str = one.run.id, condition: str | None = one.condition, spent: Cost = spent,
                    games_of: dict[str, int] = games_of) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
            for record, events in store.iter_run_events(run_id):
                if condition is not None and condition_of(record) != condition:
                    continue
                place = place_of(record)
                where = place.get("group") or place.get("room")
                if where and record.status == "done":
                    games_of[where] = games_of.get(where, 0) + 1
                if record.status == "done":
                    spent.episodes += 1
                spent.calls += record.model_calls
                spent.prompt_tokens += record.prompt_tokens
                spent.completion_tokens += record.completion_tokens
                yield record, events

        outcomes.append(list(reader(counted())))
        repeated += sum(1 for n in games_of.values() if n > 1)
    result = (compare_independent if independent else compare)(sa.name, sb.name, a.protocol, outcomes[0],
                                                                 outcomes[1], cost)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "comparison.json").write_text(json.dumps(result.model_dump(mode="json"), indent=2), encoding="utf-8")
    write_csv(out_dir / "disagreements.csv", ["item", "cell", f"right in {sa.name}", f"right in {sb.name}"],
              ([d.item, d.cell, d.a, d.b] for d in result.disagreements))
    files = {"json": out_dir / "comparison.json", "csv": out_dir / "disagreements.csv"}
    figure = None
    if any(r.measure.startswith("accuracy") for r in result.rows):
        png, svg = accuracy_figure(result, out_dir / "accuracy")
        files["png"], figure = png, inline_svg(svg)
    cost_head = ["run", "episodes done", "model calls", "prompt tokens", "completion tokens"]
    page = render("lexicoord.analysis", template="compare.html", c=result, head=INDEPENDENT_HEAD if independent
                  else HEAD, rows=rows_of(result),
                  cost_head=cost_head, cost=cost_rows(result), figure=figure,
                  disagreements=[[d.item, d.cell, "right" if d.a else "wrong", "right" if d.b else "wrong"]
                                 for d in result.disagreements])
    (out_dir / "compare.html").write_text(page, encoding="utf-8")
    files["html"] = out_dir / "compare.html"
    how = "independent groups (between subjects)" if independent else "paired on shared items"
    tables = [ReportTable(title=f"{sa.name} (A) vs {sb.name} (B), {a.protocol}: {how}",
                          head=INDEPENDENT_HEAD if independent else HEAD, rows=rows_of(result)),
              ReportTable(title="cost", head=cost_head, rows=cost_rows(result))]
    if result.disagreements:
        tables.append(ReportTable(title=f"items they disagree on ({len(result.disagreements)})",
                                  head=["item", "cell", sa.name, sb.name],
                                  rows=[[d.item, d.cell, "right" if d.a else "wrong", "right" if d.b else "wrong"]
                                        for d in result.disagreements]))
    partner = "no game in the same cell on the other side" if independent else "no partner in the other run"
    warnings = [f"{n} episode(s) of '{name}' have {partner} and are left out"
                for name, n in result.unpaired.items() if n]
    if independent and repeated:
        warnings.append(f"{repeated} group(s) played several of the games compared; the tests treat each game as "
                        "independent, which games of one group are not (read the p-values as optimistic).")
    return Report(tables=tables, files=files, warnings=warnings)
