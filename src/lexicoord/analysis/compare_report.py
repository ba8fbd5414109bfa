"""``lexicoord compare``'s output: the paired comparison of two stored runs as tables, a figure of both runs'
accuracy per cell overlaid, one HTML page, JSON and a CSV of the items they disagree on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from lexicoord.analysis.cells import write_csv
from lexicoord.analysis.compare import Comparison, Cost, OutcomeReader, compare
from lexicoord.analysis.figures import _pyplot, save_figure
from lexicoord.analysis.html import inline_svg, render
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.core.events import Event
from lexicoord.core.registry import get_protocol
from lexicoord.errors import LexicoordError
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store

HEAD = ["measure", "cell", "pairs", "A", "B", "B - A [95% CI]", "test", "p", "right in A only / B only"]


def _n(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def rows_of(c: Comparison) -> list[list[str]]:
    out = []
    for r in c.rows:
        ci = f" [{_n(r.low)}, {_n(r.high)}]" if r.low is not None and r.high is not None else ""
        discordant = "" if r.a_only is None else f"{r.a_only} / {r.b_only}"
        out.append([r.measure, r.cell, str(r.pairs), _n(r.a), _n(r.b), _n(r.difference) + ci, r.test,
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


def compare_runs(store: Store, a_id: str, b_id: str, out_dir: Path) -> Report:
    """Two stored runs of one protocol, compared on the items they share."""
    a, b = store.run(a_id), store.run(b_id)
    if a.protocol != b.protocol:
        raise LexicoordError(f"Run '{a.id}' is a {a.protocol} run and '{b.id}' a {b.protocol} run; only runs of "
                             "one protocol compare.")
    reader: OutcomeReader = get_protocol(a.protocol).load("outcomes")
    cost: dict[str, Cost] = {}
    outcomes = []
    for run in (a, b):
        spent = cost.setdefault(run.id, Cost())

        def counted(run_id: str = run.id, spent: Cost = spent) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
            for record, events in store.iter_run_events(run_id):
                if record.status == "done":
                    spent.episodes += 1
                spent.calls += record.model_calls
                spent.prompt_tokens += record.prompt_tokens
                spent.completion_tokens += record.completion_tokens
                yield record, events

        outcomes.append(list(reader(counted())))
    result = compare(a.id, b.id, a.protocol, outcomes[0], outcomes[1], cost)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "comparison.json").write_text(json.dumps(result.model_dump(mode="json"), indent=2), encoding="utf-8")
    write_csv(out_dir / "disagreements.csv", ["item", "cell", f"right in {a.id}", f"right in {b.id}"],
              ([d.item, d.cell, d.a, d.b] for d in result.disagreements))
    files = {"json": out_dir / "comparison.json", "csv": out_dir / "disagreements.csv"}
    figure = None
    if any(r.measure.startswith("accuracy") for r in result.rows):
        png, svg = accuracy_figure(result, out_dir / "accuracy")
        files["png"], figure = png, inline_svg(svg)
    cost_head = ["run", "episodes done", "model calls", "prompt tokens", "completion tokens"]
    page = render("lexicoord.analysis", template="compare.html", c=result, head=HEAD, rows=rows_of(result),
                  cost_head=cost_head, cost=cost_rows(result), figure=figure,
                  disagreements=[[d.item, d.cell, "right" if d.a else "wrong", "right" if d.b else "wrong"]
                                 for d in result.disagreements])
    (out_dir / "compare.html").write_text(page, encoding="utf-8")
    files["html"] = out_dir / "compare.html"
    tables = [ReportTable(title=f"{a.id} (A) vs {b.id} (B), {a.protocol}: paired on shared items", head=HEAD,
                          rows=rows_of(result)),
              ReportTable(title="cost", head=cost_head, rows=cost_rows(result))]
    if result.disagreements:
        tables.append(ReportTable(title=f"items they disagree on ({len(result.disagreements)})",
                                  head=["item", "cell", a.id, b.id],
                                  rows=[[d.item, d.cell, "right" if d.a else "wrong", "right" if d.b else "wrong"]
                                        for d in result.disagreements]))
    warnings = [f"{n} episode(s) of '{name}' have no partner in the other run and are left out"
                for name, n in result.unpaired.items() if n]
    return Report(tables=tables, files=files, warnings=warnings)
