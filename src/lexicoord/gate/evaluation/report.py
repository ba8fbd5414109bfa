"""An evaluation's tables, per-check CSV and figure: every policy side by side, overall and by ambiguity type.

Each cell is ``value [95% CI] (k/n)`` for a rate (Wilson) or ``value [95% CI] (n)`` for a mean (a seeded
percentile bootstrap), so every number names its denominator. The published numbers an experiment file carries
are printed beside the run's in the shared comparison table, matched on the policy and the type only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lexicoord.analysis.cells import records_csv
from lexicoord.analysis.intervals import METHOD
from lexicoord.analysis.paper import Measure
from lexicoord.analysis.report import ReportTable
from lexicoord.gate.evaluation.metrics import ALL, Cell
from lexicoord.gate.evaluation.scoring import Scored

#: The columns of the side-by-side tables, in order, with their headings (the denominator in brackets).
DETECTION = {
    "success_rate": "success % (all)",
    "help_rate": "help % (all)",
    "correct_help_rate": "correct help % (ambiguous)",
    "false_alarm_rate": "false alarms % (unambiguous)",
    "set_size_correctness": "set-size correctness % (ambiguous; conformal)",
    "set_size": "set size (conformal)",
    "question_about_element_rule": "question on the element %, rule (ambiguous that asked)",
    "question_about_element_judge": "question on the element %, judge (judged)",
}
COST = {
    "error_rate": "errors % (all)",
    "model_calls": "model calls per check",
    "tokens": "tokens per check (a judge's included)",
    "seconds": "seconds per check",
}
BY_TYPE = ("success_rate", "help_rate", "correct_help_rate", "false_alarm_rate")


def shown(m: Measure | None, mean: bool = False) -> str:
    """``value [CI] k/n`` for a rate, ``value [CI] n=N`` for a mean."""
    if m is None:
        return "-"
    digits = 0 if m.metric == "tokens" else 2 if m.metric in ("model_calls", "seconds", "set_size") else 1
    ci = f" [{m.low:.{digits}f}-{m.high:.{digits}f}]" if m.low is not None and m.high is not None else ""
    if mean or m.n is None:
        return f"{m.value:.{digits}f}{ci} n={m.n}"
    return f"{m.value:.{digits}f}{ci} {round(m.value * m.n / 100)}/{m.n}"


def tables(cells: Sequence[Cell]) -> list[ReportTable]:
    """The policies side by side (what they did; what it cost), then the headline rates by ambiguity type."""
    overall = [c for c in cells if c.category == ALL]
    by_type = [c for c in cells if c.category != ALL]

    def rows(chosen: Sequence[Cell], columns: Sequence[str], typed: bool = False) -> list[list[str]]:
        return [[c.policy, *([c.category] if typed else []), str(c.checks),
                 *(shown(c.measures.get(k), k in c.means) for k in columns)] for c in chosen]

    note = f"value [95% CI] k/n: Wilson for rates, {METHOD} for means"
    out = [ReportTable(title=f"Policies side by side ({note})", head=["policy", "checks", *DETECTION.values()],
                       rows=rows(overall, list(DETECTION))),
           ReportTable(title="What each check cost", head=["policy", "checks", *COST.values()],
                       rows=rows(overall, list(COST)))]
    if by_type:
        out.append(ReportTable(title="By ambiguity type", head=["policy", "type", "checks",
                                                                 *(DETECTION[k] for k in BY_TYPE)],
                               rows=rows(by_type, BY_TYPE, typed=True)))
    return out


def judges_line(cells: Sequence[Cell]) -> str:
    """Which judge decided the question scores."""
    judges = sorted({j for c in cells for j in c.judges})
    unreadable = sum(c.unreadable_judgements for c in cells if c.category == ALL)
    who = f"and by the judge model {', '.join(judges)}" if judges else "(no judge model was given)"
    extra = f"; {unreadable} judge verdict(s) could not be read and are left out of its share" if unreadable else ""
    return (f"Questions were judged by the rule (does the question name the ambiguous element?) {who}{extra}. "
            "Word overlap with the benchmark's gold question is never used.")


def write_csv(scored: Sequence[Scored], path: Path) -> Path:
    """One row per check, every field of its score (cells a spreadsheet would run as formulas made text)."""
    records_csv(path, list(Scored.model_fields), (s.model_dump() for s in scored))
    return path


def figure(cells: Sequence[Cell], stem: Path) -> list[Path]:
    """One grouped bar per policy for each headline rate, with its 95% interval."""
    from lexicoord.analysis.figures import _pyplot, save_figure

    plt = _pyplot()
    overall = [c for c in cells if c.category == ALL]
    fig, ax = plt.subplots(figsize=(7.0, 3.6), dpi=150)
    width = 0.8 / max(1, len(overall))
    for i, c in enumerate(overall):
        xs, ys, lo, hi = [], [], [], []
        for j, metric in enumerate(BY_TYPE):
            m = c.measures.get(metric)
            if m is None:
                continue
            xs.append(j + (i - (len(overall) - 1) / 2) * width)
            ys.append(m.value)
            lo.append(m.value - (m.low if m.low is not None else m.value))
            hi.append((m.high if m.high is not None else m.value) - m.value)
        ax.bar(xs, ys, width=width, yerr=[lo, hi], capsize=2, label=c.policy)
    ax.set_xticks(range(len(BY_TYPE)))
    ax.set_xticklabels([DETECTION[m].split(" %")[0] for m in BY_TYPE])
    ax.set_ylim(0, 105)
    ax.set_ylabel("% with 95% CI")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    return save_figure(fig, stem)
